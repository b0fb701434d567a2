package io.quorumlock.zookeeper;

import io.quorumlock.internal.AsyncThreads;
import io.quorumlock.internal.ThreadlessSleep;
import io.quorumlock.internal.Ticker;
import java.util.concurrent.CompletableFuture;

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
                ThreadlessSleep sleep = new ThreadlessSleep(this::step);
                steps.pause().onWake(sleep);
                sleep.endIn(steps.wakeAt() - ticker.nanos(), () -> {
                    if (steps.pause().unhook(sleep)) { // else a wake-up ended it
                        sleep.run();
                    }
                });
            }
        };
        acquire.whenComplete((result, failure) -> steps.pause().wake()); // a cancel ends the wait
        AsyncThreads.attempts().execute(driver::step);
        return outcome;
    }
}
