package io.quorumlock.zookeeper;

import io.quorumlock.DistributedSemaphore;
import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LockHolder;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.internal.AcquireLoop.Attempt;
import io.quorumlock.internal.Settings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.common.PathUtils;

/**
 * A semaphore of N leases on ZooKeeper that shares its nodes with Curator's {@code
 * InterProcessSemaphoreV2} on the same path: for a fleet mid-migration, where some processes still
 * run Curator's semaphore and others run this one, and together they hold at most N leases.
 *
 * <pre>{@code
 * CuratorSemaphore backups = CuratorSemaphore.of(zk, "/jobs/backups", 3); // Curator's path and count
 * try (FencedLease lease = backups.acquire(Duration.ofMinutes(5), Duration.ofMinutes(1))) {
 *     ... // at most 3 of these run at once, with Curator's semaphores on /jobs/backups counted in
 * }
 * }</pre>
 *
 * <p>It follows Curator's protocol: an acquirer takes the mutex on {@code <path>/locks} (the lock's
 * own queue, which is Curator's {@code InterProcessMutex}'s), creates its ephemeral-sequential node
 * {@code <path>/leases/..lease-NNNNNNNNNN}, waits while the leases directory holds more than N
 * nodes (woken by any change of it), and gives the mutex back. The lease lives with its node, as a
 * lock's lease lives with its lock node: kept by the session and its heartbeats, lost with a notice
 * ({@link FencedLease#lost()}) when the session is, released once by deleting the node.
 *
 * <p>What it does not give: a fencing token per permit. A lease's {@link
 * FencedLease#fencingToken()} is its node's czxid, which grows with every grant on the path; but
 * Curator's leases are interchangeable, not numbered permits, so a storage-side fence cannot tell
 * which lease a late write held, and a fence keyed on the path would refuse the other holders. Where every
 * process runs this library, {@link DistributedSemaphore#of DistributedSemaphore.of(zk, name, N)}
 * is the one to use: its permits are numbered locks, each fenced. As with Curator, a {@link
 * #tryAcquire} or an acquire with no wait is refused while another process takes or waits for a
 * lease (it holds the mutex), also when a lease is free a moment later.
 */
public final class CuratorSemaphore {

    /** The most leases one semaphore holds: far more than a lease directory lists quickly. */
    public static final int MAX_PERMITS = 10_000;

    private final ZooKeeperLock lock;
    private final String path;
    private final int permits;
    private final String locks;
    private final String leases;

    private CuratorSemaphore(ZooKeeperLock lock, String path, int permits) {
        this.lock = lock;
        this.path = path;
        this.permits = permits;
        this.locks = ZKPaths.makePath(path, "locks");
        this.leases = ZKPaths.makePath(path, "leases");
    }

    /**
     * A semaphore of {@code permits} leases on {@code path}: the path Curator's {@code
     * InterProcessSemaphoreV2} is given (in the namespace of the lock's client), and the same
     * number of leases as the Curator processes on it use.
     *
     * @throws IllegalSettingException if the path is not an absolute ZooKeeper path, or {@code
     *     permits} is not between 1 and {@link #MAX_PERMITS}
     */
    public static CuratorSemaphore of(ZooKeeperLock lock, String path, int permits) {
        if (lock == null) {
            throw new IllegalSettingException("lock", "lock must not be null: pass the ZooKeeperLock to share");
        }
        if (permits < 1 || permits > MAX_PERMITS) {
            throw new IllegalSettingException(
                    "permits",
                    "permits must be between 1 and " + MAX_PERMITS + ", was " + permits
                            + ": use the number of leases Curator's semaphores on this path are made with");
        }
        return new CuratorSemaphore(lock, checkPath(path, "/jobs/backups"), permits);
    }

