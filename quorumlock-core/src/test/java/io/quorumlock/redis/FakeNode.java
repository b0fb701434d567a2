package io.quorumlock.redis;

import io.quorumlock.NodeOutcome.Vote;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory node with fault switches, for fast tests of the algorithm. Keys expire by the
 * shared fake ticker. {@link #freeze()} makes calls block until {@link #thaw()}, after which
 * they are applied and answered late, as a SIGSTOP'd Redis does.
 */
final class FakeNode implements RedisNode {

    record Entry(String token, long expiresAt) {}

    private final FakeTicker ticker;
    final Map<String, Entry> keys = new ConcurrentHashMap<>();
    final AtomicInteger calls = new AtomicInteger();
    volatile boolean down;
    volatile long latencyNanos;
    private volatile CountDownLatch frozen = new CountDownLatch(0);

    FakeNode(FakeTicker ticker) {
        this.ticker = ticker;
    }

    void freeze() {
        frozen = new CountDownLatch(1);
    }

    void thaw() {
        frozen.countDown();
    }

    Optional<String> tokenOf(String key) {
        Entry e = keys.get(key);
        return e == null || e.expiresAt() <= ticker.nanos() ? Optional.empty() : Optional.of(e.token());
    }

    private void enter() {
        calls.incrementAndGet();
        if (down) {
            throw new NodeFailure(Vote.UNREACHABLE, "could not connect: connection refused");
        }
        try {
            if (!frozen.await(10, TimeUnit.SECONDS)) {
                throw new NodeFailure(Vote.TIMED_OUT, "frozen");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NodeFailure(Vote.ERROR, "interrupted");
        }
        ticker.advance(latencyNanos);
    }

    @Override
    public synchronized boolean setIfAbsent(String key, String token, long ttlMillis) {
        enter();
        if (tokenOf(key).isPresent()) {
            return false;
        }
        keys.put(key, new Entry(token, ticker.nanos() + TimeUnit.MILLISECONDS.toNanos(ttlMillis)));
        return true;
    }

    @Override
    public synchronized boolean deleteIfEquals(String key, String token) {
        enter();
        if (tokenOf(key).filter(token::equals).isEmpty()) {
            return false;
        }
        keys.remove(key);
        return true;
    }

    @Override
    public synchronized boolean extendIfEquals(String key, String token, long ttlMillis) {
        enter();
        if (tokenOf(key).filter(token::equals).isEmpty()) {
            return false;
        }
        keys.put(key, new Entry(token, ticker.nanos() + TimeUnit.MILLISECONDS.toNanos(ttlMillis)));
        return true;
    }

    @Override
    public String info(String section) {
        enter();
        return "";
    }

    @Override
    public Optional<String> config(String name) {
        enter();
        return Optional.empty();
    }

    @Override
    public void close() {
        thaw();
    }
}
