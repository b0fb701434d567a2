package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisSentinels;
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

/** {@code quorumlock run --redis redis-sentinel://...}: the single-node lock on the master Sentinel names. */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunSentinelIT {

    @TempDir
    Path dir;

    @Test
    void runLocksOnTheMasterTheSentinelsNameAndFollowsAFailover() throws Exception {
        try (RedisSentinels redis = RedisSentinels.start()) {
            Path ran = dir.resolve("ran");
            // The address keeps the commas between its sentinels: one --redis value, one node.
            String[] args = {
                "--redis",
                redis.uri(),
                "--resource",
                "job",
                "--ttl",
                "5s",
                "--",
                "sh",
                "-c",
                "echo $QUORUMLOCK_RESOURCE > " + ran
            };
            try (RunProcess run = RunProcess.start(dir, args)) {
                assertThat(run.exitCode(Duration.ofSeconds(30))).as(run.err()).isZero();
            }
            assertThat(Files.readString(ran).trim()).isEqualTo("job");
            assertThat(keyOn(redis.master())).as("released").isNull();

            RedisServer promoted = redis.killMaster();
            Files.delete(ran);
            try (RunProcess run = RunProcess.start(dir, args)) {
                assertThat(run.exitCode(Duration.ofSeconds(30))).as(run.err()).isZero();
            }
            assertThat(ran).exists();
            assertThat(promoted.isRunning()).isTrue();
        }
    }

    private static String keyOn(RedisServer server) {
        try (Jedis jedis = server.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
            return jedis.get("job");
        }
    }
}
