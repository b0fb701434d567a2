package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A waiting {@code quorumlock run} parks its command's start (a shell started beforehand, which
 * execs the command once the lock is granted), on a real Redis node: the command starts only
 * under the lease, with the lease's values, in the parked process; a run that gives up or is
 * killed never runs it and leaves nothing behind.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunParkedStartIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(1);

    @TempDir
    Path dir;

    private RunProcess run(Map<String, String> env, String wait, String... command) {
        List<String> args = new ArrayList<>(
                List.of("--redis", redis.uris().get(0), "--resource", "job", "--ttl", "5s", "--wait", wait, "--"));
        args.addAll(List.of(command));
        return RunProcess.start(dir, env, args.toArray(String[]::new));
    }

    /** A run that holds the lock until {@code go} exists; returned once its command runs. */
    private RunProcess holder(Path go) {
        Path held = dir.resolve("held");
        RunProcess holder =
                run(Map.of(), "0s", "sh", "-c", "touch " + held + "; while [ ! -e " + go + " ]; do sleep 0.02; done");
        TestTime.await(TestTime.scaledByLoad(Duration.ofSeconds(20)), () -> Files.exists(held), "the holder's command");
        return holder;
    }

    @Test
    void aWaitingRunStartsItsCommandInTheParkedShellOnlyOnceGrantedWithTheLeasesValues() throws Exception {
        Path go = dir.resolve("go");
        try (RunProcess holder = holder(go);
                RunProcess waiter = run(
                        // values a user's environment may hold: the lease's replace them, the rest stay
                        Map.of(
                                "QUORUMLOCK_FENCING_TOKEN",
                                "999",
                                "QUORUMLOCK_VALID_UNTIL",
                                "never",
                                "token",
                                "mine",
                                "QUORUMLOCK_REDIS_PASSWORD",
                                ""),
                        "30s",
                        "sh",
                        "-c",
                        "echo \"$$|$QUORUMLOCK_RESOURCE|$QUORUMLOCK_VALID_UNTIL|${QUORUMLOCK_FENCING_TOKEN-unset}"
                                + "|$token|${QUORUMLOCK_REDIS_PASSWORD-unset}\"; exit 7")) {
            ProcessHandle parked = waiter.parkedShell();
            Path pipe = RunProcess.pipeOf(parked);
            assertThat(waiter.out()).as("the command waits for the lock").isEmpty();
            Instant released = Instant.now();
            Files.writeString(go, "");

            assertThat(waiter.exitCode()).as(waiter.err()).isEqualTo(7);
            assertThat(holder.exitCode()).as(holder.err()).isZero();
            String[] seen = waiter.out().trim().split("\\|", -1);
            assertThat(seen[0]).as("the command ran in the parked process").isEqualTo(Long.toString(parked.pid()));
            assertThat(seen[1]).isEqualTo("job");
            assertThat(Instant.parse(seen[2]))
                    .isAfter(released)
                    .isBefore(Instant.now().plusSeconds(5));
            assertThat(seen[3]).as("a Redis lease has no fencing token").isEqualTo("unset");
            assertThat(seen[4]).isEqualTo("mine");
            assertThat(seen[5])
                    .as("the lock's password, kept from the parked shell")
                    .isEqualTo("unset");
            assertThat(waiter.err()).isEmpty();
            TestTime.await(Duration.ofSeconds(5), () -> !Files.exists(pipe.getParent()), "the pipe removed");
        }
    }

    @Test
    void aRunThatGivesUpWaitingNeverRunsItsCommandAndLeavesNothingBehind() throws Exception {
        Path go = dir.resolve("go");
        Path marker = dir.resolve("marker");
        try (RunProcess holder = holder(go);
                RunProcess waiter = run(Map.of(), "3s", "touch", marker.toString())) {
            ProcessHandle parked = waiter.parkedShell();
            Path pipe = RunProcess.pipeOf(parked);

            assertThat(waiter.exitCode()).as(waiter.err()).isEqualTo(RunCommand.NOT_ACQUIRED);
            TestTime.await(Duration.ofSeconds(5), () -> !parked.isAlive(), "the parked shell to end");
            assertThat(Files.exists(pipe.getParent()))
                    .as("the pipe's directory")
                    .isFalse();
            Files.writeString(go, "");
            assertThat(holder.exitCode()).isZero();
            assertThat(marker).doesNotExist();
        }
    }

    @Test
    void aRunKilledWhileWaitingNeverRunsItsCommand() throws Exception {
        Path go = dir.resolve("go");
        Path marker = dir.resolve("marker");
        try (RunProcess holder = holder(go);
                RunProcess waiter = run(Map.of(), "30s", "touch", marker.toString())) {
            ProcessHandle parked = waiter.parkedShell();
            Path pipe = RunProcess.pipeOf(parked);
            waiter.kill(); // SIGKILL: run cannot clean up; its end of the pipe closes with it

            TestTime.await(
                    Duration.ofSeconds(5), () -> RunProcess.isGone(parked.pid()), "the parked shell to end by itself");
            Files.writeString(go, "");
            assertThat(holder.exitCode()).isZero();
            assertThat(marker).doesNotExist();
            Files.deleteIfExists(pipe); // what SIGKILL left in the temporary folder
            Files.deleteIfExists(pipe.getParent());
        }
    }
}
