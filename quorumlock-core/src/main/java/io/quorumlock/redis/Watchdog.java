package io.quorumlock.redis;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps leases alive while their work runs: extends each one when about a third of its TTL is
 * left, and marks it lost when an extension fails (which interrupts the work, see {@link
 * io.quorumlock.CriticalSections}). One daemon thread per client, started on first use.
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

    /** Starts extending {@code lease} to {@code ttl} until {@link Watch#stop()}. */
    Watch watch(RedlockLease lease, Duration ttl) {
        Watch watch = new Watch(lease, ttl);
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
        private boolean running = true;
        private ScheduledFuture<?> next;

        private Watch(RedlockLease lease, Duration ttl) {
            this.lease = lease;
            this.ttl = ttl;
        }

        private synchronized void scheduleNext() {
            if (running) {
                long delay = QuorumMath.extendAfterNanos(lease.validityNanos(), ttl.toNanos());
                next = scheduler.schedule(this::extend, delay, TimeUnit.NANOSECONDS);
            }
        }

        private void extend() {
            if (lease.isReleased()) {
                return;
            }
            String failure;
            try {
                Rounds.Outcome round = lease.extendRound(ttl);
                if (round.held()) {
                    scheduleNext();
                    return;
                }
                failure = "extension got " + round.votes() + " of "
                        + round.outcomes().size() + " votes in time: " + round.outcomes();
            } catch (RuntimeException e) {
                failure = "extension failed: " + e;
            }
            if (!lease.isReleased()) {
                log.warn("lease on '{}' lost: {}", lease.resource(), failure);
                lease.markLost(failure);
            }
        }

        synchronized void stop() {
            running = false;
            if (next != null) {
                next.cancel(false);
            }
        }
    }
}
