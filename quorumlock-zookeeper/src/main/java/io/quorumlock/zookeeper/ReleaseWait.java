package io.quorumlock.zookeeper;

import io.quorumlock.internal.Ticker;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * A waiting contender's pause: it ends when the node just ahead of its own in the queue changes
 * (released, given up, or gone with its session), when the connection state changes (the {@link
 * ConnectionWatch} wakes it: the watches of a lost session never fire), or at its deadline. It is
 * the watch set on the node ahead. A wake-up that comes while nobody waits is kept for the next
 * wait. A blocking attempt sleeps in {@link #await}; one without a thread leaves a hook ({@link
 * #onWake}) that the wake-up runs.
 */
final class ReleaseWait implements Watcher {
    private boolean woken;
    /** What the next wake-up runs, for a wait without a thread; null if none. */
    private Runnable hook;

    @Override
    public void process(WatchedEvent event) {
        wake();
    }

    void wake() {
        Runnable then;
        synchronized (this) {
            then = hook;
            hook = null;
            woken = then == null;
            notifyAll();
        }
        if (then != null) {
            then.run();
        }
    }

    synchronized void await(long deadline, Ticker ticker) throws InterruptedException {
        while (!woken) {
            long left = deadline - ticker.nanos();
            if (left <= 0) {
                return;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        woken = false;
    }

    /**
     * Runs {@code then} once, at the next wake-up: at once if one came since the last wait. Until
     * it runs, {@link #unhook} can take it back.
     */
    void onWake(Runnable then) {
        synchronized (this) {
            if (!woken) {
                hook = then;
                return;
            }
            woken = false;
        }
        then.run();
    }

    /** Takes back {@code then}, left by {@link #onWake}: true if no wake-up ran it, nor will. */
    synchronized boolean unhook(Runnable then) {
        if (hook != then) {
            return false;
        }
        hook = null;
        return true;
    }
}
