package io.quorumlock.zookeeper;

import io.quorumlock.DistributedReadWriteLock;
import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LockUnavailableException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.curator.utils.ZKPaths;

/**
 * A read-write lock on ZooKeeper that shares its nodes with Curator's {@code
 * InterProcessReadWriteLock} on the same path: many readers or one writer, with Curator's
 * processes and this library's counted together, for a fleet mid-migration.
 *
 * <pre>{@code
 * CuratorReadWriteLock catalog = CuratorReadWriteLock.of(zk, "/locks/catalog"); // Curator's path
 * try (FencedLease write = catalog.acquireWrite(Duration.ofSeconds(30), Duration.ofSeconds(5))) {
 *     catalog.store(newPrices, write.fencingToken());   // the storage refuses older tokens
 * }
 * }</pre>
 *
 * <p>It follows Curator's protocol: every reader and writer adds an ephemeral-sequential node to
 * the path, {@code ..__READ__NNNNNNNNNN} or {@code ..__WRIT__NNNNNNNNNN}. A writer holds once its
 * node is the first of all, waiting for the node just ahead of it; a reader holds once no writer's
 * node is ahead of its own, waiting for the nearest writer ahead. So a writer waits only for those
 * who came before it, and readers that come after a waiting writer wait behind it: writers are not
 * starved. A lease lives with its node, as a lock's lease does: kept by the session, lost with a
 * notice when the session is, released once by deleting the node.
 *
 * <p>Each lease's {@link FencedLease#fencingToken()} is its node's czxid. A writer holds only after
 * every earlier reader and writer has gone, and a reader after every earlier writer, so a writer's
 * token is larger than that of everyone before it, and a reader's larger than every earlier
 * writer's: a storage-side fence checked by writers and raised by readers ({@code
 * JdbcFence.check(tx, write)}, {@code JdbcFence.raise(tx, read)}) refuses the late write of a
 * writer paused past its lease, as {@link DistributedReadWriteLock}'s does.
 *
 * <p>Not reentrant: a thread that holds the write lease and asks for a read lease waits for itself;
 * to step down from writing to reading without letting another writer in, use {@link
 * #downgrade}. Where every process runs this library, {@link DistributedReadWriteLock} works the
 * same on every backend.
 */
public final class CuratorReadWriteLock {

    private final ZooKeeperLock lock;
    private final String path;

    private CuratorReadWriteLock(ZooKeeperLock lock, String path) {
        this.lock = lock;
        this.path = path;
    }

    /**
     * A read-write lock on {@code path}: the path Curator's {@code InterProcessReadWriteLock} is
     * given, in the namespace of the lock's client.
     *
     * @throws IllegalSettingException if the path is not an absolute ZooKeeper path
     */
    public static CuratorReadWriteLock of(ZooKeeperLock lock, String path) {
        if (lock == null) {
            throw new IllegalSettingException("lock", "lock must not be null: pass the ZooKeeperLock to share");
        }
        return new CuratorReadWriteLock(lock, CuratorSemaphore.checkPath(path, "/locks/catalog"));
    }

    /** The lock's path, as Curator's read-write lock is given it. */
    public String path() {
        return path;
    }

    /**
     * Takes a read lease if no writer holds or waits ahead; one attempt, timed as the lock's {@link
     * ZooKeeperLock#tryAcquire}.
     *
     * @param ttl only checked to be positive: the lease lives as long as the session
     * @throws LockUnavailableException if the ensemble could not be reached or did not answer in time
     */
    public Optional<FencedLease> tryAcquireRead(Duration ttl) {
        return tryAcquire(LockQueue.READER, ttl);
    }

    /**
     * Takes a read lease, waiting up to {@code maxWait} for the writers ahead, woken as each goes.
     *
     * @param ttl only checked to be positive: the lease lives as long as the session
     * @throws LockUnavailableException if it was not granted in time, naming the writer ahead
     */
    public FencedLease acquireRead(Duration ttl, Duration maxWait) {
        return acquire(LockQueue.READER, ttl, maxWait);
    }

    /**
     * Takes the write lease if nobody reads, writes or waits; one attempt.
     *
     * @param ttl only checked to be positive: the lease lives as long as the session
     * @throws LockUnavailableException if the ensemble could not be reached or did not answer in time
     */
    public Optional<FencedLease> tryAcquireWrite(Duration ttl) {
        return tryAcquire(LockQueue.WRITER, ttl);
    }

    /**
     * Takes the write lease, waiting up to {@code maxWait} for every reader and writer ahead.
     *
     * @param ttl only checked to be positive: the lease lives as long as the session
     * @throws LockUnavailableException if it was not granted in time, naming the node ahead
     */
    public FencedLease acquireWrite(Duration ttl, Duration maxWait) {
        return acquire(LockQueue.WRITER, ttl, maxWait);
    }

    /**
     * A read lease for the holder of {@code write}, granted while it writes: its node takes the
     * write node's sequence, so it stands in the writer's place, ahead of every reader and writer
     * that came meanwhile. Release the write lease afterwards, and the holder reads, with the
     * writers that came meanwhile still waiting behind it: Curator's downgrade.
     *
     * @throws IllegalArgumentException if {@code write} is not a write lease of this lock
     * @throws LockUnavailableException if the write lease is no longer held
     */
    public FencedLease downgrade(FencedLease write, Duration ttl) {
        if (!(write instanceof ZooKeeperLease lease)
                || !lease.node().startsWith(path + "/")
                || LockQueue.sequence(ZKPaths.getNodeFromPath(lease.node()), LockQueue.WRITER.prefix()) < 0) {
            throw new IllegalArgumentException("downgrade needs a write lease of " + path + ", was " + write);
        }
        return acquire(LockQueue.READER.beside(ZKPaths.getNodeFromPath(lease.node())), ttl, Duration.ZERO);
    }

    /** The nodes of the readers, holding or waiting, in the order of the queue. */
    public List<String> readerNodes() {
        return nodes(LockQueue.READER.prefix());
    }

    /** The nodes of the writers, holding or waiting, in the order of the queue. */
    public List<String> writerNodes() {
        return nodes(LockQueue.WRITER.prefix());
    }

    private Optional<FencedLease> tryAcquire(LockQueue shape, Duration ttl) {
        lock.checkTtl(ttl);
        return lock.timing()
                .tryAcquireBy(
                        path, (deadline, end, mode) -> lock.attempts().attempt(path, path, shape, deadline, end, mode));
    }

    private FencedLease acquire(LockQueue shape, Duration ttl, Duration maxWait) {
        lock.checkTtl(ttl);
        return lock.timing()
                .acquireBy(
                        path,
                        maxWait,
                        (deadline, end, mode) -> lock.attempts().attempt(path, path, shape, deadline, end, mode));
    }

    private List<String> nodes(String kind) {
        return lock.reads().nodes(path, path, new LockQueue(kind, List.of(kind), 1, null));
    }

    @Override
    public String toString() {
        return "CuratorReadWriteLock[" + path + ", " + lock.ensemble() + "]";
    }
}
