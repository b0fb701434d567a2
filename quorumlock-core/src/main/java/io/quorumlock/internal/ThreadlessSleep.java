package io.quorumlock.internal;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A sleep that holds no thread: it ends at a wake-up (whoever wakes the waiter runs it), at its
 * timer on the {@link AsyncThreads#timer()}, or at a cancel, whichever comes first, and then runs
 * what follows once, on the {@link AsyncThreads#attempts()}. The timer is taken off the timer's
 * queue when the sleep ends sooner, so that early wake-ups leave no task behind. Running it only
 * hands work on: it is safe under a lock and on any thread.
 */
public final class ThreadlessSleep implements Runnable {

    private final Consumer<Boolean> then;
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile ScheduledFuture<?> timer;

    /** A sleep after which {@code then} runs; it ends once {@link #run} first runs. */
    public ThreadlessSleep(Runnable then) {
        this(timedOut -> then.run());
    }

    /**
     * A sleep after which {@code then} runs, told whether the sleep ran out ({@link #endIn(long)}'s
     * timer ended it) rather than ended by a wake-up.
     */
    public ThreadlessSleep(Consumer<Boolean> then) {
        this.then = then;
    }

    /** Ends the sleep, if it has not ended yet. */
    @Override
    public void run() {
        end(false);
    }

    private void end(boolean timedOut) {
        if (ended.compareAndSet(false, true)) {
            cancelTimer();
            AsyncThreads.attempts().execute(() -> then.accept(timedOut));
        }
    }

    /** Ends the sleep in {@code nanos}, unless it has ended by then: it ran out. */
    public void endIn(long nanos) {
        endIn(nanos, () -> end(true));
    }

    /**
     * Runs {@code atTimeout} (which ends the sleep, or decides not to) in {@code nanos}, unless the
     * sleep has ended by then.
     */
    public void endIn(long nanos, Runnable atTimeout) {
        timer = AsyncThreads.timer().schedule(atTimeout, Math.max(0, nanos), TimeUnit.NANOSECONDS);
        if (ended.get()) {
            cancelTimer();
        }
    }

    private void cancelTimer() {
        ScheduledFuture<?> scheduled = timer;
        if (scheduled != null) {
            scheduled.cancel(false);
        }
    }

    /**
     * The cancel of a pause made of sleeps without a thread: it ends the sleep under way, and at
     * once any that starts after it.
     */
    public static final class Cancel {
        private volatile boolean cancelled;
        private volatile ThreadlessSleep current;

        /** Whether the pause was cancelled. */
        public boolean isCancelled() {
            return cancelled;
        }

        /** Cancels the pause: the sleep under way ends now. */
        public void cancel() {
            cancelled = true;
            ThreadlessSleep sleeping = current;
            if (sleeping != null) {
                sleeping.run();
            }
        }

        /**
         * {@code sleep} has started (its wake-up hook and timer set): a cancel ends it, at once if
         * one came already.
         */
        public void started(ThreadlessSleep sleep) {
            current = sleep;
            if (cancelled) {
                sleep.run();
            }
        }
    }
}
