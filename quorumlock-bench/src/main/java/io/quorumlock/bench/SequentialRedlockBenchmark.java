package io.quorumlock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import redis.clients.jedis.JedisPool;

/** The article's sequential Redlock ({@link SequentialRedlock}) over N nodes: {@code tryLock} then {@code unlock}. */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Thread)
@SuppressWarnings("deprecation") // JedisPool, as the article uses it
public class SequentialRedlockBenchmark extends NodesBenchmark {

    private final List<JedisPool> pools = new ArrayList<>();
    private SequentialRedlock redlock;
    private String key;

    @Override
    protected String library() {
        return "sequential";
    }

    @Override
    protected void connect() {
        key = trial.key();
        redlock = Clients.sequentialRedlock(trial.uris(), pools);
    }

    @Override
    protected void disconnect() {
        pools.forEach(JedisPool::close);
    }

    /** One lock cycle: lock on every node in turn, unlock on every node in turn. */
    @Override
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
