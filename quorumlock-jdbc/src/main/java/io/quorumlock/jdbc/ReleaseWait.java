package io.quorumlock.jdbc;

import io.quorumlock.QuorumlockException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.AsyncThreads;
import io.quorumlock.internal.LocalLine;
import io.quorumlock.internal.ThreadlessSleep;
import io.quorumlock.internal.Ticker;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The pauses of one {@link JdbcLock#acquire} between its attempts. With a {@link ReleaseSignal}
 * that listens for the resource's releases ({@link PgListener}, {@link MariaDbWaker}), the waiter
 * takes its turn in the {@link LocalLine} queue and sleeps until a release wakes it, the holder's
 * row ends by the time the database gave it, or the lock's recheck interval passes (a release that
 * went unheard); an attempt made before the signal listened is repeated at once once it does.
 * Without one (H2, or a connection that cannot listen) it sleeps the lock's jittered backoff, cut
 * short when the holder's row ends. A blocking acquire sleeps on its own thread; an asynchronous one
 * on a timer ({@link #pauseWithoutThread}).
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
    /** Whether the lock is closed. */
    private final BooleanSupplier closed;

    private LocalLine.Waiter waiter;
    /** The listener's number when the last attempt started. */
    private long listenedBefore;
    /** Whether the last attempt found a holder, and when its row ends. */
    private boolean held;

    private long holderEndsNanos;

    /** {@link #begin}: the next attempt goes on at once. */
    private static final long GO = -1;
    /** {@link #begin}: the pause does not fit in the wait: no next attempt. */
    private static final long STOP = -2;
    /** Of the pause begun: whether a release ends its sleep, and whether the attempts go on after a full sleep. */
    private boolean wakeable;

    private boolean goesOnAfterSleep;
    /** The acquire given up: a pause without a thread ends at once. */
    private final ThreadlessSleep.Cancel cancel = new ThreadlessSleep.Cancel();
    /** Whether a pause without a thread took a wake-up that no attempt has used yet. */
    private volatile boolean tookWake;

    /** @param listeners the lock's listener, null where the database cannot notify or is not known yet */
    ReleaseWait(
            String resource,
            LocalLine waiters,
            Supplier<ReleaseSignal> listeners,
            RetryPolicy retry,
            long recheckNanos,
            Ticker ticker,
            BooleanSupplier closed) {
        this.resource = resource;
        this.closed = closed;
        this.waiters = waiters;
        this.listeners = listeners;
        this.retry = retry;
        this.recheckNanos = recheckNanos;
        this.ticker = ticker;
    }

    /** An attempt starts. */
    void attempting() {
        tookWake = false; // used by this attempt
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
        long sleep = begin(failedAttempts, nanosLeft);
        if (sleep < 0) {
            return sleep == GO;
        }
        try {
            if (!wakeable) {
                TimeUnit.NANOSECONDS.sleep(sleep);
                return slept(false);
            }
            return slept(waiter.await(sleep));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new QuorumlockException("interrupted while waiting to acquire '" + resource + "'", e);
        }
    }

    /**
     * As {@link #pauseBeforeNextAttempt}, holding no thread while it sleeps: the sleep ends on the
     * {@link AsyncThreads#timer()} or at a release heard, which hands the end of the pause to the
     * {@link AsyncThreads#attempts()}. A {@linkplain #cancel() cancel} ends it at once.
     */
    CompletableFuture<Boolean> pauseWithoutThread(int failedAttempts, long nanosLeft, String resource) {
        long sleep = cancel.isCancelled() ? STOP : begin(failedAttempts, nanosLeft);
        if (sleep < 0) {
            return CompletableFuture.completedFuture(sleep == GO);
        }
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        ThreadlessSleep sleeping = new ThreadlessSleep(() -> {
            tookWake = !cancel.isCancelled() && wakeable && waiter.takeWake();
            done.complete(!cancel.isCancelled() && slept(tookWake));
        });
        if (wakeable) {
            waiter.onWake(sleeping); // runs under the line's lock: it only hands on
        }
        sleeping.endIn(sleep);
        cancel.started(sleeping); // a cancel that came meanwhile ends it at once
        return done;
    }

    /** The acquire is given up: a pause without a thread ends now, refused, and none begins. */
    void cancel() {
        cancel.cancel();
    }

    /**
     * Begins a pause: {@link #GO} or {@link #STOP} at once, or how long to sleep, woken by a
     * release if {@link #wakeable}; {@link #slept} then tells whether to go on.
     */
    private long begin(int failedAttempts, long nanosLeft) {
        if (closed.getAsBoolean()) {
            return GO; // the next attempt ends the wait
        }
        if (listener() == null || !listener.usable()) {
            // The lock's backoff, cut short when the holder's row ends.
            long delay = untilHolderEnds(retry.delayAfter(failedAttempts).toNanos());
            wakeable = false;
            goesOnAfterSleep = true;
            return delay <= nanosLeft ? delay : STOP;
        }
        if (waiter == null) {
            waiter = waiters.join(resource);
        }
        long listening = listener.listening(resource);
        if (listening == 0) {
            listener.wanted(resource);
        }
        if (listening != 0 && listening != listenedBefore) {
            return GO; // the attempt ran before this LISTEN: a release then went unheard
        }
        // Not listening (yet, or any more): the backoff, ended early when the LISTEN is in place
        long pause = untilHolderEnds(
                listening == 0 ? retry.delayAfter(failedAttempts).toNanos() : recheckNanos);
        wakeable = true;
        goesOnAfterSleep = pause < nanosLeft;
        return Math.min(pause, nanosLeft);
    }

    /** Whether the next attempt goes on, after a sleep that a release ended ({@code woken}) or not. */
    private boolean slept(boolean woken) {
        return woken || goesOnAfterSleep;
    }

    private ReleaseSignal listener() {
        if (listener == null) {
            listener = listeners.get();
        }
        return listener;
    }

    /** {@code pause}, cut short to when the holder's row ends if the last attempt found one. */
    private long untilHolderEnds(long pause) {
        return held ? Math.min(pause, Math.max(0, holderEndsNanos - ticker.nanos())) : pause;
    }

    /**
     * Leaves the queue of waiters, if the acquire joined it; a wake-up the acquire took without an
     * attempt after it goes to the next waiter.
     */
    @Override
    public void close() {
        if (waiter != null) {
            if (tookWake) {
                tookWake = false;
                waiter.giveBackWake();
            }
            waiter.close();
        }
    }
}
