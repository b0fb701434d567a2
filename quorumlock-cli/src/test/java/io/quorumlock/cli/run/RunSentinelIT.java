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

            // A run that starts as the master dies waits for the failover, and locks on the new master.
            RedisServer old = redis.master();
            RedisServer replica = redis.servers().get(redis.servers().get(0) == old ? 1 : 0);
            Files.delete(ran);
            old.stop();
            String[] waiting = new String[args.length + 2];
            System.arraycopy(args, 0, waiting, 0, 6);
            waiting[6] = "--wait";
            waiting[7] = "30s";
            System.arraycopy(args, 6, waiting, 8, args.length - 6);
            try (RunProcess run = RunProcess.start(dir, waiting)) {
                redis.awaitNamedMaster(replica);
                assertThat(run.exitCode(Duration.ofSeconds(40))).as(run.err()).isZero();
                // What run says is its own lines: no logger names; and a lock granted by its one node
                // is no bare quorum, whatever the check beside the attempt found while the master was down.
                assertThat(run.err()).doesNotContain("io.quorumlock.").doesNotContain("bare quorum");
            }
            assertThat(ran).exists();
        }
    }

    private static String keyOn(RedisServer server) {
        try (Jedis jedis = server.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
            return jedis.get("job");
        }
    }
}
