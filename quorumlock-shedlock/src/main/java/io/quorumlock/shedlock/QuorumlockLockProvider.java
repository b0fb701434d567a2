package io.quorumlock.shedlock;

import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.Lease;
import io.quorumlock.QuorumlockException;
import java.time.Duration;
import java.util.Deque;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock {@link ExtensibleLockProvider} over any quorumlock lock: {@code new
 * QuorumlockLockProvider(redlock)}, or over a {@code ZooKeeperLock} or {@code EtcdLock} for
 * fenced leases. The lock is not closed by this provider: its owner closes it.
 *
 * <ul>
 *   <li>{@link #lock} makes one attempt ({@link DistributedLock#tryAcquire}) on the lock's name
 *       with a TTL of {@code lockAtMostFor}: held elsewhere, the task is skipped. So is it when
 *       the servers cannot grant it (no quorum, unreachable, refused): a WARN names the lock, and
 *       the scheduler thread goes on to the next run.
 *   <li>{@link SimpleLock#unlock()} releases the lease once {@code lockAtLeastFor} has passed since
 *       {@code lock} was called. Before that, a TTL lease (Redlock) is extended to what is left of
 *       {@code lockAtLeastFor}, so that it runs out by itself at that moment, even if this process
 *       dies; a fenced lease (ZooKeeper, etcd), which lasts as long as its session, is released by
 *       this provider's timer thread when {@code lockAtLeastFor} is over (and, if the process dies
 *       first, by the server when the session ends).
 *   <li>{@link SimpleLock#extend} extends the lease to the new {@code lockAtMostFor}. If it cannot
 *       (the lease was lost, no quorum in time), the lease is released and the result is empty.
 *       Either way the old lock must not be used again.
 * </ul>
 *
 * <p>The running task reaches its lease through {@link #currentLease()} and, on a fenced backend,
 * its fencing token through {@link #currentFencingToken()}: ShedLock runs the task on the thread
 * that called {@code lock}, and unlocking clears it.
 */
public final class QuorumlockLockProvider implements ExtensibleLockProvider, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(QuorumlockLockProvider.class);

    /** The leases the current thread holds through any provider, the innermost last. */
    private static final ThreadLocal<Deque<Lease>> HELD = new ThreadLocal<>();

    private final DistributedLock<? extends Lease> lock;
    /** Leases the timer releases when their lockAtLeastFor is over, for {@link #close()}. */
    private final Set<Lease> kept = ConcurrentHashMap.newKeySet();

    private final ScheduledThreadPoolExecutor timer;

    /**
     * A provider that takes its locks from {@code lock}.
     *
     * @throws NullPointerException if {@code lock} is null
     */
    public QuorumlockLockProvider(DistributedLock<? extends Lease> lock) {
        this.lock = Objects.requireNonNull(lock, "lock");
        this.timer = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "quorumlock-shedlock-release");
            thread.setDaemon(true);
            return thread;
        });
        // The thread lives only while a release is pending: none at all over Redlock.
        timer.setKeepAliveTime(1, TimeUnit.SECONDS);
        timer.allowCoreThreadTimeOut(true);
        timer.setRemoveOnCancelPolicy(true);
    }

    /**
     * The lease of the innermost ShedLock lock the current thread holds through a {@code
     * QuorumlockLockProvider}, or empty outside a locked task. It may have been lost meanwhile:
     * {@link Lease#isValid()} tells.
     */
    public static Optional<Lease> currentLease() {
        Deque<Lease> held = HELD.get();
        return held == null ? Optional.empty() : Optional.ofNullable(held.peekLast());
    }

    /**
     * The fencing token of {@link #currentLease()}, if it is a {@link FencedLease} (ZooKeeper,
     * etcd): hand it to the storage with every write of the task. Empty outside a locked task and
     * over Redlock, whose leases have no token.
     */
    public static OptionalLong currentFencingToken() {
        return currentLease()
                .filter(FencedLease.class::isInstance)
                .map(lease -> OptionalLong.of(((FencedLease) lease).fencingToken()))
                .orElseGet(OptionalLong::empty);
    }

    /**
     * One attempt to lock {@code configuration.getName()} for {@code lockAtMostFor}.
     *
     * @return the lock, or empty if it is held elsewhere or the servers could not grant it
     * @throws IllegalArgumentException if the lock rejects the name or {@code lockAtMostFor}
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        long calledAt = System.nanoTime();
        String name = configuration.getName();
        Optional<? extends Lease> lease;
        try {
            lease = lock.tryAcquire(name, configuration.getLockAtMostFor());
        } catch (IllegalArgumentException e) {
            throw rejected(configuration, e);
        } catch (QuorumlockException e) {
            log.warn("ShedLock lock '{}' could not be taken, this run is skipped: {}", name, e.getMessage());
            return Optional.empty();
        }
        if (lease.isEmpty()) {
            return Optional.empty();
        }
        Deque<Lease> held = HELD.get();
        if (held == null) {
            held = new ConcurrentLinkedDeque<>();
            HELD.set(held);
        }
        held.addLast(lease.get());
        return Optional.of(new QuorumlockLock(configuration, lease.get(), calledAt, held));
    }

    /**
     * Releases at once the fenced leases still kept for their {@code lockAtLeastFor} and stops
     * the timer thread. Closing the lock would end them anyway (the session ends); Redlock leases
     * kept for {@code lockAtLeastFor} run out by themselves.
     */
    @Override
    public void close() {
        timer.shutdownNow();
        for (Lease lease : kept) {
            if (kept.remove(lease)) {
                release(lease);
            }
        }
    }

    private static IllegalArgumentException rejected(LockConfiguration configuration, IllegalArgumentException e) {
        return new IllegalArgumentException(
                "@SchedulerLock(name = \"" + configuration.getName() + "\", lockAtMostFor = \""
                        + configuration.getLockAtMostFor() + "\") is not usable with this lock: " + e.getMessage()
                        + ". Fix the name or lockAtMostFor (or the provider's defaultLockAtMostFor)",
                e);
    }

    private static void release(Lease lease) {
        try {
            lease.release();
        } catch (RuntimeException e) {
            log.warn("ShedLock lock '{}' could not be released: {}", lease.resource(), e.getMessage());
        }
    }

    private final class QuorumlockLock extends AbstractSimpleLock {
        private final Lease lease;
        /** When {@code lock} (or {@code extend}) was called: lockAtLeastFor counts from here. */
        private final long lockedAt;
        /** The leases of the thread that took the lock. */
        private final Deque<Lease> held;

        QuorumlockLock(LockConfiguration configuration, Lease lease, long lockedAt, Deque<Lease> held) {
            super(configuration);
            this.lease = lease;
            this.lockedAt = lockedAt;
            this.held = held;
        }

        @Override
        protected void doUnlock() {
            forget();
            Duration left = lockConfiguration.getLockAtLeastFor().minusNanos(System.nanoTime() - lockedAt);
            if (left.isNegative() || left.isZero()) {
                release(lease);
            } else if (!(lease instanceof FencedLease) && extendsTo(left)) {
                log.debug("ShedLock lock '{}' kept for lockAtLeastFor: runs out in {}", lease.resource(), left);
            } else {
                kept.add(lease);
                try {
                    timer.schedule(this::releaseKept, left.toNanos(), TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException closed) {
                    releaseKept();
                }
            }
        }

        /** A TTL lease set to run out in {@code left}; false if it could not be (then it is released on time). */
        private boolean extendsTo(Duration left) {
            try {
                return lease.extend(left);
            } catch (IllegalArgumentException tooShortForTheLock) {
                return false;
            } catch (QuorumlockException e) {
                log.debug("ShedLock lock '{}' not extended to {}: {}", lease.resource(), left, e.getMessage());
                return false;
            }
        }

        private void releaseKept() {
            if (kept.remove(lease)) {
                release(lease);
            }
        }

        @Override
        protected Optional<SimpleLock> doExtend(LockConfiguration next) {
            long calledAt = System.nanoTime();
            boolean extended;
            try {
                extended = lease.extend(next.getLockAtMostFor());
            } catch (IllegalArgumentException e) {
                throw rejected(next, e);
            } catch (QuorumlockException | IllegalStateException e) {
                log.debug("ShedLock lock '{}' not extended: {}", lease.resource(), e.getMessage());
                extended = false;
            }
            if (extended) {
                return Optional.of(new QuorumlockLock(next, lease, calledAt, held));
            }
            log.warn(
                    "ShedLock lock '{}' could not be extended to {} (lost, or no answer in time): released",
                    lease.resource(),
                    next.getLockAtMostFor());
            forget();
            release(lease);
            return Optional.empty();
        }

        /** The task no longer holds the lease: off its thread's list. */
        private void forget() {
            held.removeLastOccurrence(lease);
            if (held.isEmpty() && HELD.get() == held) {
                HELD.remove();
            }
        }
    }
}
