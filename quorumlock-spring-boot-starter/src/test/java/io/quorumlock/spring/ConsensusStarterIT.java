package io.quorumlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.etcd.EtcdLock;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The ZooKeeper and etcd beans and their health, in real application contexts over a real ensemble and cluster. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConsensusStarterIT {

    private static final Duration TTL = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(QuorumlockAutoConfiguration.class, QuorumlockHealthAutoConfiguration.class));

    @Test
    void zooKeeperGivesItsLockAndHealthFollowsTheConnection(@TempDir Path dir) throws Exception {
        try (TestingServer server = ZooKeeperServers.server(dir)) {
            runner.withPropertyValues(
                            "quorumlock.zookeeper.connect-string=" + server.getConnectString(),
                            "quorumlock.zookeeper.session-timeout=4s")
                    .run(context -> {
                        ZooKeeperLock lock = context.getBean(ZooKeeperLock.class);
                        assertThat(context.getBean(DistributedLock.class)).isSameAs(lock);
                        locksTwiceWithGrowingTokens(lock, "stock");

                        HealthIndicator health =
                                context.getBean(QuorumlockHealthAutoConfiguration.BEAN, HealthIndicator.class);
                        Health up = health.health();
                        System.out.println("zookeeper health: " + up);
                        assertThat(up.getStatus()).isEqualTo(Status.UP);
                        assertThat(up.getDetails()).containsEntry("connected", true);

                        server.stop();
                        TestTime.await(
                                Duration.ofSeconds(15),
                                () -> health.health().getStatus().equals(Status.DOWN),
                                "health DOWN with the ensemble stopped");
                        System.out.println("zookeeper health, ensemble stopped: " + health.health());
                    });
        }
    }

    @Test
    void etcdGivesItsLockAndHealthReadsTheCluster() {
        runner.withPropertyValues("quorumlock.etcd.endpoints=" + String.join(",", etcd.endpoints()))
                .run(context -> {
                    EtcdLock lock = context.getBean(EtcdLock.class);
                    assertThat(context.getBean(DistributedLock.class)).isSameAs(lock);
                    locksTwiceWithGrowingTokens(lock, "ledger");

                    Health up = context.getBean(QuorumlockHealthAutoConfiguration.BEAN, HealthIndicator.class)
                            .health();
                    System.out.println("etcd health: " + up);
                    assertThat(up.getStatus()).isEqualTo(Status.UP);
                    assertThat((Long) up.getDetails().get("revision")).isPositive();
                });
    }

    @Test
    void etcdHealthIsDownWithinItsTimeoutWhenTheClusterIsFrozen() {
        runner.withPropertyValues("quorumlock.etcd.endpoints=" + String.join(",", etcd.endpoints()))
                .run(context -> {
                    HealthIndicator health =
                            context.getBean(QuorumlockHealthAutoConfiguration.BEAN, HealthIndicator.class);
                    assertThat(health.health().getStatus()).isEqualTo(Status.UP);
                    etcd.get(0).pause();
                    try {
                        long start = System.nanoTime();
                        Health down = health.health();
                        long tookMillis = (System.nanoTime() - start) / 1_000_000;
                        System.out.println("etcd health, member frozen (" + tookMillis + " ms): " + down);
                        assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                        assertThat(tookMillis).isLessThan(LockHealth.ETCD_TIMEOUT.toMillis() + 2_000);
                    } finally {
                        etcd.get(0).resume();
                    }
                });
    }

    private static void locksTwiceWithGrowingTokens(DistributedLock<FencedLease> lock, String resource) {
        FencedLease first = lock.acquire(resource, TTL, WAIT);
        first.release();
        FencedLease second = lock.acquire(resource, TTL, WAIT);
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        second.release();
    }
}
