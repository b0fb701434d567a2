package io.quorumlock.zookeeper;

import io.quorumlock.internal.Ticker;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * A waiting contender's pause: it sleeps until the node just ahead of its own in the queue changes
 * (released, given up, or gone with its session), until the connection state changes (the {@link
 * ConnectionWatch} wakes it: the watches of a lost session never fire), or until its deadline. It
 * is the watch set on the node ahead.
 */
final class ReleaseWait implements Watcher {
    private boolean woken;

    @Override
    public void process(WatchedEvent event) {
        wake();
    }

    synchronized void wake() {
        woken = true;
        notifyAll();
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
}
