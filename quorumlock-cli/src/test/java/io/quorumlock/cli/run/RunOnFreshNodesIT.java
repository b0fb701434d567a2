package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.TestTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code quorumlock nodes} followed at once by {@code quorumlock run}, as a user tries the lock: the
 * restart guard lets nodes that fsync every write vote at once, and keeps fresh nodes without
 * persistence out for a TTL.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunOnFreshNodesIT {

    private static final String READY = "Ctrl-C or SIGTERM stops them.";

    @TempDir
    Path dir;

    /** The URIs of the {@code --redis} line of {@code quorumlock nodes}, once it is ready. */
    private static String redisOption(RunProcess nodes) {
        TestTime.await(
                Duration.ofSeconds(30),
                () -> nodes.out().contains(READY) || !nodes.isAlive(),
                "quorumlock nodes to print '" + READY + "'");
        return nodes.out()
                .lines()
                .filter(line -> line.startsWith("--redis "))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no --redis line: " + nodes.out() + nodes.err()))
                .substring("--redis ".length());
    }

    private RunProcess run(String redis) {
        return RunProcess.start(dir, "--redis", redis, "--resource", "job", "--ttl", "10s", "--", "true");
    }

    private static void stop(RunProcess nodes) throws InterruptedException {
        nodes.terminate();
        assertThat(nodes.exitCode(Duration.ofSeconds(20))).as(nodes.err()).isZero();
    }

    @Test
    void persistentNodesJustStartedGrantTheLockAtOnce() throws Exception {
        try (RunProcess nodes = RunProcess.command(dir, Map.of(), "nodes", "--count", "3", "--persistent")) {
            String redis = redisOption(nodes);
            try (RunProcess run = run(redis)) {
                assertThat(run.exitCode()).as(run.err()).isZero();
            }
            stop(nodes);
        }
    }

    @Test
    void nodesWithoutPersistenceJustStartedDoNot() throws Exception {
        try (RunProcess nodes = RunProcess.command(dir, Map.of(), "nodes", "--count", "3")) {
            String redis = redisOption(nodes);
            try (RunProcess run = run(redis)) {
                assertThat(run.exitCode()).as(run.err()).isEqualTo(75);
                assertThat(run.err()).containsPattern("excluded: .*restart guard: up [0-9.]+ s");
            }
            stop(nodes);
        }
    }
}
