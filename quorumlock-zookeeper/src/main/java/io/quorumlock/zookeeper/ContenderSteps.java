package io.quorumlock.zookeeper;

import io.quorumlock.internal.AsyncThreads;
import io.quorumlock.internal.Ticker;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The two ways to take a contender's attempt through its steps: a blocking acquire sleeps through
 * each wait between two steps on its own thread; an asynchronous one holds no thread while it
 * waits, and runs its steps on the {@link AsyncThreads#attempts()}, each sending its requests and
 * waiting for their answers (a server's time, never a holder's), the next step at a wake-up of the
 * pause or at a timer.
 */
final class ContenderSteps {

    private ContenderSteps() {}

    /** An attempt in steps, between which it waits for its pause. */
    interface Steps<T> {
        /**
         * Sends the step's requests and reads their answers.
         *
         * @return the attempt's outcome, or null: wait for the {@link #pause} until {@link
         *     #wakeAt}, then step again
         */
        T step() throws Exception;

        /** What an exception of a step comes to, or throws. */
        T failed(Exception thrown);

        /** The outcome of an attempt given up before its next step. */
        T givenUp();

        /** Ends the attempt, whatever it came to: cleans up what did not become a lease. */
        void finish();

        ReleaseWait pause();

        /** When the wait after the last step ends at the latest, on the lock's ticker. */
        long wakeAt();
    }

    /** Takes {@code steps} through, waiting on this thread between two steps. */
    static <T> T await(Steps<T> steps, Ticker ticker) {
        try {
            while (true) {
                T outcome = steps.step();
                if (outcome != null) {
                    return outcome;
                }
                steps.pause().await(steps.wakeAt(), ticker);
            }
        } catch (Exception e) {
            return steps.failed(e);
        } finally {
            steps.finish();
        }
    }

    /**
     * Takes {@code steps} through with no thread between two steps; once {@code acquire} is done
     * (cancelled), the wait under way ends, and the attempt is given up.
     */
    static <T> CompletableFuture<T> withoutThread(Steps<T> steps, Ticker ticker, CompletableFuture<?> acquire) {
        CompletableFuture<T> outcome = new CompletableFuture<>();
        var driver = new Object() {
            void step() {
                T made;
                try {
                    made = acquire.isDone() ? steps.givenUp() : steps.step();
                } catch (Exception e) {
                    try {
                        made = steps.failed(e);
                    } catch (RuntimeException failure) {
                        steps.finish();
                        outcome.completeExceptionally(failure);
                        return;
                    }
                }
                if (made != null) {
                    steps.finish();
                    outcome.complete(made);
                    return;
                }
                Resume resume = new Resume(this::step);
                steps.pause().onWake(resume);
                resume.timeOut(
                        () -> {
                            if (steps.pause().unhook(resume)) {
                                resume.run();
                            }
                        },
                        steps.wakeAt() - ticker.nanos());
            }
        };
        acquire.whenComplete((result, failure) -> steps.pause().wake()); // a cancel ends the wait
        AsyncThreads.attempts().execute(driver::step);
        return outcome;
    }

    /**
     * The end of one wait: runs the next step on the {@link AsyncThreads#attempts()} once, at a
     * wake-up or at its timer, whichever comes first; the timer is then taken off the timer's
     * queue, so that early wake-ups leave no task behind.
     */
    private static final class Resume implements Runnable {
        private final Runnable next;
        private final AtomicBoolean ran = new AtomicBoolean();
        private volatile ScheduledFuture<?> timer;

        Resume(Runnable next) {
            this.next = next;
        }

        @Override
        public void run() {
            if (ran.compareAndSet(false, true)) {
                cancelTimer();
                AsyncThreads.attempts().execute(next);
            }
        }

        /** Runs {@code timeout} on the timer in {@code nanos}, unless this has run by then. */
        void timeOut(Runnable timeout, long nanos) {
            timer = AsyncThreads.timer().schedule(timeout, Math.max(0, nanos), TimeUnit.NANOSECONDS);
            if (ran.get()) {
                cancelTimer();
            }
        }

        private void cancelTimer() {
            ScheduledFuture<?> scheduled = timer;
            if (scheduled != null) {
                scheduled.cancel(false);
            }
        }
    }
}
