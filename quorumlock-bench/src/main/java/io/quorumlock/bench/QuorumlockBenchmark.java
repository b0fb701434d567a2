package io.quorumlock.bench;

import io.quorumlock.Lease;
import io.quorumlock.redis.Redlock;
import java.util.Optional;
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

/**
 * quorumlock over 1 or N nodes: {@code tryAcquire} then {@code release}. The acquire step is also
 * timed on its own (with {@link System#nanoTime()}) and its percentiles written to the side file.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Thread)
public class QuorumlockBenchmark {

    /** The node URIs, separated by spaces. */
    @Param("")
    public String nodes;

    /** How many of the nodes to use, from the first. */
    @Param("1")
    public int nodeCount;

    /** The pid of a node to freeze once the client is set up; empty for none. */
    @Param("")
    public String freezePid;

    /** Where to write the trial's own figures; empty for nowhere. */
    @Param("")
    public String sideFile;

    private Trial trial;
    private Redlock redlock;
    private String key;

    @Setup(Level.Trial)
    public void setUp() {
        trial = new Trial(nodes, nodeCount, freezePid, sideFile, "quorumlock");
        trial.recordAcquires();
        key = trial.key();
        redlock = Clients.quorumlock(trial.uris());
        if (trial.freezes()) {
            for (int i = 0; i < Trial.CYCLES_BEFORE_FREEZE; i++) {
                cycle();
            }
            trial.freeze();
        }
    }

    @Setup(Level.Iteration)
    public void iteration(IterationParams params) {
        trial.iteration(params);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        trial.thaw();
        redlock.close();
        trial.finish();
    }

    /** One lock cycle: acquire, release. */
    @Benchmark
    public boolean cycle() {
        try {
            long start = System.nanoTime();
            Optional<Lease> lease = redlock.tryAcquire(key, Trial.TTL);
            trial.acquired(System.nanoTime() - start);
            if (lease.isEmpty()) {
                trial.failure();
                return false;
            }
            lease.get().release();
            return true;
        } catch (RuntimeException e) {
            trial.error(e);
            return false;
        }
    }
}
