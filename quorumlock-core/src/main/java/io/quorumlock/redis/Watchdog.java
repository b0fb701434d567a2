package io.quorumlock.redis;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps leases alive while their work runs: extends each one when about a third of its TTL is
 * left, and retries a failed extension after a short backoff as long as a retry can end with the
 * {@linkplain QuorumMath#lossNoticeNanos loss notice} of validity still left. When none can, when
 * an extension throws anything at all, or when the watchdog is closed, it marks the lease lost
 * (which interrupts the work, see {@link io.quorumlock.internal.CriticalSections}). One daemon thread per
 * client, started on first use.
 */
final class Watchdog implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

    private static final String CLOSED = "the Redlock that kept it alive was closed, so no extension will follow";
    private static final String OVER = "its validity had run out before the watchdog could extend it";

    private final ScheduledThreadPoolExecutor scheduler;
    /** The longest one extension round can wait for the nodes. */
    private final long roundNanos;
    /** The watches not yet stopped or ended, for {@link #close()}. */
    private final Set<Watch> watches = ConcurrentHashMap.newKeySet();

    private volatile boolean closed;

    Watchdog(Duration round) {
        this.roundNanos = round.toNanos();
        scheduler = new ScheduledThreadPoolExecutor(1, task -> {
            Thread t = new Thread(task, "quorumlock-watchdog");
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
    }

    /**
     * Starts extending {@code lease} to {@code ttl} until {@link Watch#stop()}: first when about a
     * third of the TTL is left of its remaining validity, at once if less is; a lease already over
     * is lost at once.
     */
    Watch watch(RedlockLease lease, Duration ttl) {
        Watch watch = new Watch(lease, ttl);
        watches.add(watch);
        long remaining = lease.remaining().toNanos();
        if (closed) {
            watch.lose(CLOSED);
        } else if (remaining == 0) {
            watch.lose(OVER);
        } else {
            watch.schedule(QuorumMath.extendAfterNanos(remaining, ttl.toNanos()));
        }
        return watch;
    }

    /** Ends every lease still kept alive as lost, then stops the thread. */
    @Override
    public void close() {
        closed = true;
        for (Watch watch : watches) {
            watch.lose(CLOSED);
        }
        scheduler.shutdownNow();
    }

    final class Watch {
        private final RedlockLease lease;
        private final Duration ttl;

        private final AtomicBoolean ended = new AtomicBoolean();
        /** Failed rounds in a row, and what the first of them got; the watchdog's thread's only. */
        private int failures;

        private String firstFailure;

        private ScheduledFuture<?> next;

        private Watch(RedlockLease lease, Duration ttl) {
            this.lease = lease;
            this.ttl = ttl;
        }

        private synchronized void schedule(long delayNanos) {
            if (ended.get()) {
                return;
            }
            try {
                next = scheduler.schedule(this::extend, delayNanos, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                lose(CLOSED); // closed while this was scheduling; close() may not have seen it
            }
        }

        private void extend() {
            String loss;
            ReentrantLock rounds = lease.rounds(); // a release waits for it: no round follows the release
            rounds.lock();
            try {
                if (ended.get() || lease.isReleased()) {
                    return;
                }
                loss = attempt();
            } catch (Throwable t) {
                // An Error too: the work must never run on unwatched past its validity.
                log.error("extension of the lease on '{}' failed", lease.resource(), t);
                loss = "extension failed: " + t;
                lease.extensionFailed(t);
            } finally {
                rounds.unlock();
            }
            if (loss != null) {
                lose(loss); // outside the round: what the loss sets off must not hold up a release
            }
        }

        /** One extension round: null if it held or a retry is scheduled, else why the lease is lost. */
        private String attempt() {
            Optional<Rounds.Outcome> round = lease.extendRound(ttl);
            if (round.isEmpty()) {
                return OVER; // shortened by a failed extend(), or this thread ran late
            }
            Rounds.Outcome outcome = round.get();
            if (outcome.held()) {
                failures = 0;
                firstFailure = null;
                schedule(QuorumMath.extendAfterNanos(lease.remaining().toNanos(), ttl.toNanos()));
                return null;
            }
            failures++;
            int nodes = outcome.outcomes().size();
            String failure = outcome.votes() >= QuorumMath.quorum(nodes)
                    ? "the extension ended after its validity had run out: " + outcome.outcomes()
                    : "extension got " + outcome.votes() + " of " + nodes + " votes in time: " + outcome.outcomes();
            if (failures == 1) {
                firstFailure = failure;
            }
            long retryIn = outcome.interrupted() || closed
                    ? -1
                    : QuorumMath.retryExtensionAfterNanos(
                            lease.remaining().toNanos(), ttl.toNanos(), roundNanos, failures);
            if (retryIn < 0) {
                return failures == 1
                        ? failure
                        : failure + " (the last of " + failures + " rounds in a row; the first: " + firstFailure + ")";
            }
            log.debug(
                    "extension of the lease on '{}' failed, retrying in {} ms: {}",
                    lease.resource(),
                    retryIn / 1_000_000,
                    failure);
            schedule(retryIn);
            return null;
        }

        /** Ends the watch and marks the lease lost, unless it was stopped or ended before. */
        void lose(String reason) {
            if (!end()) {
                return;
            }
            if (!lease.isReleased()) {
                log.warn("lease on '{}' lost: {}", lease.resource(), reason);
                lease.markLost(reason);
            }
        }

        /**
         * Stops extending: nothing is scheduled any more. A round under way goes on; the lease's
         * release waits for it.
         */
        void stop() {
            end();
        }

        /** True if this call ended the watch. */
        private boolean end() {
            if (!ended.compareAndSet(false, true)) {
                return false;
            }
            synchronized (this) {
                if (next != null) {
                    next.cancel(false);
                }
            }
            watches.remove(this);
            return true;
        }
    }
}
