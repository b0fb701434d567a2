package org.apache.curator.framework.recipes.locks;

import io.quorumlock.FencedLease;
import io.quorumlock.LockHolder;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.zookeeper.CuratorSemaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.shared.SharedCountReader;

/**
 * A thin adapter under the name of Curator's semaphore, so that Curator's own {@code
 * TestInterProcessSemaphore} drives {@link CuratorSemaphore}: this class comes before Curator's jar
 * on the test class path. Each call is one call of the semaphore; the adapter only turns
 * quorumlock's answers into Curator's (a refusal into {@code null}, an interrupt into {@link
 * InterruptedException}).
 */
public class InterProcessSemaphoreV2 {

    /** The TTL the lock's calls ask for: a ZooKeeper lease lives with its session, whatever it is. */
    private static final Duration TTL = Duration.ofMinutes(1);

    /** Curator's acquire without a time waits until it is granted: here for an hour at most. */
    private static final Duration FOREVER = Duration.ofHours(1);

    /** Curator's hooks into its own acquire, which its tests set; the adapter has no such steps. */
    static volatile CountDownLatch debugAcquireLatch = null;

    static volatile CountDownLatch debugFailedGetChildrenLatch = null;
    volatile CountDownLatch debugWaitLatch = null;

    private final CuratorSemaphore semaphore;

    public InterProcessSemaphoreV2(CuratorFramework client, String path, int maxLeases) {
        this.semaphore = CuratorSemaphore.of(QuorumlockLocks.of(client), path, maxLeases);
    }

    public InterProcessSemaphoreV2(CuratorFramework client, String path, SharedCountReader count) {
        throw new UnsupportedOperationException(
                "a CuratorSemaphore's number of permits is fixed when it is made: no shared count");
    }

    public Collection<String> getParticipantNodes() {
        return semaphore.holders().stream().map(LockHolder::name).toList();
    }

    public void returnAll(Collection<Lease> leases) {
        leases.forEach(this::returnLease);
    }

    public void returnLease(Lease lease) {
        try {
            lease.close();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public Lease acquire() throws Exception {
        return acquire(1, FOREVER).get(0);
    }

    public Collection<Lease> acquire(int qty) throws Exception {
        return acquire(qty, FOREVER);
    }

    public Lease acquire(long time, TimeUnit unit) throws Exception {
        List<Lease> leases = acquire(1, Duration.ofNanos(unit.toNanos(time)));
        return leases == null ? null : leases.get(0);
    }

    public Collection<Lease> acquire(int qty, long time, TimeUnit unit) throws Exception {
        return acquire(qty, Duration.ofNanos(unit.toNanos(time)));
    }

    private List<Lease> acquire(int qty, Duration maxWait) throws InterruptedException {
        try {
            List<Lease> leases = new ArrayList<>(qty);
            for (FencedLease lease : semaphore.acquire(qty, TTL, maxWait)) {
                leases.add(new Adapted(lease));
            }
            return leases;
        } catch (LockUnavailableException refused) {
            return null;
        } catch (QuorumlockException e) {
            if (e.getCause() instanceof InterruptedException) {
                Thread.interrupted();
                throw new InterruptedException(e.getMessage());
            }
            throw e;
        }
    }

    /** A quorumlock lease as Curator's {@link Lease}. */
    private record Adapted(FencedLease lease) implements Lease {
        @Override
        public void close() {
            lease.release();
        }

        @Override
        public byte[] getData() {
            throw new UnsupportedOperationException("a quorumlock lease does not read its node's data");
        }

        @Override
        public String getNodeName() {
            throw new UnsupportedOperationException("a quorumlock lease does not name its node");
        }
    }
}
