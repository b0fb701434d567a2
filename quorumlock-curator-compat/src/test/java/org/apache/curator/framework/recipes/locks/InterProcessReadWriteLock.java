package org.apache.curator.framework.recipes.locks;

import io.quorumlock.FencedLease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.zookeeper.CuratorReadWriteLock;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;

/**
 * A thin adapter under the name of Curator's read-write lock, so that Curator's own {@code
 * TestInterProcessReadWriteLock} drives {@link CuratorReadWriteLock}: this class comes before
 * Curator's jar on the test class path. Curator's two mutexes re-enter per thread, and the read
 * mutex of a thread that holds the write mutex steps down ({@link CuratorReadWriteLock#downgrade});
 * the adapter keeps that per-thread bookkeeping, and each lease is one call of the lock.
 */
public class InterProcessReadWriteLock {

    /** The TTL the lock's calls ask for: a ZooKeeper lease lives with its session, whatever it is. */
    private static final Duration TTL = Duration.ofMinutes(1);

    /** Curator's acquire without a time waits until it is granted: here for an hour at most. */
    private static final Duration FOREVER = Duration.ofHours(1);

    private final CuratorReadWriteLock lock;
    private final WriteLock writeMutex;
    private final ReadLock readMutex;

    public InterProcessReadWriteLock(CuratorFramework client, String basePath) {
        this.lock = CuratorReadWriteLock.of(QuorumlockLocks.of(client), basePath);
        this.writeMutex = new WriteLock(this);
        this.readMutex = new ReadLock(this);
    }

    public InterProcessReadWriteLock(CuratorFramework client, String basePath, byte[] lockData) {
        throw new UnsupportedOperationException(
                "a quorumlock node's data is its lock's holder name (ZooKeeperLockBuilder.holder), not bytes per lock");
    }

    public ReadLock readLock() {
        return readMutex;
    }

    public WriteLock writeLock() {
        return writeMutex;
    }

    /** One of the two mutexes: its leases, per thread, with how often the thread entered. */
    private abstract static class Mutex implements InterProcessLock {
        final InterProcessReadWriteLock owner;
        private final Map<Thread, Held> held = new ConcurrentHashMap<>();

        private record Held(FencedLease lease, int count) {}

        Mutex(InterProcessReadWriteLock owner) {
            this.owner = owner;
        }

        /** Takes this mutex's lease within {@code maxWait}, or throws LockUnavailableException. */
        abstract FencedLease take(Duration maxWait);

        FencedLease heldByCurrentThread() {
            Held h = held.get(Thread.currentThread());
            return h == null ? null : h.lease();
        }

        @Override
        public void acquire() throws Exception {
            if (!acquire(FOREVER)) {
                throw new IllegalStateException("not acquired within " + FOREVER);
            }
        }

        @Override
        public boolean acquire(long time, TimeUnit unit) throws Exception {
            return acquire(Duration.ofNanos(unit.toNanos(time)));
        }

        private boolean acquire(Duration maxWait) throws InterruptedException {
            Held h = held.get(Thread.currentThread());
            if (h != null) {
                held.put(Thread.currentThread(), new Held(h.lease(), h.count() + 1));
                return true;
            }
            try {
                held.put(Thread.currentThread(), new Held(take(maxWait), 1));
                return true;
            } catch (LockUnavailableException refused) {
                return false;
            } catch (QuorumlockException e) {
                if (e.getCause() instanceof InterruptedException) {
                    Thread.interrupted();
                    throw new InterruptedException(e.getMessage());
                }
                throw e;
            }
        }

        @Override
        public void release() {
            Held h = held.get(Thread.currentThread());
            if (h == null) {
                throw new IllegalMonitorStateException("You do not own the lock: " + owner.lock.path());
            }
            if (h.count() > 1) {
                held.put(Thread.currentThread(), new Held(h.lease(), h.count() - 1));
                return;
            }
            held.remove(Thread.currentThread());
            h.lease().release();
        }

        @Override
        public boolean isAcquiredInThisProcess() {
            return !held.isEmpty();
        }

        public boolean isOwnedByCurrentThread() {
            return held.containsKey(Thread.currentThread());
        }
    }

    public static class WriteLock extends Mutex {
        WriteLock(InterProcessReadWriteLock owner) {
            super(owner);
        }

        @Override
        FencedLease take(Duration maxWait) {
            return owner.lock.acquireWrite(TTL, maxWait);
        }

        public Collection<String> getParticipantNodes() {
            return owner.lock.writerNodes();
        }

        public String getLockPath() {
            throw new UnsupportedOperationException("a quorumlock lease does not name its node");
        }
    }

    public static class ReadLock extends Mutex {
        ReadLock(InterProcessReadWriteLock owner) {
            super(owner);
        }

        @Override
        FencedLease take(Duration maxWait) {
            FencedLease writing = owner.writeMutex.heldByCurrentThread();
            return writing != null ? owner.lock.downgrade(writing, TTL) : owner.lock.acquireRead(TTL, maxWait);
        }

        public Collection<String> getParticipantNodes() {
            return owner.lock.readerNodes();
        }

        public String getLockPath() {
            throw new UnsupportedOperationException("a quorumlock lease does not name its node");
        }
    }
}
