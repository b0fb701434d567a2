package io.quorumlock.zookeeper;

import io.quorumlock.internal.AsyncAcquireLoop;
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
    static <T> CompletableFuture<T> withoutThread(Steps<T> steps, Ticker ticker, AsyncAcquireLoop.AcquireEnd acquire) {
        CompletableFuture<T> outcome = new CompletableFuture<>();
        Runnable wake = () -> steps.pause().wake(); // the acquire's end ends the wait
        var driver = new Object() {
            void step() {
                T made;
                try {
                    made = acquire.isDone() ? steps.givenUp() : steps.step();
                    if (made == null) {
                        sleep();
                        return;
                    }
                } catch (Exception e) {
                    try {
                        made = steps.failed(e);
                    } catch (RuntimeException | Error failure) {
                        end(failure);
                        return;
                    }
                } catch (Error e) {
                    end(e);
                    return;
                }
                acquire.clear(wake);
                steps.finish();
                outcome.complete(made);
            }

            private void sleep() {
                ThreadlessSleep sleep = new ThreadlessSleep(this::step);
                steps.pause().onWake(sleep);
                sleep.endIn(steps.wakeAt() - ticker.nanos(), () -> {
                    if (steps.pause().unhook(sleep)) { // else a wake-up ended it
                        sleep.run();
                    }
                });
            }

            private void end(Throwable failure) {
                try {
                    acquire.clear(wake);
                    steps.finish();
                } finally {
                    outcome.completeExceptionally(failure);
                }
            }
        };
        acquire.onEnd(wake);
        AsyncThreads.attempts().execute(driver::step);
        return outcome;
    }
}
