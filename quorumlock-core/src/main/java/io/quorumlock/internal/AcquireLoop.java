package io.quorumlock.internal;

import io.quorumlock.DistributedLock;
import io.quorumlock.LockListener;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.ServerAnswer;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acquire loop that every lock of this library shares: attempts until one is granted, one is
 * refused for good, or the wait has passed, with the {@link RetryPolicy}'s backoff in between,
 * and the evidence of the last attempt in the {@link LockUnavailableException}. What an attempt
 * is (a vote round, a place in a queue, a call to a consensus service) stays with each lock. The
 * same loop without a thread is {@link AsyncAcquireLoop}.
 *
 * <p>For the locks of this library; applications call {@link DistributedLock#acquire} instead.
 */
public final class AcquireLoop {

    private static final Logger log = LoggerFactory.getLogger(AcquireLoop.class);

    /** The longest wait the loop keeps count of, about 73 years: a longer one is waited this long. */
    private static final long LONGEST_WAIT_NANOS = Long.MAX_VALUE / 4;

    private static final Duration LEAST_OVERRUN = Duration.ofMillis(100);

    private static final LockEvents NO_EVENTS = LockEvents.of("none", LockListener.NONE);

    private AcquireLoop() {}

    /**
     * How long past its {@code maxWait} an acquire on one consensus service (ZooKeeper, etcd) may
     * return, whatever the service does: the larger of 100 ms and a twentieth of {@code
     * requestTimeout}, the time one request to the service may take (250 ms for 5 s). It pays for
     * the round trips that end an attempt whose wait ran out (the read that names the holder, the
     * checks of a grant that came at the last moment), which a healthy service answers in
     * milliseconds; a service configured with a long request timeout is a slow one, whose round
     * trips take longer.
     */
    public static Duration overrun(Duration requestTimeout) {
        Duration twentieth = requestTimeout.dividedBy(20);
        return twentieth.compareTo(LEAST_OVERRUN) > 0 ? twentieth : LEAST_OVERRUN;
    }

    /**
     * Makes attempts to lock {@code resource} until one is granted, one is refused for good, or
     * {@code maxWait} has passed on {@code ticker}. After a refusal that a retry may overcome,
     * pauses as {@code retry} says if the pause fits in what is left of the wait, then tries again.
     * A {@code maxWait} of zero makes exactly one attempt.
     *
     * @param ticker the lock's monotonic clock
     * @param attempts makes one attempt; whatever it throws ends the loop at once
     * @return the lease of the attempt that was granted
     * @throws LockUnavailableException if no attempt was granted in time, with the evidence of the last one
     * @throws IllegalArgumentException if {@code maxWait} is negative
     * @throws QuorumlockException if the thread was interrupted during a pause (the flag stays set)
     */
    public static <L> L acquire(
            String resource, Duration maxWait, RetryPolicy retry, Ticker ticker, Attempts<L> attempts) {
        return acquire(resource, maxWait, retry, ticker, NO_EVENTS, attempts);
    }

    /**
     * As {@link #acquire(String, Duration, RetryPolicy, Ticker, Attempts)}, and tells {@code
     * events} how it ended: acquired, busy, unavailable, or an error (whatever an attempt threw).
     */
    public static <L> L acquire(
            String resource,
            Duration maxWait,
            RetryPolicy retry,
            Ticker ticker,
            LockEvents events,
            Attempts<L> attempts) {
        Objects.requireNonNull(retry, "retry");
        return acquire(resource, maxWait, (Pause) retry::pauseBeforeNextAttempt, ticker, events, attempts);
    }

    /**
     * As {@link #acquire(String, Duration, RetryPolicy, Ticker, LockEvents, Attempts)}, with a
     * {@code pause} of the lock's own between two attempts: one that a release can end early.
     */
    public static <L> L acquire(
            String resource, Duration maxWait, Pause pause, Ticker ticker, LockEvents events, Attempts<L> attempts) {
        long budget = budget(maxWait);
        long start = ticker.nanos();
        for (int number = 1; ; number++) {
            Attempt<L> attempt = attempt(resource, number, budget, start, ticker, events, attempts);
            if (attempt.lease != null) {
                return attempt.lease;
            }
            long waited = ticker.nanos() - start;
            if (!attempt.retryable
                    || waited >= budget
                    || !pause.pauseBeforeNextAttempt(number, budget - waited, resource)) {
                throw refused(resource, number, start, ticker, events, attempt);
            }
        }
    }

    /** The loop's budget in nanoseconds: {@code maxWait}, or {@link #LONGEST_WAIT_NANOS} at most. */
    static long budget(Duration maxWait) {
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, was " + maxWait.toMillis() + " ms");
        }
        return maxWait.compareTo(Duration.ofNanos(LONGEST_WAIT_NANOS)) > 0 ? LONGEST_WAIT_NANOS : maxWait.toNanos();
    }

    /** Makes attempt {@code number}, and tells {@code events} of a grant or of what it threw. */
    private static <L> Attempt<L> attempt(
            String resource,
            int number,
            long budget,
            long start,
            Ticker ticker,
            LockEvents events,
            Attempts<L> attempts) {
        long remaining = Math.max(0, budget - (ticker.nanos() - start));
        Attempt<L> attempt;
        try {
            attempt = attempts.attempt(number, remaining);
        } catch (RuntimeException e) {
            if (events.on()) {
                events.error(resource, ticker.nanos() - start, e);
            }
            throw e;
        }
        return made(resource, start, ticker, events, attempt, null);
    }

    /**
     * Tells {@code events} what an attempt came to: a grant, or what it threw ({@code failure}, a
     * future's wrapping taken off), which is thrown on.
     */
    static <L> Attempt<L> made(
            String resource, long start, Ticker ticker, LockEvents events, Attempt<L> attempt, Throwable failure) {
        if (failure != null) {
            Throwable cause =
                    failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            if (cause instanceof RuntimeException e) {
                if (events.on()) {
                    events.error(resource, ticker.nanos() - start, e);
                }
                throw e;
            }
            if (cause instanceof Error e) {
                throw e;
            }
            throw new QuorumlockException("could not lock '" + resource + "': " + cause, cause);
        }
        if (attempt.lease != null && events.on()) {
            events.acquired(resource, ticker.nanos() - start, attempt.votes, attempt.nodes);
        }
        return attempt;
    }

    /** The loop gave up after {@code attempts}, the last refused as {@code last}: tells {@code events}. */
    static LockUnavailableException refused(
            String resource, int attempts, long start, Ticker ticker, LockEvents events, Attempt<?> last) {
        long waited = ticker.nanos() - start;
        if (events.on()) {
            events.refused(resource, waited, last.busy);
        }
        return last.unavailable(resource, Duration.ofNanos(waited), attempts);
    }

    /**
     * Makes a single attempt outside the loop (a {@code tryAcquire}) and tells {@code events} what
     * it came to, as {@link #acquire} does.
     *
     * @return the lease, or empty if another owner holds the lock
     * @throws LockUnavailableException if the attempt was refused for another reason than a holder
     *     (the service could not be reached, did not answer in time, or could not decide), with the
     *     evidence of the attempt
     */
    public static <L> Optional<L> once(
            String resource, Ticker ticker, LockEvents events, Supplier<Attempt<L>> attempts) {
        long start = ticker.nanos();
        Attempt<L> attempt;
        try {
            attempt = attempts.get();
        } catch (RuntimeException e) {
            if (events.on()) {
                events.error(resource, ticker.nanos() - start, e);
            }
            throw e;
        }
        if (attempt.lease != null) {
            if (events.on()) {
                events.acquired(resource, ticker.nanos() - start, attempt.votes, attempt.nodes);
            }
            return Optional.of(attempt.lease);
        }
        long took = ticker.nanos() - start;
        if (events.on()) {
            events.refused(resource, took, attempt.busy);
        }
        if (!attempt.busy) {
            throw attempt.unavailable(resource, Duration.ofNanos(took), 1);
        }
        return Optional.empty();
    }

    /** The pause between two attempts. */
    @FunctionalInterface
    public interface Pause {
        /**
         * Waits before the next attempt, after {@code failedAttempts} failed ones, if the wait fits
         * in the {@code nanosLeft} of the caller's wait; returns false, without waiting, if it does
         * not.
         *
         * @throws QuorumlockException if the thread is interrupted while waiting (the flag stays set)
         */
        boolean pauseBeforeNextAttempt(int failedAttempts, long nanosLeft, String resource);
    }

    /** One attempt to acquire, made by a lock. */
    @FunctionalInterface
    public interface Attempts<L> {
        /**
         * Makes attempt {@code number} (the first is 1).
         *
         * @param remainingNanos what is left of the wait when the attempt starts, zero or more: how
         *     long the attempt may wait inside (for a connection, for the holders ahead of it)
         */
        Attempt<L> attempt(int number, long remainingNanos);
    }

    /** What one attempt came to: the lease, or a refusal with its evidence. */
    public static final class Attempt<L> {
        private final L lease;
        private final boolean retryable;
        /** A refusal because another owner holds the lock. */
        private final boolean busy;
        /** Of a grant: the yes votes, of how many nodes. */
        private final int votes;

        private final int nodes;
        /** The exception for a refusal, with its evidence: made only when the loop gives up. */
        private final Refusal refusal;
        /** What the attempt came to, for debug lines. */
        private final String description;

        private Attempt(
                L lease, boolean retryable, boolean busy, int votes, int nodes, Refusal refusal, String description) {
            this.lease = lease;
            this.retryable = retryable;
            this.busy = busy;
            this.votes = votes;
            this.nodes = nodes;
            this.refusal = refusal;
            this.description = description;
        }

        /** The one authority that grants the lock (a consensus service) granted {@code lease}. */
        public static <L> Attempt<L> granted(L lease) {
            return granted(lease, 1, 1);
        }

        /** The attempt was granted {@code lease} by {@code votes} yes votes of {@code nodes}. */
        public static <L> Attempt<L> granted(L lease, int votes, int nodes) {
            return new Attempt<>(Objects.requireNonNull(lease, "lease"), false, false, votes, nodes, null, null);
        }

        /**
         * A vote refused the attempt: {@code votes} yes votes of the {@code quorum} needed, a retry
         * may find the votes free. The answers of every node, for the evidence, are asked for only
         * if this is the last attempt.
         */
        public static <L> Attempt<L> outvoted(int votes, int quorum, Supplier<List<ServerAnswer>> answers) {
            return outvoted(votes, quorum, false, answers);
        }

        /**
         * As {@link #outvoted(int, int, Supplier)}; {@code busy} if the votes were refused because
         * another owner holds the lock, rather than for nodes that could not vote.
         */
        public static <L> Attempt<L> outvoted(
                int votes, int quorum, boolean busy, Supplier<List<ServerAnswer>> answers) {
            return outvoted(votes, quorum, busy, answers, Optional.empty());
        }

        /**
         * As {@link #outvoted(int, int, boolean, Supplier)}; {@code restartGuard}, if present, says
         * that the restart guard refused the votes, and for how long it keeps them out.
         */
        public static <L> Attempt<L> outvoted(
                int votes,
                int quorum,
                boolean busy,
                Supplier<List<ServerAnswer>> answers,
                Optional<Duration> restartGuard) {
            Objects.requireNonNull(answers, "answers");
            Objects.requireNonNull(restartGuard, "restartGuard");
            return new Attempt<>(
                    null,
                    true,
                    busy,
                    0,
                    0,
                    (resource, waited, attempts) -> new LockUnavailableException(
                            resource, waited, attempts, votes, quorum, answers.get(), restartGuard),
                    "refused: " + votes + " yes vote" + (votes == 1 ? "" : "s") + ", " + quorum + " needed");
        }

        /**
         * The one authority that grants the lock (a consensus service, which counts no votes) held
         * the lock for {@code holder}, named as the service knows it, with what else it said of it:
         * final, since the attempt waited in the holder's queue for what was left of the wait.
         */
        public static <L> Attempt<L> heldBy(String holder, ServerAnswer answer) {
            return held(holder, answer, false);
        }

        /**
         * The one authority that grants the lock (a database, which keeps no queue of waiters) said
         * {@code holder} holds it, with what else it said of it: a retry may find it free.
         */
        public static <L> Attempt<L> busy(String holder, ServerAnswer answer) {
            return held(holder, answer, true);
        }

        private static <L> Attempt<L> held(String holder, ServerAnswer answer, boolean retryable) {
            Objects.requireNonNull(holder, "holder");
            Objects.requireNonNull(answer, "answer");
            return new Attempt<>(
                    null,
                    retryable,
                    true,
                    0,
                    0,
                    (resource, waited, attempts) ->
                            new LockUnavailableException(resource, waited, attempts, answer, Optional.of(holder)),
                    "held by " + holder + " on " + answer.server());
        }

        /**
         * The one authority that grants the lock did not, for another reason than a holder (it
         * could not be reached, it failed to answer); a {@code retryable} refusal is tried again.
         */
        public static <L> Attempt<L> refused(ServerAnswer answer, boolean retryable) {
            Objects.requireNonNull(answer, "answer");
            return new Attempt<>(
                    null,
                    retryable,
                    false,
                    0,
                    0,
                    (resource, waited, attempts) ->
                            new LockUnavailableException(resource, waited, attempts, answer, Optional.empty()),
                    (retryable ? "refused, to retry: " : "refused: ") + answer);
        }

        /** The lease, if the attempt was granted. */
        /** Whether another attempt may overcome this refusal. */
        boolean retryable() {
            return retryable;
        }

        public Optional<L> lease() {
            return Optional.ofNullable(lease);
        }

        @Override
        public String toString() {
            return lease != null ? "granted: " + lease : description; // a grant's text only when asked
        }

        private LockUnavailableException unavailable(String resource, Duration waited, int attempts) {
            return refusal.unavailable(resource, waited, attempts);
        }
    }

    @FunctionalInterface
    private interface Refusal {
        LockUnavailableException unavailable(String resource, Duration waited, int attempts);
    }
}
