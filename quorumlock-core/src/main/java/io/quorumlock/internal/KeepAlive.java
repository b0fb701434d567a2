package io.quorumlock.internal;

import io.quorumlock.LeaseLostException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The life of one lease, for every backend: its rounds one at a time, the renewals while it is kept
 * alive, its doubt and its loss. A backend supplies only a {@link Driver}: how one round renews,
 * and the evidence its notices carry. The times come from {@link LeaseTimes}; the threads from the
 * lock's {@link Timers}.
 *
 * <p>Rules. Every round (a renewal or a caller's {@link #extend}) ends the lease no later than what
 * it may set, from its send on: the lease never believes it has more time than its server. A
 * round that renewed sets the end from its send, counted with the shortest TTL of any earlier round
 * of unknown effect (that round's request may still run after it). A round of unknown effect
 * shortens the end and the schedule follows the shortened end; a round that sent nothing changes
 * nothing. A round that found the hold gone loses the lease. While kept alive ({@link #start}), the
 * lease renews when two thirds of the TTL are left, retries a failed round after a backoff, is in
 * doubt when a third is left with a renewal unanswered, and is lost when no round can end with the
 * loss notice left, or at its end. Notices are told once, on the notice threads, never on the
 * timer or a worker, and never while the lease's rounds are held.
 *
 * <p>A lease granted but not yet handed out (PENDING: an etcd lease while its lock is waited for)
 * is kept alive as a held one; its doubt is then already told when it is handed out.
 */
public final class KeepAlive {

    private static final Logger log = LoggerFactory.getLogger(KeepAlive.class);

    private static final String CLOSED = "the lock that kept it alive was closed, so no renewal will follow";

    /** What one round came to. */
    public enum Renewal {
        /** The server holds the lease for the TTL asked, from no earlier than the round's send. */
        RENEWED,
        /** The request may or may not have run: no answer in time, or a failure after the send. */
        UNKNOWN,
        /** Nothing reached the server (no connection): the lease is as it was. */
        NOT_SENT,
        /** The server no longer holds the lease for this holder. */
        GONE
    }

    /** One round's result, and why, for the evidence of a failure. */
    public record Result(Renewal renewal, String why) {
        public static final Result RENEWED = new Result(Renewal.RENEWED, "renewed");

        public static Result unknown(String why) {
            return new Result(Renewal.UNKNOWN, why);
        }

        public static Result notSent(String why) {
            return new Result(Renewal.NOT_SENT, why);
        }

        public static Result gone(String why) {
            return new Result(Renewal.GONE, why);
        }

        public boolean renewed() {
            return renewal == Renewal.RENEWED;
        }
    }

    /** What a backend supplies. */
    public interface Driver {
        /** One round that renews the lease's hold for {@code ttlNanos}; it may wait on the servers up to the round's bound. */
        Result renew(long ttlNanos);

        /** The latest end a round sent at {@code sentNanos} for {@code ttlNanos} may give. */
        default long endAfter(long sentNanos, long ttlNanos) {
            return LeaseTimes.endAfter(sentNanos, ttlNanos);
        }

        /** The evidence a notice of doubt or loss carries: {@code why}, with what the backend adds. */
        LeaseLostException evidence(String why);

        /** Called once when the lease is lost, before its notice is told. */
        default void onLost() {}
    }

    private final LeaseCore core;
    private final Driver driver;
    private final Timers timers;
    /** The longest one round may take. */
    private final long roundNanos;
    /** Held by each round: they run one at a time, and a release waits for one under way. */
    private final ReentrantLock rounds = new ReentrantLock();

    // Guarded by this; never held while a round runs or a notice is told.
    private long ttlNanos;
    /** The shortest TTL of a round of unknown effect; Long.MAX_VALUE if none. */
    private long uncertainTtlNanos = Long.MAX_VALUE;

    private boolean started;
    private boolean stopped;
    private boolean inFlight;
    private boolean doubted;
    /** Whether a renewal fell due and is not yet answered, and since when. */
    private boolean due;

    private long dueNanos;
    private long startedNanos;
    /** Failed automatic rounds in a row, when the next is due, and what the first got. */
    private int failures;

    private long retryAtNanos;
    private String firstFailure;
    private Timers.Scheduled next;

    /**
     * The life of the lease held by {@code core}, renewed by {@code driver} to {@code ttlNanos};
     * each round may take up to {@code roundNanos}.
     */
    public KeepAlive(LeaseCore core, Driver driver, Timers timers, long ttlNanos, long roundNanos) {
        this.core = core;
        this.driver = driver;
        this.timers = timers;
        this.ttlNanos = ttlNanos;
        this.roundNanos = roundNanos;
    }

    /**
     * Keeps the lease alive, renewing to {@code ttlNanos}, until it is released or lost: renews at
     * once if less than two thirds of the TTL are left. A lease already over is lost at once, its
     * notice told on this thread.
     *
     * @throws IllegalStateException if it is already kept alive
     */
    public void start(long ttlNanos) {
        String why = "its validity had run out before it was kept alive";
        synchronized (this) {
            if (started) {
                throw new IllegalStateException("the lease on '" + core.resource() + "' is already kept alive");
            }
            started = true;
            this.ttlNanos = ttlNanos;
            startedNanos = core.nowNanos();
            if (stopped || !kept()) {
                stopped = true;
                return;
            }
            if (renewable()) {
                try {
                    // The first tick when it is due (the renewal, or the end), not at once: a lease
                    // released soon after its grant wakes no timer.
                    long now = core.nowNanos();
                    next = timers.schedule(this::tick, Math.max(0, earlier(core.endNanos(), dueAt()) - now));
                    return;
                } catch (RejectedExecutionException closed) {
                    why = CLOSED;
                }
            }
        }
        lose(why, true);
    }

    /** Whether {@link #start} was called. */
    public synchronized boolean started() {
        return started;
    }

    /**
     * One round on the caller's thread, after any round under way: renews the hold to {@code
     * ttlNanos}, which the renewals then ask for if it held.
     *
     * @return true if it renewed and the lease is valid; false, with nothing sent, if the lease is
     *     not valid
     */
    public boolean extend(long ttlNanos) {
        Result result = round(ttlNanos, true);
        if (result == null) {
            return false;
        }
        String lose = null;
        synchronized (this) {
            if (result.renewed()) {
                this.ttlNanos = ttlNanos;
                failures = 0;
                due = false;
            } else if (result.renewal() == Renewal.GONE) {
                lose = result.why();
            }
            if (lose == null && started && !stopped) {
                arm(core.nowNanos());
            }
        }
        if (lose != null) {
            lose(lose, false);
            return false;
        }
        return result.renewed() && core.isValid();
    }

    /** The lease's end once a round under way has ended. */
    public long endAfterRounds() {
        rounds.lock();
        try {
            return core.endNanos();
        } finally {
            rounds.unlock();
        }
    }

    /** Stops the renewals and waits for a round under way to end: nothing of this lease runs after. */
    public void stop() {
        synchronized (this) {
            stopped = true;
            cancel();
        }
        rounds.lock();
        rounds.unlock();
    }

    /**
     * Loses the lease with the evidence {@code why}, unless it was already lost or released: stops
     * the renewals and tells the notice on the notice threads, or on this one if {@code inline}.
     *
     * @return true if this call lost it
     */
    public boolean lose(String why, boolean inline) {
        LeaseLostException loss = driver.evidence(why);
        Runnable[] tell = new Runnable[1];
        if (!core.lose(loss, task -> tell[0] = task)) {
            return false;
        }
        synchronized (this) {
            stopped = true;
            cancel();
        }
        driver.onLost();
        log.warn("{}", loss.getMessage());
        if (inline) {
            tell[0].run();
        } else {
            timers.tell(tell[0]);
        }
        return true;
    }

    /** Loses the lease because its lock is closing, telling the notice on this thread. */
    public void loseOnClose() {
        lose(CLOSED, true);
    }

    // ---- the rounds ------------------------------------------------------------------------------

    /**
     * One round after any under way; null, with nothing sent, if the lease is not valid. What the
     * driver throws goes to the caller of an {@link #extend} ({@code rethrow}); an automatic
     * renewal that throws loses the lease.
     */
    private Result round(long ttl, boolean rethrow) {
        rounds.lock();
        try {
            long sent = core.nowNanos();
            long endBefore = core.endNanos();
            if (!renewable()) {
                return null;
            }
            long cap = driver.endAfter(sent, ttl);
            core.endNoLaterThan(cap); // what this round may set, from its send on
            Result result;
            try {
                result = driver.renew(ttl);
            } catch (RuntimeException | Error e) {
                if (rethrow) {
                    throw e;
                }
                // An Error too: the work must never run on unwatched past its validity.
                if (kept()) {
                    log.error("renewal of the lease on '{}' failed", core.resource(), e);
                    core.events().extensionFailed(core.resource(), e);
                }
                result = Result.gone("renewal failed: " + e);
            }
            long now = core.nowNanos();
            switch (result.renewal()) {
                case RENEWED -> {
                    if (!kept() || core.endNanos() - now <= 0) {
                        result = Result.unknown("the renewal was answered after the lease's validity had run out");
                    } else {
                        long counted;
                        synchronized (this) {
                            counted = Math.min(ttl, uncertainTtlNanos);
                        }
                        long end = driver.endAfter(sent, counted);
                        core.setEnd(end, end - now);
                    }
                }
                case UNKNOWN -> {
                    synchronized (this) {
                        uncertainTtlNanos = Math.min(uncertainTtlNanos, ttl);
                    }
                }
                case NOT_SENT -> {
                    if (core.endNanos() != endBefore && kept()) {
                        core.setEnd(endBefore, endBefore - now);
                    }
                }
                case GONE -> {}
            }
            LockEvents events = core.events();
            if (events.on()) {
                events.extended(core.resource(), now - sent, result.renewed());
            }
            return result;
        } finally {
            rounds.unlock();
        }
    }

    // ---- kept alive --------------------------------------------------------------------------------

    /** Whether the lease is granted and not over: held, or PENDING until it is handed out. */
    private boolean kept() {
        LeaseCore.State state = core.state();
        return state.held() || state == LeaseCore.State.PENDING;
    }

    /** Whether a round may be sent: the lease is valid, or PENDING before its end. */
    private boolean renewable() {
        return core.isValid() || (core.state() == LeaseCore.State.PENDING && core.endNanos() - core.nowNanos() > 0);
    }

    /** The TTL the times count with: the renewals', or a shorter one a round of unknown effect may have set. */
    private long counted() {
        return Math.min(ttlNanos, uncertainTtlNanos);
    }

    private long dueAt() {
        return failures > 0 ? retryAtNanos : LeaseTimes.renewAt(core.endNanos(), counted());
    }

    /** On the timer: starts a renewal that fell due, tells the doubt, loses the lease at its end. */
    private void tick() {
        String lose = null;
        boolean renew = false;
        long left = 0;
        boolean doubt = false;
        synchronized (this) {
            next = null;
            if (stopped) {
                return;
            }
            if (!kept()) {
                stopped = true;
                return;
            }
            long now = core.nowNanos();
            long end = core.endNanos();
            left = end - now;
            if (left <= 0) {
                lose = "no renewal was answered within the lease's validity";
            } else {
                if (!inFlight && dueAt() - now <= 0) {
                    inFlight = true;
                    renew = true;
                    if (!due) {
                        due = true;
                        dueNanos = LeaseTimes.later(LeaseTimes.renewAt(end, counted()), startedNanos);
                    }
                }
                if (due && !doubted && LeaseTimes.doubtAt(end, counted(), dueNanos) - now <= 0) {
                    doubted = true;
                    doubt = true;
                }
                arm(now);
            }
        }
        if (lose != null) {
            lose(lose, false);
            return;
        }
        if (doubt) {
            LeaseLostException why = driver.evidence("no renewal answered for two thirds of the lease's TTL: it may"
                    + " expire in " + left / 1_000_000 + " ms");
            timers.tell(() -> core.doubt(why));
        }
        if (renew) {
            try {
                timers.execute(this::renewal);
            } catch (RejectedExecutionException closed) {
                lose(CLOSED, false);
            }
        }
    }

    /** An automatic renewal, on a worker. */
    private void renewal() {
        long ttl;
        synchronized (this) {
            ttl = ttlNanos;
        }
        Result result = round(ttl, false);
        if (result == null) {
            // Not valid now (suspended until the backend re-checks it, or over): nothing was sent.
            result = Result.notSent("the lease was not valid at its renewal");
        }
        String lose = null;
        synchronized (this) {
            inFlight = false;
            if (stopped) {
                return;
            }
            long now = core.nowNanos();
            switch (result.renewal()) {
                case RENEWED -> {
                    failures = 0;
                    firstFailure = null;
                    due = false;
                }
                case GONE -> lose = result.why();
                case UNKNOWN, NOT_SENT -> {
                    failures++;
                    if (failures == 1) {
                        firstFailure = result.why();
                    }
                    long wait = LeaseTimes.retryAfterNanos(now, core.endNanos(), counted(), roundNanos, failures);
                    if (wait < 0) {
                        lose = failures == 1
                                ? result.why()
                                : result.why() + " (the last of " + failures + " rounds in a row; the first: "
                                        + firstFailure + ")";
                    } else {
                        retryAtNanos = now + wait;
                        log.debug(
                                "renewal of the lease on '{}' failed, retrying in {} ms: {}",
                                core.resource(),
                                wait / 1_000_000,
                                result.why());
                    }
                }
            }
            if (lose == null) {
                arm(now);
            }
        }
        if (lose != null) {
            lose(lose, false);
        }
    }

    /** Schedules the next tick: the due renewal, the doubt or the end, whichever comes first. */
    private void arm(long now) {
        cancel();
        if (stopped) {
            return;
        }
        long end = core.endNanos();
        long at = end;
        if (!inFlight) {
            at = earlier(at, dueAt());
        }
        if (due && !doubted) {
            at = earlier(at, LeaseTimes.doubtAt(end, counted(), dueNanos));
        }
        try {
            next = timers.schedule(this::tick, Math.max(0, at - now));
        } catch (RejectedExecutionException closed) {
            timers.tell(() -> lose(CLOSED, false));
        }
    }

    private static long earlier(long a, long b) {
        return a - b <= 0 ? a : b;
    }

    private void cancel() {
        if (next != null) {
            next.cancel();
            next = null;
        }
    }
}
