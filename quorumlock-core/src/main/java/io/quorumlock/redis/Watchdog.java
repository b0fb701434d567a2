package io.quorumlock.redis;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps leases alive while their work runs: extends each one when about a third of its TTL is
 * left, and on a failed extension marks it lost and interrupts the thread doing the work.
 */
final class Watchdog implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

    private final ScheduledThreadPoolExecutor scheduler;

    Watchdog() {
        scheduler = new ScheduledThreadPoolExecutor(1, task -> {
            Thread t = new Thread(task, "quorumlock-watchdog");
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
    }

    /** Starts watching {@code lease} for the work running on {@code worker}. */
    Watch watch(RedlockLease lease, Duration ttl, Thread worker) {
        Watch watch = new Watch(lease, ttl, worker);
        watch.scheduleNext();
        return watch;
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }

    final class Watch {
        private final RedlockLease lease;
        private final Duration ttl;
        private final Thread worker;
        private boolean running = true;
        private boolean lost;
        private ScheduledFuture<?> next;

        private Watch(RedlockLease lease, Duration ttl, Thread worker) {
            this.lease = lease;
            this.ttl = ttl;
            this.worker = worker;
        }

        private synchronized void scheduleNext() {
            if (running) {
                long delay = QuorumMath.extendAfterNanos(lease.validityNanos(), ttl.toNanos());
                next = scheduler.schedule(this::extend, delay, TimeUnit.NANOSECONDS);
            }
        }

        private void extend() {
            String failure;
            try {
                Redlock.Round round = lease.extendRound(ttl);
                if (round.held()) {
                    scheduleNext();
                    return;
                }
                failure = "extension got " + round.votes() + " of "
                        + round.outcomes().size() + " votes in time: " + round.outcomes();
            } catch (RuntimeException e) {
                failure = "extension failed: " + e;
            }
            synchronized (this) {
                if (running) {
                    log.warn("lease on '{}' lost: {}", lease.resource(), failure);
                    lease.markLost(failure);
                    lost = true;
                    running = false;
                    worker.interrupt();
                }
            }
        }

        /**
         * Stops watching. Returns true if the lease was lost, in which case the worker's interrupt
         * from the watchdog is cleared here.
         */
        synchronized boolean stop() {
            running = false;
            if (next != null) {
                next.cancel(false);
            }
            if (lost) {
                Thread.interrupted();
            }
            return lost;
        }
    }
}
