package io.quorumlock.redis;

import io.quorumlock.QuorumlockException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.LocalLine;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pauses of one {@link Redlock#acquire} between its attempts. The threads of one lock that
 * wait for one resource take turns, in the order they came; the others send nothing, and look
 * every {@link #TURN_CHECK_NANOS} whether their turn has come. The first in line:
 *
 * <ul>
 *   <li>after a refusal by a holder of a quorum, sleeps until a release wakes it: one by a thread
 *       of this lock, or one by another client, heard on the nodes ({@link ReleaseChannels}); or until the
 *       holder's keys run out on a quorum of nodes by their TTLs (read before the first sleep
 *       only: once a release woke it, the lock changes hands and another release is coming); or
 *       the recheck interval at most, in case a release went unheard. An attempt made before the
 *       release channel was heard on enough nodes is repeated as soon as it is, and one made before a
 *       release that was heard before this thread joined the line is repeated at once;
 *   <li>after a refusal in which some node said yes and the others were held, reads the keys: if
 *       no owner holds a quorum (clients that split the vote), sleeps a random part of a few
 *       attempts' time, more after each split in a row, so that one of the clients wins (the
 *       clean-up of a refused attempt tells no one); else waits for the holder's release, as above;
 *   <li>after a refusal that too few nodes answered to tell, sleeps the jittered backoff;
 *   <li>after a refusal by the restart guard, sleeps until it lets enough votes in, or to the end
 *       of the wait if that comes first;
 *   <li>where no node lets it listen, retries with the backoff, cut short by a release here.
 * </ul>
 */
