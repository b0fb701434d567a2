package io.quorumlock.redis;

import io.quorumlock.internal.AsyncAcquireLoop;
import io.quorumlock.internal.AsyncThreads;
import io.quorumlock.internal.ThreadlessSleep;
import java.util.concurrent.CompletableFuture;

/**
 * The pauses of a {@link ReleaseWait}, holding no thread while they sleep: each step runs on a
 * thread of the {@link AsyncThreads#attempts()}, and a sleep ends on the {@link
 * AsyncThreads#timer()} or at a wake-up of the waiter (a release, its turn, the release channel
 * heard), which hands the next step on rather than running it. The one step it takes apart from the
 * blocking pause: it never sleeps to wait for the release channel to be heard, and lets the
 * subscription's wake-up end the pause that follows.
 */
final class ThreadlessPause implements AsyncAcquireLoop.AsyncPause {

    private final ReleaseWait wait;
    /** The acquire given up: the sleep under way ends, and the pause at its next step. */
    private final ThreadlessSleep.Cancel cancel = new ThreadlessSleep.Cancel();

    ThreadlessPause(ReleaseWait wait) {
        this.wait = wait;
    }

    @Override
    public CompletableFuture<Boolean> pauseBeforeNextAttempt(int failedAttempts, long nanosLeft, String resource) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        if (cancel.isCancelled()) {
            done.complete(false);
        } else {
            step(wait.begin(failedAttempts, nanosLeft), done);
        }
        return done;
    }

    /** The acquire is given up: a pause ends now, refused, and none begins. */
    void cancel() {
        cancel.cancel();
    }

    private void step(long next, CompletableFuture<Boolean> done) {
        while (next >= 0 && wait.sleep() == ReleaseWait.Sleep.HEARD && !cancel.isCancelled()) {
            // No sleep until the release channel is heard: the subscription's wake-up, once enough
            // nodes listen, ends the pause that follows, and a channel never heard (a node that
            // refuses it) leaves the pause to the holder's release or the recheck.
            next = wait.resume(wait.heard());
        }
        if (next < 0 || cancel.isCancelled()) {
            done.complete(next == ReleaseWait.GO && !cancel.isCancelled());
            return;
        }
        boolean wakeable = wait.sleep() == ReleaseWait.Sleep.WAKE;
        ThreadlessSleep sleeping = new ThreadlessSleep(() -> {
            if (cancel.isCancelled()) {
                done.complete(false); // a wake-up not taken, passed on when the waiter leaves
                return;
            }
            try {
                step(wait.resume(wakeable && wait.waiter().takeWake()), done);
            } catch (RuntimeException | Error e) {
                done.completeExceptionally(e);
            }
        });
        // The hook before the timer: a later step, which the timer may start, registers its own after this one.
        if (wakeable) {
            wait.waiter().onWake(sleeping); // the hook runs under the line's lock: it only hands on
        }
        sleeping.endIn(next);
        cancel.started(sleeping); // a cancel that came meanwhile ends it at once
    }
}
