package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

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
 * {@code quorumlock run --wait-for-replicas N}: a grant counts once N replicas acknowledged it. A
 * lone master has none to acknowledge it, so its grant does not count and is taken back.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunWaitForReplicasIT {

    @TempDir
    Path dir;

    @Test
    void aGrantThatNoReplicaAcknowledgedDoesNotCountAndNoneAsksForNoReplica() throws Exception {
        try (RedisServer master = RedisServer.start()) {
            Path ran = dir.resolve("ran");
            try (RunProcess run = RunProcess.start(
                    dir,
                    "--redis",
                    master.uri(),
                    "--wait-for-replicas",
                    "1",
                    "--resource",
                    "job",
                    "--",
                    "touch",
                    ran.toString())) {
                assertThat(run.exitCode(Duration.ofSeconds(30))).as(run.err()).isEqualTo(69); // unavailable
                assertThat(run.err())
                        .contains("lock 'job' not acquired: the lock service is unavailable")
                        .contains("NOREPLICAS 0 of 1 replica(s) acknowledged the write within 250 ms")
                        .doesNotContain("io.quorumlock.");
            }
            assertThat(ran).doesNotExist();
            assertThat(keyOn(master))
                    .as("the grant that did not count, taken back")
                    .isNull();

            try (RunProcess run = RunProcess.start(
                    dir,
                    "--redis",
                    master.uri(),
                    "--wait-for-replicas",
                    "0",
                    "--resource",
                    "job",
                    "--",
                    "touch",
                    ran.toString())) {
                assertThat(run.exitCode(Duration.ofSeconds(30))).as(run.err()).isZero();
            }
            assertThat(Files.exists(ran)).isTrue();
        }
    }

    @Test
    void redlockAndBadCountsAreRefusedNamingTheOption() throws Exception {
        try (RunProcess run = RunProcess.start(
                dir,
                "--redis",
                "redis://127.0.0.1:1,redis://127.0.0.1:2,redis://127.0.0.1:3",
                "--wait-for-replicas",
                "1",
                "--resource",
                "job",
                "--",
                "true")) {
            assertThat(run.exitCode(Duration.ofSeconds(30))).isEqualTo(2);
            assertThat(run.err())
                    .contains("--wait-for-replicas is for the single-node lock")
                    .contains("leave --wait-for-replicas out")
                    .doesNotContain("waitForReplicas");
        }
        try (RunProcess run = RunProcess.start(
                dir,
                "--redis",
                "redis://127.0.0.1:1",
                "--wait-for-replicas",
                "65",
                "--resource",
                "job",
                "--",
                "true")) {
            assertThat(run.exitCode(Duration.ofSeconds(30))).isEqualTo(2);
            assertThat(run.err()).contains("--wait-for-replicas takes a number of replicas from 0 to 64, not '65'");
        }
    }

    private static String keyOn(RedisServer server) {
        try (Jedis jedis = server.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
            return jedis.get("job");
        }
    }
}
