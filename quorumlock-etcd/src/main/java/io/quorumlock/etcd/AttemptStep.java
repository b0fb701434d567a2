package io.quorumlock.etcd;

import io.quorumlock.FencedLease;
import io.quorumlock.QuorumlockException;
import io.quorumlock.internal.AcquireLoop.Attempt;
import io.quorumlock.internal.AsyncAcquireLoop;
import io.quorumlock.internal.AsyncThreads;
import io.quorumlock.internal.ThreadlessSleep;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Where an attempt stands after its requests: its outcome, or a wait for the holders ahead of it
 * in the queue (a watch of the keys ahead, a call to etcd's lock service) and what follows the
 * wait. The attempt's requests are the same whoever waits; the wait itself either holds the
 * caller's thread ({@link #await}) or none ({@link #withoutThread}).
 */
final class AttemptStep {

    /** What follows a wait: the next step, from what the wait's future and the attempt's state say. */
    @FunctionalInterface
    interface After {
        /**
         * @param timedOut whether the wait ran out before its future completed
         */
        AttemptStep after(boolean timedOut);
    }

    private final Attempt<FencedLease> outcome;
    /** Completes once there is something to look at: a grant, a failure, the lease lost. */
    private final CompletableFuture<?> wake;
    /** How long the wait lasts at most, from when it starts. */
    private final long waitNanos;
    /** Ends the wait before its time (cancels the watch or the lock call). */
    private final Runnable giveUp;

    private final After then;

    private AttemptStep(
            Attempt<FencedLease> outcome, CompletableFuture<?> wake, long waitNanos, Runnable giveUp, After then) {
        this.outcome = outcome;
        this.wake = wake;
        this.waitNanos = waitNanos;
        this.giveUp = giveUp;
        this.then = then;
    }

    /** The attempt came to {@code outcome}. */
    static AttemptStep done(Attempt<FencedLease> outcome) {
        return new AttemptStep(Objects.requireNonNull(outcome, "outcome"), null, 0, null, null);
    }

    /**
     * The attempt waits until {@code wake} completes, {@code waitNanos} at most, then goes on with
     * {@code then}; {@code giveUp} ends the wait early, if the waiter stops waiting (interrupted,
     * given up), and {@code then} is not called.
     */
    static AttemptStep waitFor(CompletableFuture<?> wake, long waitNanos, Runnable giveUp, After then) {
        return new AttemptStep(
                null,
                Objects.requireNonNull(wake, "wake"),
                Math.max(0, waitNanos),
                Objects.requireNonNull(giveUp, "giveUp"),
                Objects.requireNonNull(then, "then"));
    }

    /**
     * Goes from this step to the attempt's outcome, waiting on the caller's thread.
     *
     * @throws QuorumlockException if the thread was interrupted (the interrupt flag stays set; the
     *     wait was given up)
     */
    Attempt<FencedLease> await(String resource) {
        AttemptStep step = this;
        while (step.outcome == null) {
            boolean timedOut = false;
            try {
                step.wake.get(step.waitNanos, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                timedOut = true;
            } catch (ExecutionException | CancellationException e) {
                // the next step tells the failures apart
            } catch (InterruptedException e) {
                step.giveUp.run();
                Thread.currentThread().interrupt();
                throw new QuorumlockException("interrupted while acquiring '" + resource + "'", e);
            }
            step = step.then.after(timedOut);
        }
        return step.outcome;
    }

    /**
     * Goes from this step to the attempt's outcome with no thread held while it waits: a wait ends
     * as its future completes, or on the {@linkplain AsyncThreads#timer() timer} when it runs out,
     * and the step after it runs on the {@linkplain AsyncThreads#attempts() attempts' threads},
     * never on the client's or the timer's. Once {@code acquire} is done (given up), a wait ends at
     * once and the attempt comes to {@code givenUp}. The returned future completes on an
     * attempt thread (or on the caller's, if no wait was left).
     */
    CompletableFuture<Attempt<FencedLease>> withoutThread(
            AsyncAcquireLoop.AcquireEnd acquire, Attempt<FencedLease> givenUp) {
        CompletableFuture<Attempt<FencedLease>> result = new CompletableFuture<>();
        var steps = new Object() {
            /** The wait under way, which the acquire's end ends. */
            private Runnable waiting;

            void next(AttemptStep step) {
                if (step.outcome != null) {
                    result.complete(step.outcome);
                    return;
                }
                ThreadlessSleep sleep = new ThreadlessSleep(timedOut -> after(step, timedOut));
                waiting = sleep;
                step.wake.whenComplete((answer, failure) -> sleep.run());
                acquire.onEnd(sleep);
                sleep.endIn(step.waitNanos);
            }

            private void after(AttemptStep step, boolean timedOut) {
                acquire.clear(waiting);
                AttemptStep next;
                try {
                    if (acquire.isDone()) {
                        step.giveUp.run();
                        next = done(givenUp);
                    } else {
                        next = step.then.after(timedOut);
                    }
                } catch (RuntimeException | Error e) {
                    result.completeExceptionally(e);
                    return;
                }
                next(next);
            }
        };
        steps.next(this);
        return result;
    }
}
