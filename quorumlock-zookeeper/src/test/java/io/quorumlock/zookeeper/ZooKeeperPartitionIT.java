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
}
