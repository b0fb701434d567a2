package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.cli.CliRun;
import io.quorumlock.testkit.RedisCluster;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.TestTime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * {@code quorumlock run --redis redis-cluster://...} and {@code check}: the single-node lock on
 * the master of the resource's slot, the cluster named by its seeds in one {@code --redis}
 * value.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunClusterIT {

    @TempDir
    Path dir;

    @Test
    void runLocksOnTheMasterOfTheResourcesSlotAndCheckPrintsTheCluster() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3, 1)) {
            String seeds = "redis-cluster://" + cluster.masters().get(0).host() + ":"
                    + cluster.masters().get(0).port() + ","
                    + cluster.masters().get(1).host() + ":"
                    + cluster.masters().get(1).port();
            RedisServer master = cluster.masterOf("nightly-report");
            Path ran = dir.resolve("ran");
            try (RunProcess run = RunProcess.start(
                    dir,
                    "--redis",
                    seeds,
                    "--resource",
                    "nightly-report",
                    "--",
                    "sh",
                    "-c",
                    "redis-cli -p " + master.port() + " GET nightly-report > " + ran)) {
                assertThat(run.exitCode(Duration.ofSeconds(30))).as(run.err()).isZero();
                assertThat(run.err()).doesNotContain("io.quorumlock.");
            }
            assertThat(Files.readString(ran).trim())
                    .as("the key on the master of its slot while the command ran")
                    .isNotEmpty();
            try (Jedis jedis = master.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
                assertThat(jedis.get("nightly-report")).as("released").isNull();
            }

            CliRun check = CliRun.of(
                    "check",
                    "--redis",
                    seeds,
                    "--config",
                    Files.writeString(dir.resolve("empty"), "").toString());
            String out = check.out().replaceAll("\\s+", " ");
            assertThat(check.exitCode()).as(check.out() + check.err()).isEqualTo(0);
            assertThat(out)
                    .contains("a Redis Cluster of 3 master(s) with 3 replica(s) up")
                    .contains("its first master has 1 connected replica(s)")
                    .contains("each grant and renewal waits for them (WAIT)")
                    .contains("or accept that a master restarted empty forgets the locks it held")
                    .doesNotContain("restartGuard")
                    .doesNotContain("ERROR");
        }
    }
}
