package io.quorumlock.redis;

import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.redis.Rounds.Grant;
import io.quorumlock.spi.LockEvents;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A lease granted by {@link Redlock}: its token, and each node's answer to the grant. Its rounds and
 * its clock are those of the lock's {@link Rounds}.
 */
final class RedlockLease implements Lease {

    /** The rounds of the lock that granted it: its extensions, its release, its clock and its events. */
    private final Rounds lock;

    private final String resource;
    private final String token;
    private final Grant[] grants;
    private final AtomicBoolean released = new AtomicBoolean();
    private volatile long validityNanos;
    private volatile long validUntilNanos;
    private static final AtomicIntegerFieldUpdater<RedlockLease> TOLD =
            AtomicIntegerFieldUpdater.newUpdater(RedlockLease.class, "told");

    /** 1 once the listener heard the end of this lease, lost or released: it hears only one. */
    private volatile int told;

    /** When the grant's round ended, on the lock's ticker: for how long a release held it. */
    private final long grantedNanos;

    private final CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    /** The watchdog's watch that keeps this lease alive; null if none. */
    private final AtomicReference<Watchdog.Watch> watch = new AtomicReference<>();
    /** Held for each extension round, so that they run one at a time; see {@link #extendRound}. */
    private final ReentrantLock rounds = new ReentrantLock();

    RedlockLease(Rounds lock, String resource, String token, Grant[] grants, long validityNanos, long validUntilNanos) {
        this.lock = lock;
        this.resource = resource;
        this.token = token;
        this.grants = grants;
        this.validityNanos = validityNanos;
        this.validUntilNanos = validUntilNanos;
        this.grantedNanos = validUntilNanos - validityNanos; // no clock read on the hot path
    }

    @Override
    public String resource() {
        return resource;
    }

    @Override
    public Duration validity() {
        return Duration.ofNanos(validityNanos);
    }

    @Override
    public Duration remaining() {
        if (released.get() || lost.isDone()) {
            return Duration.ZERO;
        }
        return Duration.ofNanos(Math.max(0, validUntilNanos - lock.nowNanos()));
    }

    @Override
    public boolean isValid() {
        return !remaining().isZero();
    }

    /**
     * False, with nothing sent, once the lease is lost or its validity ran out: it stays over. Waits
     * for an extension round of this lease under way (the watchdog's, another thread's) to end.
     */
    @Override
    public boolean extend(Duration ttl) {
        return extendRound(ttl).map(Rounds.Outcome::held).orElse(false);
    }

    /**
     * One extension round, after any other round of this lease has ended; empty, with nothing sent,
     * if the lease is lost or its validity ran out. Its PEXPIRE may run on any node, answered in
     * time or not, so the lease ends no later than the round's start plus its TTL less the drift;
     * a round that held sets exactly that end. A round that held after the lease was lost or ran
     * out counts as not held: a lease that is over stays over.
     */
    Optional<Rounds.Outcome> extendRound(Duration ttl) {
        lock.checkTtl(ttl);
        rounds.lock();
        try {
            if (released.get()) {
                throw new IllegalStateException("the lease on '" + resource + "' was released; acquire a new one");
            }
            if (!isValid()) {
                return Optional.empty();
            }
            LockEvents events = lock.events();
            long start = lock.nowNanos();
            endNoLaterThan(lock.extensionEndNanos(start, ttl)); // the round may set that from now on
            Rounds.Outcome outcome = lock.extend(this, ttl);
            boolean held = outcome.held() && isValid();
            if (held) {
                validityNanos = outcome.validityNanos();
                validUntilNanos = outcome.validUntilNanos();
            } else {
                endNoLaterThan(outcome.validUntilNanos());
            }
            if (events.on()) {
                events.extended(resource, lock.nowNanos() - start, held);
            }
            return Optional.of(held ? outcome : outcome.notHeld(outcome.outcomes(), outcome.misconfigured()));
        } finally {
            rounds.unlock();
        }
    }

    private void endNoLaterThan(long endNanos) {
        validUntilNanos = Math.min(validUntilNanos, endNanos);
    }

    @Override
    public void release() {
        if (released.compareAndSet(false, true)) {
            Watchdog.Watch keeper = watch.get();
            if (keeper != null) {
                keeper.stop();
            }
            rounds.lock(); // an extension round under way ends before the deletes go out
            rounds.unlock();
            lock.release(this);
            LockEvents events = lock.events();
            if (events.on() && TOLD.compareAndSet(this, 0, 1)) {
                events.released(resource, lock.nowNanos() - grantedNanos);
            }
        }
    }

    boolean grantedBy(Rounds other) {
        return lock == other;
    }

    /** Has {@code watchdog} extend this lease to {@code ttl} until it is released. */
    void keptAliveBy(Watchdog watchdog, Duration ttl) {
        if (released.get()) {
            throw new IllegalStateException("the lease on '" + resource + "' was released; acquire a new one");
        }
        Watchdog.Watch started = watchdog.watch(this, ttl);
        if (!watch.compareAndSet(null, started)) {
            started.stop();
            throw new IllegalStateException("the lease on '" + resource + "' is already kept alive");
        }
        if (released.get()) {
            started.stop(); // released while the watch started: release() may not have seen it
        }
    }

    /** Held by each extension round of this lease: they run one at a time, and a release waits for one under way. */
    ReentrantLock rounds() {
        return rounds;
    }

    long validUntilNanos() {
        return validUntilNanos;
    }

    /** Marks the lease lost: it is no longer valid, and {@link #lost()} completes. */
    void markLost(String reason) {
        if (lost.complete(new LeaseLostException(resource, reason, null))
                && lock.events().on()
                && TOLD.compareAndSet(this, 0, 1)) {
            lock.events().lost(resource, reason);
        }
    }

    /** Tells the listener that an extension threw {@code error}. */
    void extensionFailed(Throwable error) {
        lock.events().extensionFailed(resource, error);
    }

    /** Completes when the watchdog could not extend the lease, or its Redlock was closed. */
    CompletableFuture<LeaseLostException> lost() {
        return lost;
    }

    boolean isReleased() {
        return released.get();
    }

    String token() {
        return token;
    }

    Grant[] grants() {
        return grants;
    }

    @Override
    public String toString() {
        return "Lease[" + resource + ", token " + token.substring(0, 8) + "..., remaining "
                + remaining().toMillis() + " ms]";
    }
}
