package io.quorumlock.jdbc;

import io.quorumlock.QuorumlockException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.LocalLine;
import io.quorumlock.internal.Ticker;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The pauses of one {@link JdbcLock#acquire} between its attempts. With a {@link ReleaseSignal}
 * that listens for the resource's releases ({@link PgListener}, {@link MariaDbWaker}), the waiter
 * takes its turn in the {@link LocalLine} queue and sleeps until a release wakes it, the holder's
 * row ends by the time the database gave it, or the lock's recheck interval passes (a release that
 * went unheard); an attempt made before the signal listened is repeated at once once it does.
 * Without one (H2, or a connection that cannot listen) it sleeps the lock's jittered backoff, cut
 * short when the holder's row ends.
 */
final class ReleaseWait implements AcquireLoop.Pause, AutoCloseable {

    private final LocalLine waiters;
    private final Supplier<ReleaseSignal> listeners;
    private ReleaseSignal listener;
    private final String resource;
    private final RetryPolicy retry;
    /** The longest sleep while listening: a release that went unheard costs at most this. */
    private final long recheckNanos;

    private final Ticker ticker;

    private LocalLine.Waiter waiter;
    /** The listener's number when the last attempt started. */
    private long listenedBefore;
    /** Whether the last attempt found a holder, and when its row ends. */
    private boolean held;

    private long holderEndsNanos;

    /** @param listeners the lock's listener, null where the database cannot notify or is not known yet */
    ReleaseWait(
            String resource,
            LocalLine waiters,
            Supplier<ReleaseSignal> listeners,
            RetryPolicy retry,
            long recheckNanos,
            Ticker ticker) {
        this.resource = resource;
        this.waiters = waiters;
        this.listeners = listeners;
        this.retry = retry;
        this.recheckNanos = recheckNanos;
        this.ticker = ticker;
    }

    /** An attempt starts. */
    void attempting() {
        listenedBefore = listener() == null ? 0 : listener.listening(resource);
        held = false;
    }

    /**
     * How long a refused attempt marks the row as wanted (PostgreSQL, whose release then
     * notifies): two rechecks, within which this waiter tries again and marks it anew.
     */
    long wantedMillis() {
        return Math.max(1, 2 * TimeUnit.NANOSECONDS.toMillis(recheckNanos));
    }

    /** The attempt found the row held for {@code millisLeft} more by the database's clock. */
    void held(long millisLeft) {
        held = true;
        holderEndsNanos = ticker.nanos() + TimeUnit.MILLISECONDS.toNanos(Math.max(1, millisLeft));
    }

    /** The acquire ended with the lock: the wake-up is not passed on. */
    void granted() {
        if (waiter != null) {
            waiter.granted();
        }
    }

    @Override
    public boolean pauseBeforeNextAttempt(int failedAttempts, long nanosLeft, String resource) {
        if (listener() == null || !listener.usable()) {
            return backoff(failedAttempts, nanosLeft, resource);
        }
        if (waiter == null) {
            waiter = waiters.join(resource);
        }
        long listening = listener.listening(resource);
        if (listening == 0) {
            listener.wanted(resource);
        }
        if (listening != 0 && listening != listenedBefore) {
            return true; // the attempt ran before this LISTEN: a release then went unheard
        }
        // Not listening (yet, or any more): the backoff, ended early when the LISTEN is in place
        long pause = untilHolderEnds(
                listening == 0 ? retry.delayAfter(failedAttempts).toNanos() : recheckNanos);
        try {
            return waiter.await(Math.min(pause, nanosLeft)) || pause < nanosLeft;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new QuorumlockException("interrupted while waiting to acquire '" + resource + "'", e);
        }
    }

    private ReleaseSignal listener() {
        if (listener == null) {
            listener = listeners.get();
        }
        return listener;
    }

    /** The lock's backoff, cut short when the holder's row ends. */
    private boolean backoff(int failedAttempts, long nanosLeft, String resource) {
        long delay = untilHolderEnds(retry.delayAfter(failedAttempts).toNanos());
        return delay <= nanosLeft && sleep(delay, resource);
    }

    /** {@code pause}, cut short to when the holder's row ends if the last attempt found one. */
    private long untilHolderEnds(long pause) {
        return held ? Math.min(pause, Math.max(0, holderEndsNanos - ticker.nanos())) : pause;
    }

    private static boolean sleep(long nanos, String resource) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new QuorumlockException("interrupted while waiting to acquire '" + resource + "'", e);
        }
    }

    /** Leaves the queue of waiters, if the acquire joined it. */
    @Override
    public void close() {
        if (waiter != null) {
            waiter.close();
        }
    }
}
