package io.quorumlock.internal;

/**
 * The releases under way on a lock, which its {@code close()} lets finish: a release begun before
 * the close goes out while the lock's connections are still open, so that its keys are freed at
 * once rather than left to their TTL. A release begun after the close is refused.
 */
public final class ReleaseGate {

    private final Ticker ticker;
    private int underWay;
    private boolean closed;

    public ReleaseGate(Ticker ticker) {
        this.ticker = ticker;
    }

    /** Counts a release in; false, with nothing counted, once the lock is closing. */
    public synchronized boolean enter() {
        if (closed) {
            return false;
        }
        underWay++;
        return true;
    }

    /** Counts out a release that {@link #enter() entered}; wakes {@link #close} only once it waits. */
    public synchronized void exit() {
        if (--underWay == 0 && closed) {
            notifyAll(); // a call into the VM: not made on every release
        }
    }

    /**
     * Refuses the releases from now on, and waits up to {@code nanos} (the lock's ticker) for those
     * under way; an interrupt ends the wait, and stays set.
     *
     * @return how many releases were still under way when the wait ended: 0 unless it ran out
     */
    public synchronized int close(long nanos) {
        closed = true;
        long end = ticker.nanos() + nanos;
        boolean interrupted = false;
        while (underWay > 0) {
            long left = end - ticker.nanos();
            if (left <= 0) {
                break;
            }
            try {
                wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                interrupted = true;
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return underWay;
    }
}
