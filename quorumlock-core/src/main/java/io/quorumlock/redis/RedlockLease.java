package io.quorumlock.redis;

import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.internal.LeaseCore;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.redis.Rounds.Grant;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A lease granted by {@link Redlock}: its token, and each node's answer to the grant. Its rounds and
 * its clock are those of the lock's {@link Rounds}.
 */
final class RedlockLease implements Lease {

    /** The rounds of the lock that granted it: its extensions, its release and its events. */
    private final Rounds lock;

    private final LeaseCore core;
    private final String token;
    private final Grant[] grants;
    /** The id its acquire had in the resource's line of waiters ({@link Scripts#LINE}); 0 if none. */
    private final long waiter;
    /** The watchdog's watch that keeps this lease alive; null if none. */
    private final AtomicReference<Watchdog.Watch> watch = new AtomicReference<>();
    /** Held for each extension round, so that they run one at a time; see {@link #extendRound}. */
    private final ReentrantLock rounds = new ReentrantLock();

    RedlockLease(
            Rounds lock,
            String resource,
            String token,
            Grant[] grants,
            long waiter,
            long validityNanos,
            long validUntilNanos) {
        this.lock = lock;
        this.waiter = waiter;
        this.core = new LeaseCore(
                resource, lock.ticker(), lock.events(), LeaseCore.State.VALID, validUntilNanos, validityNanos);
        this.token = token;
        this.grants = grants;
    }

    @Override
    public String resource() {
        return core.resource();
    }

    @Override
    public Duration validity() {
        return core.validity();
    }

    @Override
    public Duration remaining() {
        return core.remaining();
    }

    @Override
    public boolean isValid() {
        return core.isValid();
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
            if (isReleased()) {
                throw released();
            }
            if (!isValid()) {
                return Optional.empty();
            }
            LockEvents events = core.events();
            long start = core.nowNanos();
            core.endNoLaterThan(lock.extensionEndNanos(start, ttl)); // the round may set that from now on
            Rounds.Outcome outcome = lock.extend(this, ttl);
            boolean held = outcome.held() && isValid();
            if (held) {
                core.setEnd(outcome.validUntilNanos(), outcome.validityNanos());
            } else {
                core.endNoLaterThan(outcome.validUntilNanos());
            }
            if (events.on()) {
                events.extended(core.resource(), core.nowNanos() - start, held);
            }
            return Optional.of(held ? outcome : outcome.notHeld(outcome.outcomes(), outcome.misconfigured()));
        } finally {
            rounds.unlock();
        }
    }

    private IllegalStateException released() {
        return new IllegalStateException("the lease on '" + core.resource() + "' was released; acquire a new one");
    }

    @Override
    public void release() {
        LeaseCore.State before = core.release();
        if (before == LeaseCore.State.RELEASED) {
            return;
        }
        Watchdog.Watch keeper = watch.get();
        if (keeper != null) {
            keeper.stop();
        }
        rounds.lock(); // an extension round under way ends before the deletes go out
        rounds.unlock();
        lock.release(this);
        core.released(before);
    }

    boolean grantedBy(Rounds other) {
        return lock == other;
    }

    /** Has {@code watchdog} extend this lease to {@code ttl} until it is released. */
    void keptAliveBy(Watchdog watchdog, Duration ttl) {
        if (isReleased()) {
            throw released();
        }
        Watchdog.Watch started = watchdog.watch(this, ttl);
        if (!watch.compareAndSet(null, started)) {
            started.stop();
            throw new IllegalStateException("the lease on '" + core.resource() + "' is already kept alive");
        }
        if (isReleased()) {
            started.stop(); // released while the watch started: release() may not have seen it
        }
    }

    /** Held by each extension round of this lease: they run one at a time, and a release waits for one under way. */
    ReentrantLock rounds() {
        return rounds;
    }

    long validUntilNanos() {
        return core.endNanos();
    }

    /** Marks the lease lost: it is no longer valid, and {@link #lost()} completes. */
    void markLost(String reason) {
        core.lose(new LeaseLostException(core.resource(), reason, null), Runnable::run);
    }

    /** Tells the listener that an extension threw {@code error}. */
    void extensionFailed(Throwable error) {
        core.events().extensionFailed(core.resource(), error);
    }

    /** Completes when the watchdog could not extend the lease, or its Redlock was closed. */
    CompletableFuture<LeaseLostException> lost() {
        return core.lost();
    }

    boolean isReleased() {
        return core.state() == LeaseCore.State.RELEASED;
    }

    String token() {
        return token;
    }

    Grant[] grants() {
        return grants;
    }

    long waiter() {
        return waiter;
    }

    @Override
    public String toString() {
        return "Lease[" + core.resource() + ", token " + token.substring(0, 8) + "..., remaining "
                + remaining().toMillis() + " ms]";
    }
}
