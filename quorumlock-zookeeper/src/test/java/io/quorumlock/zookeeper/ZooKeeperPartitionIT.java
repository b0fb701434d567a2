package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A client cut off by fault proxies from a live ensemble, while another client reaches it directly. */
@Timeout(60)
class ZooKeeperPartitionIT {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration SESSION = Duration.ofSeconds(2);

    @TempDir
    Path dataDir;

    private TestingCluster cluster;
    private FaultProxies proxies;
    private final List<ZooKeeperLock> locks = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        if (proxies != null) {
            proxies.close();
        }
        locks.forEach(ZooKeeperLock::close);
        if (cluster != null) {
            cluster.close();
        }
    }

    private ZooKeeperLock newLock(String connectString) {
        ZooKeeperLock lock = TestLocks.lock(connectString, SESSION);
        locks.add(lock);
        return lock;
    }

    /**
     * The client keeps the connect string it was given: Curator's ensemble tracker would swap in
     * the servers' own addresses from their dynamic config once connected, and so go around a
     * proxy, a NAT or a load balancer (here: around the fault proxies, healing the partition).
     */
    @Test
    void aClientKeepsTheConnectStringItWasGiven() throws Exception {
        cluster = ZooKeeperServers.cluster(dataDir, 3);
        proxies = ZooKeeperServers.proxies(cluster);
        ZooKeeperLock lock = newLock(proxies.connectString());
        lock.acquire("stock", TTL, Duration.ofSeconds(10)).release();
        long until = System.nanoTime() + TestTime.scaled(Duration.ofSeconds(2)).toNanos();
        while (System.nanoTime() < until) { // the tracker acts within milliseconds of the connection
            assertThat(lock.client().getZookeeperClient().getCurrentConnectionString())
                    .isEqualTo(proxies.connectString());
            Thread.sleep(20);
        }
    }

    @Test
    void theEnsembleExpiresACutOffClientsSessionAndGrantsTheLockToADirectClient() throws Exception {
        cluster = ZooKeeperServers.cluster(dataDir, 3);
        proxies = ZooKeeperServers.proxies(cluster);
        ZooKeeperLock cutOff = newLock(proxies.connectString());
        ZooKeeperLock direct = newLock(cluster.getConnectString());
        FencedLease first = cutOff.acquire("stock", TTL, Duration.ofSeconds(10));

        proxies.partition(0, 1, 2);
        long start = System.nanoTime();
        try (FencedLease second = direct.acquire("stock", TTL, Duration.ofSeconds(20))) {
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
            // Granted once the ensemble expired the silent session: not before the session timeout.
            assertThat(waited).isGreaterThanOrEqualTo(SESSION.minus(Duration.ofMillis(200)));
            TestTime.await(
                    Duration.ofSeconds(5), () -> !first.isValid(), "the cut-off client to see its lease in doubt");
            System.out.printf(
                    "ZooKeeper: the direct client got the lock %d ms after the partition (session %d ms)%n",
                    waited.toMillis(), SESSION.toMillis());
        }
        proxies.heal();
        assertThat(first.isValid()).isFalse();
    }

    @Test
    void aCutOffHoldersWorkIsStoppedBeforeTheDirectClientGetsTheLock() throws Exception {
        cluster = ZooKeeperServers.cluster(dataDir, 3);
        proxies = ZooKeeperServers.proxies(cluster);
        ZooKeeperLock cutOff = newLock(proxies.connectString());
        ZooKeeperLock direct = newLock(cluster.getConnectString());
        java.util.concurrent.CountDownLatch working = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicLong stoppedAt = new java.util.concurrent.atomic.AtomicLong();
        Thread holder = new Thread(() -> {
            try {
                cutOff.runWithLease("stock", TTL, Duration.ofSeconds(10), lease -> {
                    working.countDown();
                    try {
                        Thread.sleep(Duration.ofSeconds(30).toMillis());
                    } catch (InterruptedException e) {
                        stoppedAt.set(System.nanoTime());
                    }
                });
            } catch (io.quorumlock.LeaseLostException expected) {
                // the work was stopped: the lease was in doubt
            }
        });
        holder.start();
        assertThat(working.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

        proxies.partition(0, 1, 2);
        long start = System.nanoTime();
        try (FencedLease second = direct.acquire("stock", TTL, Duration.ofSeconds(20))) {
            long grantedAt = System.nanoTime();
            holder.join(Duration.ofSeconds(10).toMillis());
            assertThat(stoppedAt.get())
                    .as("the cut-off holder's work was interrupted")
                    .isPositive();
            // SUSPENDED comes at about two thirds of the session timeout, the grant after it ran out.
            assertThat(stoppedAt.get())
                    .as("stopped before the other client's grant")
                    .isLessThan(grantedAt);
            System.out.printf(
                    "ZooKeeper: the cut-off holder's work stopped %d ms after the partition, the direct client"
                            + " got the lock %d ms after it (session %d ms)%n",
                    (stoppedAt.get() - start) / 1_000_000, (grantedAt - start) / 1_000_000, SESSION.toMillis());
        }
        proxies.heal();
    }
}
