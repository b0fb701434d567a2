package io.quorumlock.internal;

/**
 * A lock that tells its clock, so that what is built on it (an election, the lock adapter) reads
 * the same one: one clock per lock.
 */
public interface Clocked {

    /** The lock's clock: every validity and deadline of the lock counts on it. */
    Ticker ticker();

    /** The clock of {@code lock}: its own if it tells it, else the system's monotonic clock. */
    static Ticker of(Object lock) {
        return lock instanceof Clocked clocked ? clocked.ticker() : Ticker.SYSTEM;
    }
}
