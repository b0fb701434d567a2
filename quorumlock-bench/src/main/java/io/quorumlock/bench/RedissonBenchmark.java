package io.quorumlock.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.IterationParams;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/** Redisson's {@code RLock} on one node, with Redisson's defaults: {@code tryLock(0, ttl)} then {@code unlock()}. */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Thread)
public class RedissonBenchmark {

    /** The node URIs, separated by spaces; the first one is used. */
    @Param("")
    public String nodes;

    /** Where to write the trial's own figures; empty for nowhere. */
    @Param("")
    public String sideFile;

    private Trial trial;
    private RedissonClient client;
    private RLock lock;

    @Setup(Level.Trial)
    public void setUp() {
        trial = new Trial(nodes, 1, "", sideFile, "redisson");
        client = Clients.redisson(trial.uris().get(0));
        lock = client.getLock(trial.key());
    }

    @Setup(Level.Iteration)
    public void iteration(IterationParams params) {
        trial.iteration(params);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.shutdown();
        trial.finish();
    }

    /** One lock cycle: try to lock without waiting, with the TTL as lease time (no watchdog), unlock. */
    @Benchmark
    public boolean cycle() throws InterruptedException {
        try {
            if (!lock.tryLock(0, Trial.TTL.toMillis(), TimeUnit.MILLISECONDS)) {
                trial.failure();
                return false;
            }
            lock.unlock();
            return true;
        } catch (RuntimeException e) {
            trial.error(e);
            return false;
        }
    }
}
