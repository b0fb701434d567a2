package io.quorumlock.zookeeper;

import io.quorumlock.FencedLease;
import io.quorumlock.RetryPolicy;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.AcquireLoop.Attempt;
import io.quorumlock.internal.AsyncAcquireLoop;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The timing of a {@link ZooKeeperLock}'s attempts, and of its recipes' ({@link CuratorSemaphore},
 * {@link CuratorReadWriteLock}): each attempt's deadline and the end of its requests, one attempt
 * for a try, and the retries of a wait, blocking or without a thread.
 */
final class AttemptTiming {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLock.class);

    private final Ticker ticker;
    private final LockEvents events;
    private final RetryPolicy retry;
    /** The client's connect timeout: a try waits this long for a connection. */
    private final Supplier<Duration> connectTimeout;

    AttemptTiming(Ticker ticker, LockEvents events, RetryPolicy retry, Supplier<Duration> connectTimeout) {
        this.ticker = ticker;
        this.events = events;
        this.retry = retry;
        this.connectTimeout = connectTimeout;
    }

    /** One attempt of a resource's lock or of another recipe: given its deadline, request end and mode. */
    interface Step {
        Attempt<FencedLease> attempt(long deadline, long end, LockAttempts.Mode mode);
    }

    /** {@link ZooKeeperLock#tryAcquire}'s timing, around {@code step}. */
    Optional<FencedLease> tryAcquireBy(String resource, Step step) {
        long deadline = ticker.nanos() + connectTimeout.get().toNanos();
        long end = deadline + AcquireLoop.overrun(connectTimeout.get()).toNanos();
        return AcquireLoop.once(resource, ticker, events, () -> step.attempt(deadline, end, LockAttempts.Mode.ONCE));
    }

    /** {@link ZooKeeperLock#acquire}'s timing and retries, around {@code step}. */
    FencedLease acquireBy(String resource, Duration maxWait, Step step) {
        Settings.maxWait(maxWait);
        boolean once = maxWait.isZero();
        return AcquireLoop.acquire(resource, maxWait, retry, ticker, events, (number, remainingNanos) -> {
            long deadline = deadline(once, remainingNanos);
            Attempt<FencedLease> attempt = step.attempt(deadline, end(deadline), mode(once));
            return logged(resource, number, attempt);
        });
    }

    /** One attempt of a resource's lock or of another recipe that waits without a thread. */
    interface AsyncStep {
        CompletableFuture<Attempt<FencedLease>> attempt(
                long deadline, long end, LockAttempts.Mode mode, AsyncAcquireLoop.AcquireEnd acquire);
    }

    /** {@link ZooKeeperLock#acquireWithoutThread}'s timing and retries, around {@code step}. */
    CompletableFuture<FencedLease> acquireWithoutThreadBy(String resource, Duration maxWait, AsyncStep step) {
        Settings.maxWait(maxWait);
        boolean once = maxWait.isZero();
        return AsyncAcquireLoop.acquireAsyncBy(
                resource,
                maxWait,
                retry,
                ticker,
                events,
                (number, remainingNanos, acquire) -> {
                    long deadline = deadline(once, remainingNanos);
                    return step.attempt(deadline, end(deadline), mode(once), acquire)
                            .thenApply(attempt -> logged(resource, number, attempt));
                },
                FencedLease::release);
    }

    /**
     * An attempt's deadline. One attempt ({@code once}) is tryAcquire's: it waits for no holder, but
     * for the connection (a lock just built has none yet) up to the connect timeout, and so do its
     * requests: the first requests of a client on a busy machine take longer than the overrun.
     */
    private long deadline(boolean once, long remainingNanos) {
        long now = ticker.nanos();
        return once ? now + connectTimeout.get().toNanos() : now + remainingNanos;
    }

    /** The end of an attempt's requests: its deadline and the overrun. */
    private long end(long deadline) {
        return deadline + AcquireLoop.overrun(connectTimeout.get()).toNanos();
    }

    private static LockAttempts.Mode mode(boolean once) {
        return once ? LockAttempts.Mode.ONCE : LockAttempts.Mode.WAIT;
    }

    private static Attempt<FencedLease> logged(String resource, int number, Attempt<FencedLease> attempt) {
        if (attempt.lease().isEmpty()) {
            log.debug("attempt {} to lock '{}' failed: {}", number, resource, attempt);
        }
        return attempt;
    }
}