    /** {@code path}, checked to be an absolute ZooKeeper path other than the root. */
    static String checkPath(String path, String example) {
        if (path == null || path.isEmpty() || path.equals("/")) {
            throw new IllegalSettingException(
                    "path", "path must be a ZooKeeper path, as given to Curator, e.g. \"" + example + "\"");
        }
        try {
            PathUtils.validatePath(path);
        } catch (IllegalArgumentException e) {
            throw new IllegalSettingException(
                    "path",
                    -1,
                    "path \"" + path + "\" is not a valid ZooKeeper path: " + e.getMessage()
                            + " (give it as Curator has it, e.g. \"" + example + "\")",
                    e);
        }
        return path;
    }

    /** The semaphore's path, as Curator's semaphore is given it. */
    public String path() {
        return path;
    }

    /** How many leases may be held at once. */
    public int permits() {
        return permits;
    }

    /**
     * Takes a lease if one is free and no other process is taking or waiting for one.
     *
     * @param ttl only checked to be positive, as for the lock: the lease lives as long as the session
     * @return the lease, or empty if all are held or another process holds the semaphore's mutex
     * @throws LockUnavailableException if the ensemble could not be reached or did not answer in time
     */
    public Optional<FencedLease> tryAcquire(Duration ttl) {
        lock.checkTtl(ttl);
        return lock.timing().tryAcquireBy(path, this::attempt);
    }

    /**
     * Takes a lease, waiting up to {@code maxWait} for the mutex (in line with Curator's acquirers)
     * and then for one of the N leases to be given back; the timing is the lock's {@link
     * ZooKeeperLock#acquire}'s.
     *
     * @param ttl only checked to be positive: the lease lives as long as the session
     * @throws LockUnavailableException if no lease was granted in time, with the ensemble's answer
     */
    public FencedLease acquire(Duration ttl, Duration maxWait) {
        lock.checkTtl(ttl);
        return lock.timing().acquireBy(path, maxWait, this::attempt);
    }

    /**
     * Takes {@code count} leases, one after another, all within {@code maxWait}; if they are not
     * all granted in time, gives back those it took and throws.
     *
     * @throws LockUnavailableException if the leases were not all granted in time
     * @throws IllegalSettingException if {@code count} is not between 1 and {@link #permits()}
     */
    public List<FencedLease> acquire(int count, Duration ttl, Duration maxWait) {
        if (count < 1 || count > permits) {
            throw new IllegalSettingException(
                    "count", "count must be between 1 and the " + permits + " permits, was " + count);
        }
        Settings.maxWait(maxWait);
        long deadline = lock.ticker().nanos() + maxWait.toNanos();
        List<FencedLease> taken = new ArrayList<>(count);
        try {
            while (taken.size() < count) {
                long left = Math.max(0, deadline - lock.ticker().nanos());
                taken.add(acquire(ttl, Duration.ofNanos(left)));
            }
            return List.copyOf(taken);
        } catch (RuntimeException e) {
            taken.forEach(FencedLease::release);
            throw e;
        }
    }

    /**
     * Who holds the leases now, oldest first: each lease node's data as the holder's name ({@link
     * ZooKeeperLockBuilder#holder}; empty for a node whose data is not a name, such as a Curator
     * process's address) and its czxid, read after a {@code sync}.
     *
     * @throws io.quorumlock.QuorumlockException if the ensemble could not tell in time
     */
    public List<LockHolder> holders() {
        return lock.reads().holders(path, leases, LockQueue.leases(permits));
    }

    /** One attempt: the mutex, then a lease node, waiting while more than N are there. */
    private Attempt<FencedLease> attempt(long deadline, long end, LockAttempts.Mode mode) {
        Attempt<FencedLease> mutex = lock.attempts().attempt(path, locks, LockQueue.LOCK, deadline, end, mode);
        if (mutex.lease().isEmpty()) {
            return mutex;
        }
        try (FencedLease held = mutex.lease().get()) {
            return lock.attempts().attempt(path, leases, LockQueue.leases(permits), deadline, end, mode);
        }
    }

    @Override
    public String toString() {
        return "CuratorSemaphore[" + path + ", " + permits + " permits, " + lock.ensemble() + "]";
    }
}
