package io.quorumlock.jdbc;

import io.quorumlock.FencedLease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.internal.LeaseCore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One grant of a {@link JdbcLock}: the resource's row, held with this lease's token until an
 * expiry the database sets by its own clock, renewed every third of the TTL.
 *
 * <p>Time: every renewal (and {@link #extend}) is counted from when its statement was sent, no
 * later than when the database ran it, less the drift allowance (1% of the TTL + 2 ms), so the
 * lease never believes it has more time than its row. Renewals and extensions run one at a time.
 * A round whose effect is unknown (no answer in time) may have set the row's expiry to its TTL: it
 * brings the end forward to what that round may have set, and for the rest of the lease every later
 * renewal counts with the shortest such TTL, since the statement may still run after them.
 *
 * <p>The lease is in doubt ({@link #inDoubt()}) once no renewal came for two thirds of its TTL,
 * and lost when its end passes without one, or when a renewal finds the row no longer holds its
 * token.
 */
final class JdbcLease implements FencedLease {

    private static final Logger log = LoggerFactory.getLogger(JdbcLease.class);

    private final JdbcLock lock;
    private final LeaseCore core;
    private final long token;

    /** How soon a renewal whose effect is unknown is tried again. */
    private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    /** One renewal or extension at a time: held while its statement runs, never by a timer. */
    private final Object rounds = new Object();

    /** The TTL renewals ask for: the grant's, or the last extension's that the database took. */
    private volatile long ttlNanos;
    /** The shortest TTL of a round whose effect is unknown; Long.MAX_VALUE if none. */
    private volatile long uncertainTtlNanos = Long.MAX_VALUE;

    /** Guards the timers below; never held while a statement runs. */
    private final Object timers = new Object();

    private ScheduledFuture<?> renewals;
    private ScheduledFuture<?> watch;
    /** Whether a renewal is queued or running. */
    private boolean renewing;

    JdbcLease(JdbcLock lock, String resource, long token, long ttlNanos, long sentNanos, long now) {
        this.lock = lock;
        this.token = token;
        this.ttlNanos = ttlNanos;
        long end = sentNanos + ttlNanos - LeaseCore.driftNanos(ttlNanos);
        this.core = new LeaseCore(resource, lock.ticker(), lock.events(), LeaseCore.State.VALID, end, end - now);
    }

    @Override
    public String resource() {
        return core.resource();
    }

    @Override
    public long fencingToken() {
        return token;
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
     * Sets the row's expiry to {@code ttl} from now, and renews with that TTL from then on.
     *
     * @return true if the database moved the expiry and the lease is valid; false if the lease is no
     *     longer valid (nothing is changed then), the row no longer holds its token (the lease is
     *     then lost), or no answer came within the request timeout (the lease then ends no later
     *     than {@code ttl} from the call)
     */
    @Override
    public boolean extend(Duration ttl) {
        long ttlNanos = TimeUnit.MILLISECONDS.toNanos(lock.ttlMillis(ttl));
        if (core.state() == LeaseCore.State.RELEASED) {
            throw new IllegalStateException("the lease on '" + core.resource() + "' was released; acquire a new one");
        }
        if (!core.isValid()) {
            return false;
        }
        long sent = core.nowNanos();
        boolean held = round(ttlNanos, true) == JdbcLock.Renewal.RENEWED;
        if (lock.events().on()) {
            lock.events().extended(core.resource(), core.nowNanos() - sent, held);
        }
        return held && core.isValid();
    }

    @Override
    public CompletableFuture<LeaseLostException> lost() {
        return core.lost().copy();
    }

    /**
     * Completes when no renewal came for two thirds of the TTL: the database may let the row expire
     * in the third that is left. The lease itself may still be renewed after that; work that must
     * not outlive it ({@code withLock}, {@code quorumlock run}) stops here.
     */
    @Override
    public CompletableFuture<LeaseLostException> inDoubt() {
        return core.inDoubt().copy();
    }

    /** Frees the row if it still holds this lease's token; idempotent. */
    @Override
    public void release() {
        LeaseCore.State before = core.release();
        if (before == LeaseCore.State.RELEASED) {
            return;
        }
        stopTimers();
        lock.forget(this);
        lock.releaseRow(core.resource(), token);
        core.released(before);
    }

    // ---- renewals --------------------------------------------------------------------------------

    /** Starts the renewals every third of the TTL and the timer of doubt and loss. */
    void start() {
        schedule(ttlNanos);
        arm();
    }

    private void schedule(long ttl) {
        long every = Math.max(1, ttl / 3);
        synchronized (timers) {
            if (renewals != null) {
                renewals.cancel(false);
            }
            if (!core.state().held()) {
                return;
            }
            try {
                renewals = lock.timers().scheduleWithFixedDelay(this::queueRenewal, every, every, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closing) {
                renewals = null;
            }
        }
    }

    /** Hands one renewal to the lock's workers, unless one is queued or running; on the timer thread. */
    private void queueRenewal() {
        synchronized (timers) {
            if (renewing || !core.state().held()) {
                return;
            }
            renewing = true;
        }
        try {
            lock.workers().execute(this::renew);
        } catch (RejectedExecutionException closing) {
            synchronized (timers) {
                renewing = false;
            }
        }
    }

    /** One renewal, on a worker; one whose effect is unknown is tried again soon. */
    private void renew() {
        JdbcLock.Renewal outcome;
        try {
            outcome = round(0, false);
        } finally {
            synchronized (timers) {
                renewing = false;
            }
        }
        if (outcome == JdbcLock.Renewal.UNKNOWN && core.state().held()) {
            try {
                lock.timers().schedule(this::queueRenewal, RETRY_NANOS, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closing) {
                // the lock is closing
            }
        }
    }

    /**
     * One renewal (the current TTL) or extension (to {@code explicitTtl}). The end is counted from
     * when the statement was sent, with the shortest TTL of any round of unknown effect; the
     * statement may take until the end at most, past which the lease is over anyway.
     */
    private JdbcLock.Renewal round(long explicitTtl, boolean explicit) {
        JdbcLock.Renewal outcome;
        synchronized (rounds) {
            if (!core.state().held()) {
                return JdbcLock.Renewal.GONE;
            }
            long ttl = explicit ? explicitTtl : ttlNanos;
            long sent = core.nowNanos();
            outcome = lock.renewRow(core.resource(), token, ttl, core.endNanos());
            switch (outcome) {
                case RENEWED -> {
                    long counted = Math.min(ttl, uncertainTtlNanos);
                    long end = sent + counted - LeaseCore.driftNanos(counted);
                    core.setEnd(end, end - core.nowNanos());
                    if (explicit && ttl != ttlNanos) {
                        ttlNanos = ttl;
                        schedule(ttl);
                    }
                }
                case UNKNOWN -> {
                    uncertainTtlNanos = Math.min(uncertainTtlNanos, ttl);
                    core.endNoLaterThan(sent + ttl - LeaseCore.driftNanos(ttl));
                }
                case GONE -> {}
            }
        }
        if (outcome == JdbcLock.Renewal.GONE) {
            lose("the lock's row no longer holds this lease's token: it expired and was taken by another"
                    + " holder, or was freed by hand");
        } else {
            arm();
        }
        return outcome;
    }

    /** The TTL the timers count with: the renewals', or a shorter one a round of unknown effect may have set. */
    private long countedTtl() {
        return Math.min(ttlNanos, uncertainTtlNanos);
    }

    /** (Re)arms the timer that puts the lease in doubt a third of the TTL before its end, and loses it at its end. */
    private void arm() {
        synchronized (timers) {
            if (watch != null) {
                watch.cancel(false);
                watch = null;
            }
            if (!core.state().held()) {
                return;
            }
            long now = core.nowNanos();
            long end = core.endNanos();
            long doubtAt = end - countedTtl() / 3;
            long at = doubtAt - now > 0 ? doubtAt : end;
            try {
                watch = lock.timers().schedule(this::check, Math.max(0, at - now), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closing) {
                watch = null;
            }
        }
    }

    /** The timer: in doubt a third of the TTL before the end, lost at the end. */
    private void check() {
        long left = core.endNanos() - core.nowNanos();
        if (left <= 0) {
            lose("no renewal was answered within the lease's TTL: its validity ran out");
            return;
        }
        if (left > countedTtl() / 3) {
            arm(); // renewed meanwhile
            return;
        }
        core.doubt(new LeaseLostException(
                core.resource(),
                "no renewal answered for two thirds of the lease's TTL: the database may let the row expire in "
                        + left / 1_000_000 + " ms (fencing token " + token + ")",
                null));
        synchronized (timers) {
            if (watch != null) {
                watch.cancel(false);
            }
            if (!core.state().held()) {
                watch = null;
                return;
            }
            try {
                watch = lock.timers().schedule(this::check, left, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closing) {
                watch = null;
            }
        }
    }

    private void stopTimers() {
        synchronized (timers) {
            if (renewals != null) {
                renewals.cancel(false);
                renewals = null;
            }
            if (watch != null) {
                watch.cancel(false);
                watch = null;
            }
        }
    }

    /** Ends the lease as lost because its lock is being closed, telling it on the closing thread. */
    void loseOnClose() {
        lose("the JdbcLock was closed while the lease was held", true);
    }

    private void lose(String why) {
        lose(why, false);
    }

    private void lose(String why, boolean inline) {
        LeaseLostException loss = new LeaseLostException(
                core.resource(),
                why + " (fencing token " + token + "): another client may hold the lock now, and storage that has"
                        + " seen a newer token refuses this one",
                null);
        Runnable[] tell = new Runnable[1];
        if (!core.lose(loss, task -> tell[0] = task)) {
            return;
        }
        stopTimers();
        lock.forget(this);
        log.warn("{}", loss.getMessage());
        if (inline) {
            tell[0].run();
            return;
        }
        try {
            lock.timers().execute(tell[0]);
        } catch (RejectedExecutionException closing) {
            tell[0].run();
        }
    }

    @Override
    public String toString() {
        return "JdbcLease[" + core.resource() + ", token " + token + ", " + core.state() + "]";
    }
}
