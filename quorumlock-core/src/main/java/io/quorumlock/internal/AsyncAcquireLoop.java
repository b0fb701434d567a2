package io.quorumlock.internal;

import io.quorumlock.RetryPolicy;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link AcquireLoop} that holds no thread while it waits: the attempts run on the {@link
 * AsyncThreads#attempts()}, and the pauses between them, and the waits within them, end on a timer
 * or at a wake-up. For the locks of this library; applications call {@code acquireAsync}.
 */
public final class AsyncAcquireLoop {

    private static final Logger log = LoggerFactory.getLogger(AcquireLoop.class);

    private AsyncAcquireLoop() {}

    /**
     * {@link AcquireLoop#acquire(String, Duration, AcquireLoop.Pause, Ticker, LockEvents,
     * AcquireLoop.Attempts)} that holds no thread while it pauses: the attempts run one after the
     * other on the {@link AsyncThreads#attempts()},
     * the first after {@code delayNanos}, and the pauses complete when their wait is over. The
     * returned future completes as {@code acquire} returns or throws; once it is done (cancelled),
     * the loop stops before its next attempt, and gives back with {@code giveBack} a lease granted
     * after it. {@code ended} runs once the loop makes no more attempts.
     *
     * @throws IllegalArgumentException if {@code maxWait} is negative
     */
    public static <L> CompletableFuture<L> acquireAsync(
            String resource,
            Duration maxWait,
            long delayNanos,
            AsyncPause pause,
            Ticker ticker,
            LockEvents events,
            AcquireLoop.Attempts<L> attempts,
            Consumer<? super L> giveBack,
            Runnable ended) {
        Objects.requireNonNull(attempts, "attempts");
        return acquireAsyncBy(
                resource,
                maxWait,
                delayNanos,
                pause,
                ticker,
                events,
                (number, remainingNanos, acquire) ->
                        CompletableFuture.completedFuture(attempts.attempt(number, remainingNanos)),
                giveBack,
                ended);
    }

    /**
     * As {@link #acquireAsync(String, Duration, long, AsyncPause, Ticker, LockEvents,
     * AcquireLoop.Attempts, Consumer, Runnable)}, with attempts that may themselves wait without a
     * thread (in a queue of contenders): the next step of the loop runs as an attempt's future
     * completes.
     */
    public static <L> CompletableFuture<L> acquireAsyncBy(
            String resource,
            Duration maxWait,
            long delayNanos,
            AsyncPause pause,
            Ticker ticker,
            LockEvents events,
            AsyncAttempts<L> attempts,
            Consumer<? super L> giveBack,
            Runnable ended) {
        long budget = AcquireLoop.budget(maxWait);
        long start = ticker.nanos();
        CompletableFuture<L> result = new CompletableFuture<>();
        AcquireEnd acquireEnd = new AcquireEnd(result);
        Executor worker = AsyncThreads.attempts();
        var loop = new Object() {
            void attempt(int number) {
                if (result.isDone()) {
                    end();
                    return;
                }
                CompletableFuture<AcquireLoop.Attempt<L>> made;
                try {
                    made = attempts.attempt(number, Math.max(0, budget - (ticker.nanos() - start)), acquireEnd);
                } catch (RuntimeException | Error e) {
                    made = CompletableFuture.failedFuture(e);
                }
                if (made.isDone()) { // runs at once, on this thread
                    made.whenComplete((attempt, failure) -> attempted(number, attempt, failure));
                } else {
                    made.whenComplete((attempt, failure) -> worker.execute(() -> attempted(number, attempt, failure)));
                }
            }

            /** Goes on from attempt {@code number}, once made (or failed). */
            private void attempted(int number, AcquireLoop.Attempt<L> attempt, Throwable failure) {
                boolean pausing = false;
                try {
                    pausing = thenPause(number, AcquireLoop.made(resource, start, ticker, events, attempt, failure));
                } catch (RuntimeException | Error e) {
                    result.completeExceptionally(e);
                } finally {
                    if (!pausing) {
                        end();
                    }
                }
            }

            /** After attempt {@code number}: true if a pause goes on after it, which ends the loop or goes on. */
            private boolean thenPause(int number, AcquireLoop.Attempt<L> attempt) {
                if (attempt.lease().isPresent()) {
                    LateGrants.complete(result, attempt.lease().get(), giveBack, resource);
                    return false;
                }
                long waited = ticker.nanos() - start;
                if (!attempt.retryable() || waited >= budget || result.isDone()) {
                    if (!result.isDone()) { // a cancelled acquire is no refusal
                        result.completeExceptionally(
                                AcquireLoop.refused(resource, number, start, ticker, events, attempt));
                    }
                    return false;
                }
                pause.pauseBeforeNextAttempt(number, budget - waited, resource)
                        .whenComplete((go, failure) -> worker.execute(() -> paused(number, attempt, go, failure)));
                return true;
            }

            private void paused(int number, AcquireLoop.Attempt<L> attempt, Boolean go, Throwable failure) {
                if (failure == null && go && !result.isDone()) {
                    attempt(number + 1);
                    return;
                }
                try {
                    if (failure != null) {
                        result.completeExceptionally(failure);
                    } else if (!result.isDone()) { // a cancelled acquire is no refusal
                        result.completeExceptionally(
                                AcquireLoop.refused(resource, number, start, ticker, events, attempt));
                    }
                } catch (RuntimeException | Error e) {
                    result.completeExceptionally(e);
                } finally {
                    end();
                }
            }

            private void end() {
                try {
                    ended.run();
                } catch (RuntimeException e) {
                    log.debug("'{}': the end of an asynchronous acquire failed: {}", resource, e.toString());
                }
            }
        };
        AsyncThreads.timer().schedule(() -> worker.execute(() -> loop.attempt(1)), delayNanos, TimeUnit.NANOSECONDS);
        return result;
    }

    /**
     * {@link #acquireAsyncBy} at once, with {@code retry}'s backoff between two attempts ({@link
     * #onTimer}): for a lock whose attempts wait in a queue themselves, and whose backoff only
     * follows an attempt that the service refused.
     */
    public static <L> CompletableFuture<L> acquireAsyncBy(
            String resource,
            Duration maxWait,
            RetryPolicy retry,
            Ticker ticker,
            LockEvents events,
            AsyncAttempts<L> attempts,
            Consumer<? super L> giveBack) {
        return acquireAsyncBy(resource, maxWait, 0, onTimer(retry), ticker, events, attempts, giveBack, () -> {});
    }

    /**
     * {@code retry}'s backoff between two attempts, ended by a timer: no thread sleeps through it.
     * As {@link RetryPolicy#pauseBeforeNextAttempt}, it is false at once if the delay does not fit.
     */
    public static AsyncPause onTimer(RetryPolicy retry) {
        Objects.requireNonNull(retry, "retry");
        return (failedAttempts, nanosLeft, resource) -> {
            long delay = retry.delayAfter(failedAttempts).toNanos();
            if (delay > nanosLeft) {
                return CompletableFuture.completedFuture(false);
            }
            CompletableFuture<Boolean> over = new CompletableFuture<>();
            AsyncThreads.timer().schedule(() -> over.complete(true), delay, TimeUnit.NANOSECONDS);
            return over;
        };
    }

    /** A pause between two attempts that holds no thread while it waits. */
    @FunctionalInterface
    public interface AsyncPause {
        /**
         * Completes, once the pause is over, with what {@link
         * AcquireLoop.Pause#pauseBeforeNextAttempt} returns: true to make the next attempt, false if
         * the pause does not fit in {@code nanosLeft}.
         */
        CompletableFuture<Boolean> pauseBeforeNextAttempt(int failedAttempts, long nanosLeft, String resource);
    }

    /** One attempt to acquire that may wait without a thread: in a queue of contenders, for a holder. */
    @FunctionalInterface
    public interface AsyncAttempts<L> {
        /**
         * Makes attempt {@code number} (the first is 1), as {@link AcquireLoop.Attempts#attempt};
         * its future completes with what it came to, or exceptionally with what would end the loop.
         *
         * @param acquire the acquire's end: once it has ended (cancelled), the attempt may give up
         *     its wait, and a lease it is granted after that is given back
         */
        CompletableFuture<AcquireLoop.Attempt<L>> attempt(int number, long remainingNanos, AcquireEnd acquire);
    }

    /**
     * The end of an asynchronous acquire, as its attempts see it: whether it has ended (granted,
     * refused, or given up by its caller), and one hook that its end runs, which each wait of its
     * attempts sets in turn. However many attempts it makes, the acquire's future holds one
     * callback, and a hook only until the next replaces it.
     */
    public static final class AcquireEnd {
        private final CompletableFuture<?> acquire;
        private final AtomicReference<Runnable> hook = new AtomicReference<>();

        private AcquireEnd(CompletableFuture<?> acquire) {
            this.acquire = acquire;
            acquire.whenComplete((result, failure) -> runHook());
        }

        /** Whether the acquire has ended: its attempts stop, and give back a lease. */
        public boolean isDone() {
            return acquire.isDone();
        }

        /** Runs {@code then} when the acquire ends, at once if it has; in place of the hook set before. */
        public void onEnd(Runnable then) {
            hook.set(then);
            if (acquire.isDone()) {
                runHook();
            }
        }

        /** Takes {@code then} back, if it is still the hook: the wait it ends is over. */
        public void clear(Runnable then) {
            hook.compareAndSet(then, null);
        }

        private void runHook() {
            Runnable then = hook.getAndSet(null);
            if (then != null) {
                then.run();
            }
        }
    }
}
