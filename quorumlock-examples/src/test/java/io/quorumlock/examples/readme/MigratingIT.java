package io.quorumlock.examples.readme;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * The examples of docs/migrating.md run as pasted, against one real redis-server (the node that
 * an application shares with the library it leaves) and one ZooKeeper server: only the addresses
 * are swapped for the test's.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MigratingIT {

    private static final Readme DOCS = Readme.load();
    private static final String PAGE = "docs/migrating.md";
    private static final String NODE = ".node(\"redis://redis-1:6379\")";

    @TempDir
    static Path classes;

    private static RedisServer redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void fromRedissonTheSameNameReentersAndALeaseNotKeptAliveRunsOut() throws Exception {
        assertThat(runOnRedis("FromRedisson"))
                .isEqualTo("counter held 2 times, under one lease\n"
                        + "report:daily is not kept alive: its key runs out within 10 s\n");
        try (Jedis jedis = redis.connect(Duration.ofSeconds(2))) {
            assertThat(jedis.exists("counter"))
                    .as("released by the last unlock")
                    .isFalse();
            assertThat(jedis.pttl("report:daily"))
                    .as("the lease left to run out")
                    .isBetween(1L, 10_000L);
        }
    }

    @Test
    void fromShedLockTheJobRunsUnderTheProvider() throws Exception {
        assertThat(runOnRedis("FromShedLock")).isEqualTo("one instance sends the daily report\n");
    }

    @Test
    void fromSpringIntegrationTheRegistryLocksTheKeyUnderItsPrefix() throws Exception {
        assertThat(runOnRedis("FromSpringIntegration")).isEqualTo("order 42 handled by one instance\n");
    }

    @Test
    void aSemaphoreOfThreePermitsServesThreeCallersOfFour() throws Exception {
        String out = runOnRedis("FromRedissonSemaphore");
        assertThat(out)
                .matches("caller 1: permit [123]\ncaller 2: permit [123]\ncaller 3: permit [123]\n"
                        + "caller 4: no permit free\n");
        assertThat(out.lines().limit(3).map(line -> line.substring(line.length() - 1)))
                .as("three different permits")
                .doesNotHaveDuplicates();
    }

    @Test
    void fromCuratorTheLockTakesItsClient(@TempDir Path dir) throws Exception {
        assertThat(runOnZooKeeper("FromCurator", dir)).matches("invoices locked, fencing token \\d+\n");
    }

    @Test
    void fromCuratorTheSemaphoreCountsCuratorsLeases(@TempDir Path dir) throws Exception {
        assertThat(runOnZooKeeper("FromCuratorSemaphore", dir)).isEqualTo("leases held: 3 of 3; a fourth: refused\n");
    }

    /** Runs the block of class {@code name} on a ZooKeeper server of its own, its data in {@code dir}. */
    private static String runOnZooKeeper(String name, Path dir) throws Exception {
        try (TestingServer zookeeper = ZooKeeperServers.server(dir)) {
            return SnippetCompiler.run(
                    block(name),
                    Map.of("zk1:2181,zk2:2181,zk3:2181", zookeeper.getConnectString()),
                    Files.createTempDirectory(classes, "run"));
        }
    }

    /**
     * Runs the block of class {@code name} on the test's node. The node was started a moment
     * ago: the restart guard would keep it out for the TTL, so it is turned off.
     */
    private static String runOnRedis(String name) throws Exception {
        return SnippetCompiler.run(
                block(name),
                Map.of(NODE, ".node(\"" + redis.uri() + "\").restartGuard(false)"),
                Files.createTempDirectory(classes, "run"));
    }

    private static Readme.Block block(String name) {
        Readme.Block block = DOCS.java(name);
        assertThat(block.page()).isEqualTo(PAGE);
        return block;
    }
}
