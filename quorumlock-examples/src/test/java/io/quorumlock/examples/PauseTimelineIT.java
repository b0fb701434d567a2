package io.quorumlock.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.Lease;
import io.quorumlock.jdbc.JdbcFence;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenario 1 of the debate, the process pause: with a TTL lock alone the paused client's late
 * write loses the other's update every time; with a fenced lease and the fence, it is refused.
 */
class PauseTimelineIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    @TempDir
    static Path dir;

    private static TestingServer zookeeper;
    private static JdbcDataSource database;

    private static final int ROUNDS = 3;

    @BeforeAll
    static void start() throws Exception {
        zookeeper = ZooKeeperServers.server(dir);
        database = new JdbcDataSource();
        database.setURL("jdbc:h2:mem:pause;DB_CLOSE_DELAY=-1");
    }

    @AfterAll
    static void stop() throws Exception {
        zookeeper.close();
    }

    @Test
    void aTtlLockAloneLosesTheOtherClientsUpdate() {
        // With the restart guard on (the default), the nodes just started vote once up for the
        // TTL of 400 ms: the first acquire, which may wait 10 s, waits for that.
        try (Redlock a = Redlock.builder().nodes(redis.uris()).build();
                Redlock b = Redlock.builder().nodes(redis.uris()).build()) {
            PauseTimeline.Result result = new PauseTimeline(database, Duration.ofMillis(400))
                    .unfenced("Redlock", a, b, PauseTimelineIT::sleepPastTheLease, ROUNDS);

            assertThat(result.writesAttempted()).isEqualTo(2 * ROUNDS);
            assertThat(result.lostUpdates())
                    .as("B's sale overwritten every round")
                    .isEqualTo(ROUNDS);
            assertThat(result.staleWritesRejected()).isZero();
        }
    }

    @Test
    void aFencedLeaseAndTheFenceRejectThePausedWrite() throws Exception {
        JdbcFence fence = JdbcFence.builder().build();
        try (Connection c = database.getConnection()) {
            fence.createTable(c);
        }
        try (CuratorFramework clientA = CuratorFrameworkFactory.newClient(
                        zookeeper.getConnectString(), 5_000, 2_000, new RetryOneTime(100));
                ZooKeeperLock b = ZooKeeperLock.builder()
                        .connectString(zookeeper.getConnectString())
                        .build()) {
            clientA.start();
            try (ZooKeeperLock a = ZooKeeperLock.builder().client(clientA).build()) {
                PauseTimeline.Result result = new PauseTimeline(database, Duration.ofSeconds(10))
                        .fenced(
                                "ZooKeeper + JdbcFence",
                                a,
                                b,
                                leaseA -> expireDuringThePause(clientA, leaseA),
                                fence,
                                ROUNDS);

                assertThat(result.writesAttempted()).isEqualTo(2 * ROUNDS);
                assertThat(result.lostUpdates()).isZero();
                assertThat(result.staleWritesRejected())
                        .as("A's late write refused every round")
                        .isEqualTo(ROUNDS);
            }
        }
    }

    /** The paused process notices nothing; meanwhile its lease runs out and its keys expire. */
    private static void sleepPastTheLease(Lease lease) {
        TestTime.await(Duration.ofSeconds(5), () -> !lease.isValid(), "A's lease to run out");
    }

    /** While A is paused, the ensemble stops hearing from it and ends its session. */
    private static void expireDuringThePause(CuratorFramework clientA, FencedLease lease) {
        try {
            ZooKeeperServers.expireSession(clientA, zookeeper.getConnectString());
        } catch (Exception e) {
            throw new AssertionError("could not expire A's session", e);
        }
        TestTime.await(Duration.ofSeconds(10), () -> lease.lost().isDone(), "A's lease to be lost");
    }
}
