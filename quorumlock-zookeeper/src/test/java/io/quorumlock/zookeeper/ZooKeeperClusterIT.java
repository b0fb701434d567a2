package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Scenario 4, ZooKeeper half: a three-server ensemble loses its leader while the lock is in use. */
class ZooKeeperClusterIT {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration SESSION = Duration.ofSeconds(8);

    @TempDir
    Path dataDir;

    private TestingCluster cluster;
    private final List<ZooKeeperLock> locks = new ArrayList<>();
    private final ExecutorService executor = Executors.newCachedThreadPool();

    @AfterEach
    void stop() throws Exception {
        executor.shutdownNow();
        locks.forEach(ZooKeeperLock::close);
        if (cluster != null) {
            cluster.close();
        }
    }

    private ZooKeeperLock newLock() {
        ZooKeeperLock lock = TestLocks.lock(cluster.getConnectString(), SESSION);
        locks.add(lock);
        return lock;
    }

    @Test
    void lockingGoesOnAndTokensKeepIncreasingWhenTheLeaderIsKilled() throws Exception {
        cluster = ZooKeeperServers.cluster(dataDir, 3);
        ZooKeeperLock a = newLock();
        ZooKeeperLock b = newLock();
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            try (FencedLease lease = (i % 2 == 0 ? a : b).acquire("ensemble", TTL, Duration.ofSeconds(10))) {
                tokens.add(lease.fencingToken());
            }
        }

        // A holds the lock and B waits for it when the leader dies.
        FencedLease held = a.acquire("ensemble", TTL, Duration.ofSeconds(10));
        tokens.add(held.fencingToken());
        CompletableFuture<FencedLease> waiting =
                CompletableFuture.supplyAsync(() -> b.acquire("ensemble", TTL, Duration.ofSeconds(30)), executor);
        TestTime.await(
                Duration.ofSeconds(5),
                () -> {
                    try {
                        return a.client()
                                        .getChildren()
                                        .forPath(ZooKeeperLock.DEFAULT_BASE_PATH + "/ensemble")
                                        .size()
                                == 2;
                    } catch (Exception e) {
                        return false;
                    }
                },
                "B to queue behind A");
        InstanceSpec leader = ZooKeeperServers.leader(cluster);
        long epochBefore = held.fencingToken() >>> 32;

        assertThat(cluster.killServer(leader)).isTrue();
        InstanceSpec newLeader = ZooKeeperServers.awaitLeader(cluster, Duration.ofSeconds(15));
        assertThat(newLeader).isNotEqualTo(leader);

        // The session outlives the election: A's lease comes back once its node is confirmed.
        TestTime.await(Duration.ofSeconds(15), held::isValid, "A's lease to be valid on the new leader");
        assertThat(held.lost()).isNotDone();
        held.release();

        // B's node may date from before the election (it queued then): its token is still larger.
        FencedLease next = waiting.get(20, TimeUnit.SECONDS);
        tokens.add(next.fencingToken());
        next.release();

        // Two of three servers: still a quorum. Nodes created now carry the new leader's epoch.
        for (int i = 0; i < 6; i++) {
            try (FencedLease lease = (i % 2 == 0 ? a : b).acquire("ensemble", TTL, Duration.ofSeconds(10))) {
                assertThat(lease.fencingToken() >>> 32).as("a new leader epoch").isGreaterThan(epochBefore);
                tokens.add(lease.fencingToken());
            }
        }
        assertThat(tokens).hasSize(14).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
    }
}
