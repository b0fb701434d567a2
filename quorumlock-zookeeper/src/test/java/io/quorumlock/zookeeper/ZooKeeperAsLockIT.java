package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.DistributedReentrantLock;
import io.quorumlock.FencedLease;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code asLock} on a real ZooKeeper server: reentrant by resource within one lock object. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ZooKeeperAsLockIT {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration SESSION = Duration.ofSeconds(4);

    @Test
    void twoAdaptersOfOneLockForOneResourceAreOneHoldReentrantByName(@TempDir Path dir) throws Exception {
        try (TestingServer server = ZooKeeperServers.server(dir);
                ZooKeeperLock lock = TestLocks.lock(server.getConnectString(), SESSION);
                ZooKeeperLock other = TestLocks.lock(server.getConnectString(), SESSION)) {
            DistributedReentrantLock<FencedLease> counter = lock.asLock("counter", TTL);
            DistributedReentrantLock<FencedLease> again = lock.asLock("counter", TTL);
            counter.lock();
            FencedLease lease = counter.lease().orElseThrow();

            assertThat(again.tryLock())
                    .as("a second asLock of the resource, in the thread that holds it")
                    .isTrue();
            assertThat(again.getHoldCount()).isEqualTo(2);
            assertThat(again.lease()).as("one hold, one lease, one token").containsSame(lease);
            assertThat(CompletableFuture.supplyAsync(again::tryLock).get(10, TimeUnit.SECONDS))
                    .as("another thread of this process, through the second adapter")
                    .isFalse();

            again.unlock();
            assertThat(lease.isValid()).as("held until the last unlock").isTrue();
            assertThat(other.tryAcquire("counter", TTL))
                    .as("another lock object meanwhile")
                    .isEmpty();
            counter.unlock();
            TestTime.await(Duration.ofSeconds(5), () -> !lease.isValid(), "the lease to be released");
            try (FencedLease next = other.acquire("counter", TTL, TestTime.scaled(Duration.ofSeconds(10)))) {
                assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
            }
        }
    }
}
