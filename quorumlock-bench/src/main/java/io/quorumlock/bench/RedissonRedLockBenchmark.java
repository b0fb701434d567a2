package io.quorumlock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * Redisson's {@code RedissonRedLock} over N independent {@code RedissonClient}s (one per node, with
 * Redisson's defaults): {@code tryLock(-1, ttl)} then {@code unlock()}. A wait time of -1 makes one
 * pass over the nodes, tolerating the minority that fails; a wait time of 0 always fails in
 * {@code RedissonMultiLock}, whose remaining time is used up by the first node.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Thread)
@SuppressWarnings("deprecation") // RedissonRedLock is deprecated, and it is what we compare against
public class RedissonRedLockBenchmark extends NodesBenchmark {

    private final List<RedissonClient> clients = new ArrayList<>();
    private RedissonRedLock redLock;

    @Override
    protected String library() {
        return "redisson-redlock";
    }

    @Override
    protected void connect() {
        List<RLock> locks = new ArrayList<>();
        for (String uri : trial.uris()) {
            RedissonClient client = Clients.redisson(uri);
            clients.add(client);
            locks.add(client.getLock(trial.key()));
        }
        redLock = new RedissonRedLock(locks.toArray(RLock[]::new));
    }

    @Override
    protected void disconnect() {
        clients.forEach(RedissonClient::shutdown);
    }

    /** One lock cycle: one pass of tryLock over the nodes, then unlock on all of them. */
    @Override
    @Benchmark
    public boolean cycle() {
        try {
            if (!redLock.tryLock(-1, Trial.TTL.toMillis(), TimeUnit.MILLISECONDS)) {
                trial.failure();
                return false;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (RuntimeException e) {
            trial.error(e);
            return false;
        }
        try {
            redLock.unlock();
            return true;
        } catch (RuntimeException e) {
            trial.error(e); // a frozen node's unlock times out (3 s) and throws; the others are released
            return true;
        }
    }
}
