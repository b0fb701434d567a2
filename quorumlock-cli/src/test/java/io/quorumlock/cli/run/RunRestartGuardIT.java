package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.TestTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code quorumlock run} on Redis nodes just started, without persistence: the restart guard keeps
 * their votes out for --ttl. Nobody holds the lock, so that is no busy lock (75) nor a service that
 * is down (69): its own line and exit code 73, and with --wait long enough, the command runs.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunRestartGuardIT {

    @TempDir
    Path dir;

    @Test
    void freshNodesRefuseWithTheRestartGuardsOwnLineAndExitCode73ThenGrantOnceUpForTheTtl() throws Exception {
        try (RedisServers nodes = RedisServers.start(3, false)) {
            String uris = String.join(",", nodes.uris());
            try (RunProcess run =
                    RunProcess.start(dir, "--redis", uris, "--resource", "job", "--ttl", "60s", "--", "true")) {
                assertThat(run.exitCode()).as(run.err()).isEqualTo(RunCommand.RESTART_GUARD);
                assertThat(run.err().lines().toList())
                        .singleElement()
                        .asString()
                        .startsWith("quorumlock run: lock 'job' not acquired: no node names a holder, but the restart"
                                + " guard keeps the votes of nodes that (re)started less than --ttl 60s ago out for ")
                        .containsPattern("out for [0-9]+ s more \\(one attempt, --wait 0; 0 of 3 votes, 2 needed\\): ")
                        .contains("excluded: ", "restart guard: up ")
                        .containsPattern("wait for them with --wait [0-9]+s")
                        .doesNotContain("held by another owner");
            }
            // A TTL the nodes have nearly been up for: run waits for the guard, not for a release.
            long start = System.nanoTime();
            try (RunProcess run = RunProcess.start(
                    dir, "--redis", uris, "--resource", "job", "--ttl", "3s", "--wait", "20s", "--", "true")) {
                assertThat(run.exitCode(Duration.ofSeconds(40))).as(run.err()).isZero();
            }
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TestTime.scaled(Duration.ofSeconds(20)));
        }
    }
}