final class ReleaseWait implements AcquireLoop.Pause, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReleaseWait.class);

    /**
     * How long the waiter whose turn a release named may take before the others look again: they
     * try once its waiting key is on fewer than a quorum of the nodes (it released, gave up or
     * died), or {@link NodeLine#PLACE_NANOS} after the release at the latest, in case it did not
     * hear its turn; a waiter that took the lock makes their attempt a refusal.
     */
    static final long TURN_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /**
     * How many times a waiter refused in its own turn tries again: the release reaches the last
     * nodes within an attempt or two; a refusal after that is a holder's, and the waiter waits.
     */
    static final int TURN_RETRIES = 3;

    /** The least pause of a waiter refused in its own turn before it tries again. */
    static final long MIN_RETRY_NANOS = TimeUnit.MICROSECONDS.toNanos(500);

    /** How often a waiter behind others looks whether its turn has come (in memory only). */
    static final long TURN_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final Rounds rounds;
    private final LocalLine waiters;
    private final RetryPolicy retry;
    private final long recheckNanos;
    /** How long the first wait for the release channel may take: a connection being opened. */
    private final long listenNanos;

    private final String resource;
    private LocalLine.Waiter waiter;
    private boolean listening;
    /** The releases heard before the last attempt: a different count now means one came since. */
    private long heardBefore;
    /** Whether every release was heard (enough nodes listened to) before the last attempt. */
    private boolean channelBefore;
    /** What the last attempt met. */
    private Refusal refusal = Refusal.OTHER;
    /** How many attempts in a row met a contest. */
    private int contests;
    /** When the last attempt started, and how long it took. */
    private long attemptStart;

    private long attemptNanos;
    /** After a refusal by the restart guard: how long until it lets enough votes in. */
    private long guardNanos;

    /** How many wake-ups this waiter had: how many releases it waited through. */
    private int wakes;

    /** Whether the acquire ended with the lock. */
    private boolean granted;

    /** This waiter's id in the resource's line on the nodes ({@link NodeLine}). */
    private final long id = NodeLine.newId();
    /** Whether a node took this waiter into the line: it keeps its place while it pauses. */
    private boolean inLine;
    /** When this waiter last joined the line: it joins again every {@link NodeLine#REJOIN_NANOS}. */
    private long joinedAt;
    /** When a release last named this waiter's turn; 0 if none has. */
    private long namedAt;
    /** How many times this waiter tried again in its last turn. */
    private int turnRetries;

    ReleaseWait(Rounds rounds, String resource, RetryPolicy retry, long recheckNanos, long listenNanos) {
        this.rounds = rounds;
        this.waiters = rounds.waiters;
        this.resource = resource;
        this.retry = retry;
        this.recheckNanos = recheckNanos;
        this.listenNanos = listenNanos;
        this.heardBefore = waiters.releasesHeard(resource);
        this.channelBefore = rounds.channels.heard(resource); // still subscribed from an earlier wait
        this.attemptStart = rounds.nowNanos();
    }

    /** What a refused attempt met. */
    enum Refusal {
        /** Another owner held a quorum of the nodes, and no node said yes: a release will come. */
        HOLDER,
        /**
         * Some nodes said yes and the others were held: clients that split the vote, or a holder
         * whose keys are gone from some nodes (told apart by reading the keys).
         */
        CONTEST,
        /** Too few nodes answered to tell. */
        OTHER,
        /** The restart guard kept out the votes that would have granted it: they come in with time. */
        RESTART_GUARD
    }

    /**
     * The restart guard refused the attempt, and lets enough votes in after {@code nanos}: the
     * next attempt comes then, not after a release.
     */
    void refusedByRestartGuard(long nanos) {
        refused(Refusal.RESTART_GUARD);
        guardNanos = nanos;
    }

    /** The attempt was refused, having met {@code refusal}. */
    void refused(Refusal refusal) {
        this.refusal = refusal;
        contests = refusal == Refusal.CONTEST ? contests + 1 : 0;
        attemptNanos = rounds.nowNanos() - attemptStart;
    }

    /**
     * Before the first attempt: sleeps {@code nanos}, deaf to releases, if this lock has just
     * released the resource to waiters of other clients and the wait allows it, so that they take
     * it rather than this client again.
     */
    void yieldTo(long nanos, java.time.Duration maxWait) {
        if (yields(nanos, maxWait)) {
            try {
                TimeUnit.NANOSECONDS.sleep(nanos);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new QuorumlockException("interrupted while waiting to acquire '" + resource + "'", e);
            }
            next();
        }
    }

    /** Whether the first attempt waits {@code nanos} first, as {@link #yieldTo} says. */
    static boolean yields(long nanos, java.time.Duration maxWait) {
        return nanos > 0 && maxWait.toNanos() > nanos;
    }

    /** Before the first attempt, after a yield: what was heard so far. */
    void yielded() {
        next();
    }

    /** The pause's next step: an attempt now. */
    static final long GO = -1;

    /** The pause's next step: none, the wait is over. */
    static final long STOP = -2;

    /** How a pause sleeps its next step. */
    enum Sleep {
        /** A fixed time, deaf to releases. */
        FIXED,
        /** Until a wake-up (a release, this waiter's turn) or the time is up. */
        WAKE,
        /** Until every release of the resource is heard, or the time is up. */
        HEARD
    }

    /** Where a pause is, between two of its steps. */
    private enum Phase {
        /** Behind other waiters of this lock, waiting to be first. */
        TURN,
        /** A fixed sleep, after which comes an attempt, or the end if {@link #fixedGo} is false. */
        FIXED,
        /** Waiting for the release channel to be heard on enough nodes. */
        HEARD,
        /** Waiting for a release, the recheck or the backoff. */
        PAUSE
    }

    private Phase phase;
    private Sleep sleep;
    private boolean fixedGo;
    private int failedAttempts;
    /** When the caller's wait ends, and the pause's own sleep. */
    private long end;

    private long until;
    /** The waiter whose turn the last release named, while this one defers to it, and since when. */
    private long named;

    private long namedSince;

    /**
     * Waits before the next attempt, blocking the calling thread: {@link #begin} and {@link #resume}
     * driven by sleeps on this thread.
     */
    @Override
    public boolean pauseBeforeNextAttempt(int failedAttempts, long nanosLeft, String resource) {
        try {
            long step = begin(failedAttempts, nanosLeft);
            while (step >= 0) {
                boolean woke;
                if (sleep == Sleep.FIXED) {
                    TimeUnit.NANOSECONDS.sleep(step);
                    woke = false;
                } else if (sleep == Sleep.WAKE) {
                    woke = waiter.await(step);
                } else {
                    woke = rounds.channels.awaitHeard(resource, step);
                }
                step = resume(woke);
            }
            return step == GO;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new QuorumlockException("interrupted while waiting to acquire '" + this.resource + "'", e);
        }
    }

    /**
     * Starts the pause after {@code failedAttempts} refused attempts, with {@code nanosLeft} of the
     * caller's wait: returns {@link #GO}, {@link #STOP}, or how long to sleep (as {@link #sleep()}
     * says) before calling {@link #resume}. May send requests to the nodes; never sleeps.
     */
    long begin(int failedAttempts, long nanosLeft) {
        this.failedAttempts = failedAttempts;
        long now = rounds.nowNanos();
        end = now + nanosLeft;
        if (waiter == null) {
            waiter = waiters.join(resource);
            listening = rounds.channels.listen(resource);
        }
        if (!waiter.first()) {
            phase = Phase.TURN;
            return resume(false);
        }
        if (refusal == Refusal.RESTART_GUARD) {
            // Nobody will release: the votes come in once the nodes have been up long enough.
            long pause = Math.max(guardNanos, MIN_RETRY_NANOS);
            return fixed(Math.min(pause, nanosLeft), pause <= nanosLeft);
        }
        if (namedAt != 0 && refusal != Refusal.OTHER && now - namedAt < TURN_NANOS && turnRetries++ < TURN_RETRIES) {
            // Refused in its own turn: the release had not reached every node yet, and the vote
            // was decided by the nodes that still held the key. The others leave the lock to this
            // waiter for TURN_NANOS: it tries again after one attempt's time.
            return fixed(Math.min(Math.max(attemptNanos, MIN_RETRY_NANOS), nanosLeft), true);
        }
        // a split vote: nobody will release
        if (refusal == Refusal.CONTEST && !rounds.queries.heldByOne(resource)) {
            long base = retry.minDelay().toNanos();
            return pause(QuorumMath.contestBackoffNanos(
                    attemptNanos, contests, base, retry.maxDelay().toNanos()));
        }
        if (refusal == Refusal.OTHER) {
            return pause(retry.delayAfter(failedAttempts).toNanos());
        }
        if (listening && !channelBefore) {
            phase = Phase.HEARD;
            sleep = Sleep.HEARD;
            return Math.min(nanosLeft, listenNanos);
        }
        return waitForRelease();
    }

    /** How the step {@link #begin} or {@link #resume} returned is slept. */
    Sleep sleep() {
        return sleep;
    }

    /**
     * Goes on after a sleep of the pause; {@code woke} if a wake-up ended it ({@link Sleep#WAKE}) or
     * every release is heard ({@link Sleep#HEARD}). Returns as {@link #begin} does.
     */
    long resume(boolean woke) {
        switch (phase) {
            case TURN -> {
                long left = end - rounds.nowNanos();
                if (woke || waiter.first()) {
                    return next();
                }
                if (left <= 0) {
                    return STOP;
                }
                sleep = Sleep.WAKE;
                return Math.min(TURN_CHECK_NANOS, left);
            }
            case FIXED -> {
                return fixedGo ? next() : STOP;
            }
            case HEARD -> {
                if (woke) {
                    // A release between the attempt and the subscription went unheard: try again now
                    // that every release is heard, and take the wake-up the subscription gave.
                    waiter.takeWake();
                    return next();
                }
                return waitForRelease();
            }
            default -> {
                return woke ? woken() : pauseStep(true);
            }
        }
    }

    private long fixed(long nanos, boolean go) {
        phase = Phase.FIXED;
        sleep = Sleep.FIXED;
        fixedGo = go;
        return nanos;
    }

    /** After a refusal by a holder: in line on the nodes, and a sleep until its release. */
    private long waitForRelease() {
        int heardOn = listening ? rounds.channels.heardOn(resource) : 0;
        if (heardOn > 0) {
            inLine = rounds.line.join(resource, id) || inLine; // refused by a holder: in line for the next turn
            joinedAt = rounds.nowNanos();
        }
        if (waiters.releasesHeard(resource) != heardBefore && !anothersTurn()) {
            return next(); // released after the attempt started, before this thread was woken
        }
        long pause;
        if (heardOn == 0) {
            pause = retry.delayAfter(failedAttempts).toNanos();
        } else if (wakes > 0) {
            pause = recheckNanos; // the lock changes hands: another release is coming
        } else {
            pause = Math.min(recheckNanos, rounds.queries.quorumFreeInNanos(resource));
        }
        return pause(pause);
    }

    /**
     * Sleeps {@code nanos} or until woken; if that does not fit in what is left of the wait, only a
     * wake-up is worth a retry. In the line, it joins again every {@link NodeLine#REJOIN_NANOS} to
     * keep its place, and a release that names another waiter's turn does not end the sleep: that
     * waiter tries now, and this one waits for the next release, or {@link #TURN_NANOS}.
     */
    private long pause(long nanos) {
        long now = rounds.nowNanos();
        if (log.isDebugEnabled()) {
            log.debug(
                    "'{}': refused ({}), pausing up to {} ms; releases heard on {} nodes{}{}",
                    resource,
                    refusal,
                    TimeUnit.NANOSECONDS.toMillis(Math.max(0, Math.min(nanos, end - now))),
                    listening ? rounds.channels.heardOn(resource) : 0,
                    channelBefore ? "" : " (not all before the attempt)",
                    inLine ? "; in line" : "");
        }
        phase = Phase.PAUSE;
        until = now + Math.max(0, Math.min(nanos, end - now));
        named = 0;
        namedSince = 0;
        return pauseStep(false);
    }

    /** The pause's next sleep, after one that timed out if {@code slept}. */
    private long pauseStep(boolean slept) {
        long now = rounds.nowNanos();
        if (slept) {
            if (inLine && now - joinedAt >= NodeLine.REJOIN_NANOS) {
                rounds.line.join(resource, id);
                joinedAt = rounds.nowNanos();
                now = joinedAt;
            }
            if (now >= until
                    && named != 0
                    && now + TURN_NANOS < end // room left to try once it stops deferring
                    && now - namedSince < NodeLine.PLACE_NANOS
                    && rounds.line.waits(resource, named)) {
                // The named waiter has not taken its turn yet but still waits: a busy machine
                // may keep it from trying for longer than a turn, and it goes first.
                until = Math.min(end, rounds.nowNanos() + TURN_NANOS);
            }
            now = rounds.nowNanos();
        }
        if (now >= until) {
            return now < end ? next() : STOP;
        }
        sleep = Sleep.WAKE;
        return inLine ? Math.min(until - now, Math.max(1, joinedAt + NodeLine.REJOIN_NANOS - now)) : until - now;
    }

    /** A wake-up during the pause. */
    private long woken() {
        if (anothersTurn()) {
            wakes++;
            named = rounds.channels.turn(resource);
            namedSince = rounds.nowNanos();
            until = Math.min(end, namedSince + Math.min(recheckNanos, TURN_NANOS));
            return pauseStep(false);
        }
        if (rounds.channels.turn(resource) == id) {
            namedAt = rounds.nowNanos();
            turnRetries = 0;
            return next();
        }
        // When the release woke waiters of other clients too, those that have waited through more
        // releases try first, one attempt's time apart, so that the clients are served about in the
        // order they came and do not all split the vote at once. A wake-up while not every release
        // was heard may be the subscription's own, and is not counted as a release.
        long delay = QuorumMath.turnDelayNanos(rounds.channels.competitors(resource), wakes, attemptNanos);
        wakes += channelBefore ? 1 : 0;
        long left = end - rounds.nowNanos();
        return delay > 0 && left > 0 ? fixed(Math.min(delay, left), true) : next();
    }

    /** Whether the last release heard named another waiter's turn, while this one is in line. */
    private boolean anothersTurn() {
        long turn = rounds.channels.turn(resource);
        return inLine && turn != 0 && turn != id;
    }

    /** Before the next attempt: what was heard so far. */
    private long next() {
        attemptStart = rounds.nowNanos();
        heardBefore = waiters.releasesHeard(resource);
        channelBefore = listening && rounds.channels.heard(resource);
        return GO;
    }

    /** This waiter's place in the lock's line in this process, for a driver that waits with no thread. */
    LocalLine.Waiter waiter() {
        return waiter;
    }

    /** Whether every release of the resource is heard now, for a driver that waits with no thread. */
    boolean heard() {
        return rounds.channels.heard(resource);
    }

    /**
     * The acquire ended with the lock: a wake-up is not passed on. The waiter stays first in the
     * line on the nodes until its lease's release takes it out (see {@link Rounds#release}), so
     * that the grant returns without another request. Meanwhile only a release on a node that
     * refused it, by that node's own holder, can name it, and the others then wait a turn's grace.
     */
    void granted() {
        granted = true;
        if (waiter != null) {
            waiter.granted();
        }
    }

    /** This waiter's id in the resource's line, which its lease leaves on release. */
    long id() {
        return id;
    }

    /** Leaves the line, the process's and the nodes', and stops listening, if the acquire joined them. */
    @Override
    public void close() {
        if (inLine && !granted) {
            rounds.line.leave(resource, id);
        }
        if (waiter != null) {
            waiter.close();
        }
        if (listening) {
            rounds.channels.stopListening(resource);
        }
    }
}
