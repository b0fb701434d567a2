package io.quorumlock.bench;

import java.util.ArrayList;
import java.util.List;
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
import redis.clients.jedis.JedisPool;

/** The article's sequential Redlock ({@link SequentialRedlock}) over N nodes: {@code tryLock} then {@code unlock}. */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Thread)
@SuppressWarnings("deprecation") // JedisPool, as the article uses it
public class SequentialRedlockBenchmark {

    /** The node URIs, separated by spaces. */
    @Param("")
    public String nodes;

    /** How many of the nodes to use, from the first. */
    @Param("5")
    public int nodeCount;

    /** The pid of a node to freeze once the client is set up; empty for none. */
    @Param("")
    public String freezePid;

    /** Where to write the trial's own figures; empty for nowhere. */
    @Param("")
    public String sideFile;

    private Trial trial;
    private final List<JedisPool> pools = new ArrayList<>();
    private SequentialRedlock redlock;
    private String key;

    @Setup(Level.Trial)
    public void setUp() {
        trial = new Trial(nodes, nodeCount, freezePid, sideFile, "sequential");
        key = trial.key();
        redlock = Clients.sequentialRedlock(trial.uris(), pools);
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
        pools.forEach(JedisPool::close);
        trial.finish();
    }

    /** One lock cycle: lock on every node in turn, unlock on every node in turn. */
    @Benchmark
    public boolean cycle() {
        try {
            Optional<SequentialRedlock.LockHandle> handle = redlock.tryLock(key, Trial.TTL.toMillis());
            if (handle.isEmpty()) {
                trial.failure();
                return false;
            }
            redlock.unlock(handle.get());
            return true;
        } catch (RuntimeException e) {
            trial.error(e);
            return false;
        }
    }
}
