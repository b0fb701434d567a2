package io.quorumlock.internal;

import io.quorumlock.LeaseLostException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * What every lease is, whatever keeps it alive: its resource, its end on the lock's {@link Ticker},
 * its state, the notice of loss ({@link #lost()}, {@link #inDoubt()}) completed once, and the
 * listener's {@code released} or {@code lost} event, told once and never both. A backend's lease
 * holds one and adds only how it renews and releases.
 *
 * <p>States: PENDING (granted, not yet handed out), VALID, SUSPENDED (the backend cannot vouch for
 * the lease until it has re-checked it), LOST and RELEASED. LOST and RELEASED are final; a lost
 * lease can still be released (its keys deleted), a released one is never lost.
 *
 * <p>The end only moves forward on evidence ({@link #extendTo}, {@link #hold}) and only back on
 * uncertainty ({@link #endNoLaterThan}); {@link #setEnd} is for a round whose effect is known on
 * every node that counted.
 */
public final class LeaseCore {

    /** Where a lease is in its life. */
    public enum State {
        PENDING,
        VALID,
        SUSPENDED,
        LOST,
        RELEASED;

        /** Whether the lease was handed out and has not ended: its end is for the listener to hear. */
        public boolean held() {
            return this == VALID || this == SUSPENDED;
        }
    }

    private static final long DRIFT_CONSTANT_NANOS = 2_000_000L;

    private final String resource;
    private final Ticker ticker;
    private final LockEvents events;
    /** Made when first asked for or completed: most leases are released without either. Guarded by this. */
    private CompletableFuture<LeaseLostException> lost;

    private CompletableFuture<LeaseLostException> inDoubt;

    private volatile State state;
    /** The end of the validity on the ticker. */
    private volatile long endNanos;

    private volatile long validityNanos;
    /** When the lease was handed out, on the ticker: for how long a release held it. */
    private long heldSinceNanos;
    /** Counts suspensions, so that a re-check begun before the latest one cannot resume the lease. */
    private int suspensions;

    private long suspendedSinceNanos;

    /**
     * A lease in {@code state} (PENDING or VALID) whose validity is {@code validityNanos} and ends
     * at {@code endNanos} on {@code ticker}; a VALID one counts as handed out {@code validityNanos}
     * before its end.
     */
    public LeaseCore(
            String resource, Ticker ticker, LockEvents events, State state, long endNanos, long validityNanos) {
        if (state != State.PENDING && state != State.VALID) {
            throw new IllegalArgumentException("a lease starts PENDING or VALID, not " + state);
        }
        this.resource = resource;
        this.ticker = ticker;
        this.events = events;
        this.state = state;
        this.endNanos = endNanos;
        this.validityNanos = validityNanos;
        this.heldSinceNanos = endNanos - validityNanos;
    }

    /** The clock drift allowance for a lease of {@code ttlNanos}: 1% of it and 2 ms. */
    public static long driftNanos(long ttlNanos) {
        return ttlNanos / 100 + DRIFT_CONSTANT_NANOS;
    }

    public String resource() {
        return resource;
    }

    public LockEvents events() {
        return events;
    }

    /** Now, on the lock's clock. */
    public long nowNanos() {
        return ticker.nanos();
    }

    public State state() {
        return state;
    }

    public long endNanos() {
        return endNanos;
    }

    public Duration validity() {
        return Duration.ofNanos(Math.max(0, validityNanos));
    }

    /** The validity left now; zero unless VALID. */
    public Duration remaining() {
        if (state != State.VALID) {
            return Duration.ZERO;
        }
        return Duration.ofNanos(Math.max(0, endNanos - ticker.nanos()));
    }

    public boolean isValid() {
        return state == State.VALID && endNanos - ticker.nanos() > 0;
    }

    /** Brings the end forward to {@code end} at the latest: what a round of unknown effect may have set. */
    public synchronized void endNoLaterThan(long end) {
        if (end - endNanos < 0) {
            endNanos = end;
        }
    }

    /** Sets the end and the validity a round known to have held set. */
    public synchronized void setEnd(long end, long validity) {
        endNanos = end;
        validityNanos = validity;
    }

    /**
     * Moves the end to {@code end} if that is later, with the validity {@code validity} it then
     * has; true if the lease is still PENDING, VALID or SUSPENDED.
     */
    public synchronized boolean extendTo(long end, long validity) {
        if (state == State.LOST || state == State.RELEASED) {
            return false;
        }
        if (end - endNanos > 0) {
            endNanos = end;
            validityNanos = validity;
        }
        return true;
    }

    /**
     * Hands a PENDING lease out at {@code now}, its end moved to {@code end} if that is later;
     * false, and it stays PENDING, if it is not PENDING or its end has passed.
     */
    public synchronized boolean hold(long end, long now) {
        if (state != State.PENDING) {
            return false;
        }
        if (end - endNanos > 0) {
            endNanos = end;
        }
        validityNanos = endNanos - now;
        if (endNanos - ticker.nanos() <= 0) {
            return false;
        }
        heldSinceNanos = now;
        state = State.VALID;
        return true;
    }

    /**
     * Suspends a VALID or SUSPENDED lease and completes {@link #inDoubt()} with {@code doubt};
     * returns the count of suspensions to hand to {@link #resume}, or -1 if the lease was neither.
     */
    public int suspend(LeaseLostException doubt) {
        int count;
        synchronized (this) {
            if (!state.held()) {
                return -1;
            }
            if (state == State.VALID) {
                suspendedSinceNanos = ticker.nanos();
            }
            state = State.SUSPENDED;
            count = ++suspensions;
        }
        inDoubt().complete(doubt);
        return count;
    }

    /** The count of suspensions to hand to {@link #resume} if the lease is SUSPENDED now; else -1. */
    public synchronized int suspension() {
        return state == State.SUSPENDED ? suspensions : -1;
    }

    /** How long a SUSPENDED lease has been, in milliseconds; -1 if it is not. */
    public synchronized long suspendedMillis() {
        return state == State.SUSPENDED ? (ticker.nanos() - suspendedSinceNanos) / 1_000_000 : -1;
    }

    /**
     * Makes a SUSPENDED lease VALID again, its end moved to {@code end} if later, unless it was
     * suspended again after {@code suspension} (the count {@link #suspend} returned) or has ended.
     */
    public synchronized boolean resume(int suspension, long end) {
        if (state != State.SUSPENDED || suspensions != suspension) {
            return false;
        }
        if (end - endNanos > 0) {
            endNanos = end;
        }
        state = State.VALID;
        return true;
    }

    /** Completes {@link #inDoubt()}: the holder can no longer be sure of the lease, which goes on. */
    public void doubt(LeaseLostException why) {
        inDoubt().complete(why);
    }

    /**
     * Ends the lease as released, from any state but RELEASED; returns the state it was in. The
     * backend then deletes what it holds and calls {@link #released(State)}.
     */
    public synchronized State release() {
        State before = state;
        state = State.RELEASED;
        return before;
    }

    /** Tells the listener that the lease released from {@code before} was released, if it was held. */
    public void released(State before) {
        if (before.held() && events.on()) {
            events.released(resource, ticker.nanos() - heldSinceNanos);
        }
    }

    /**
     * Marks the lease lost, unless it was already lost or released; completes {@link #lost()} and
     * {@link #inDoubt()} with {@code loss} and tells the listener (if the lease was held) on {@code
     * tell}, which may be another thread's.
     *
     * @return true if this call lost it
     */
    public boolean lose(LeaseLostException loss, Executor tell) {
        State before;
        synchronized (this) {
            before = state;
            if (before == State.LOST || before == State.RELEASED) {
                return false;
            }
            state = State.LOST;
        }
        tell.execute(() -> {
            lost().complete(loss);
            inDoubt().complete(loss);
            if (before.held() && events.on()) {
                events.lost(resource, loss.getMessage());
            }
        });
        return true;
    }

    /** Completes, with the evidence, when the lease is lost; never if it is released first. */
    public synchronized CompletableFuture<LeaseLostException> lost() {
        if (lost == null) {
            lost = new CompletableFuture<>();
        }
        return lost;
    }

    /** Completes at the first doubt or suspension, or at the loss. */
    public synchronized CompletableFuture<LeaseLostException> inDoubt() {
        if (inDoubt == null) {
            inDoubt = new CompletableFuture<>();
        }
        return inDoubt;
    }
}
