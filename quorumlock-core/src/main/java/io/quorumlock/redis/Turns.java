package io.quorumlock.redis;

import io.quorumlock.QuorumlockException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.spi.AcquireLoop;
import io.quorumlock.spi.Ticker;
import io.quorumlock.spi.Waiters;
import java.util.concurrent.TimeUnit;

/**
 * The pauses of one {@link Redlock#acquire} between its attempts: the threads of one lock that
 * wait for one resource take turns, in the order they came. The first in line tries again after
 * the backoff, or at once when a lease of this lock on the resource is released. The others send
 * nothing: they wait for their turn, looking every {@link #TURN_CHECK_NANOS} whether it has come,
 * and try as soon as it has. So one thread per resource and client polls the nodes, and a release
 * in this process hands the lock to the next waiter of this process without a backoff.
 */
final class Turns implements AcquireLoop.Pause, AutoCloseable {

    /** How often a waiter behind others looks whether its turn has come (in memory only). */
    static final long TURN_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final Waiters waiters;
    private final RetryPolicy retry;
    private final Ticker ticker;
    private Waiters.Waiter waiter;

    Turns(Waiters waiters, RetryPolicy retry, Ticker ticker) {
        this.waiters = waiters;
        this.retry = retry;
        this.ticker = ticker;
    }

    @Override
    public boolean pauseBeforeNextAttempt(int failedAttempts, long nanosLeft, String resource) {
        if (waiter == null) {
            waiter = waiters.join(resource);
        }
        try {
            if (waiter.first()) {
                long delay = retry.delayAfter(failedAttempts).toNanos();
                if (delay > nanosLeft) {
                    return waiter.await(nanosLeft); // no retry fits: only a release here is worth one
                }
                waiter.await(delay); // a release of this lock ends it early
                return true;
            }
            long end = ticker.nanos() + nanosLeft;
            while (true) {
                long left = end - ticker.nanos();
                if (left <= 0) {
                    return false;
                }
                if (waiter.await(Math.min(TURN_CHECK_NANOS, left)) || waiter.first()) {
                    return true;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new QuorumlockException("interrupted while waiting to acquire '" + resource + "'", e);
        }
    }

    /** The acquire ended with the lock: a wake-up is not passed on. */
    void granted() {
        if (waiter != null) {
            waiter.granted();
        }
    }

    /** Leaves the line, if the acquire joined it. */
    @Override
    public void close() {
        if (waiter != null) {
            waiter.close();
        }
    }
}
