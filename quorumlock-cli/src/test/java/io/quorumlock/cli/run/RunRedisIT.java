package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code quorumlock run} over three real Redis nodes (Redlock), as separate processes: mutual
 * exclusion, waiting, a lease lost to frozen nodes, exit codes and signals.
 *
 * <p>The restart guard stays on, as {@code run} uses it (on with several nodes): a node up for less
 * than the TTL does not vote. So these runs use a short TTL, and each test first waits until the
 * nodes have been up longer than that (only the first test of the class waits). It is 5 s, not
 * less: beside two CPU burners a run's JVM was kept off the CPU for about 2 s between its grant and
 * its first renewal, and a 2 s lease ran out there.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunRedisIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final Duration TTL = Duration.ofSeconds(5);
    private static final Duration GRACE = Duration.ofMillis(100); // under the notice of loss, ttl/10

    @TempDir
    Path dir;

    private String nodes;

    @BeforeEach
    void nodesOlderThanTheTtl() {
        nodes = String.join(",", redis.uris());
        for (int i = 0; i < redis.size(); i++) {
            RedisServer node = redis.get(i);
            node.awaitUpLongerThan(TTL);
        }
    }

    /** {@code run} over the three nodes with the TTL, and more options, then {@code --} and the command. */
    private RunProcess run(Map<String, String> env, List<String> options, String... command) {
        List<String> args =
                new ArrayList<>(List.of("--redis", nodes, "--resource", "job", "--ttl", TTL.toMillis() + "ms"));
        args.addAll(options);
        args.add("--");
        args.addAll(List.of(command));
        return RunProcess.start(dir, env, args.toArray(String[]::new));
    }

    private RunProcess run(List<String> options, String... command) {
        return run(Map.of(), options, command);
    }

    private List<String> lines(String file) throws IOException {
        Path path = dir.resolve(file);
        return Files.exists(path) ? Files.readAllLines(path) : List.of();
    }

    /** The begin/end lines of the children that wrote {@code file}, checked to come in pairs, never interleaved. */
    private List<String> exclusivePairs(String file) throws IOException {
        List<String> lines = lines(file);
        assertThat(lines.size() % 2).as("whole pairs: " + lines).isZero();
        for (int i = 0; i < lines.size(); i += 2) {
            assertThat(lines.get(i)).as("line " + i + " of " + lines).startsWith("begin ");
            assertThat(lines.get(i + 1))
                    .as("the same child ends before another begins: " + lines)
                    .isEqualTo("end " + lines.get(i).substring("begin ".length()));
        }
        return lines;
    }

    private String critical(String file) {
        Path f = dir.resolve(file);
        return "echo begin $$ >> " + f + "; sleep 1; echo end $$ >> " + f;
    }

    @Test
    void twoRunsAtOnceNeverOverlapAndTheLoserExits75WithOneLineSayingWhy() throws Exception {
        // The winner holds the lock until the loser has exited (two JVMs may start seconds apart on
        // a loaded machine) or until a second child has begun, which the pairs below reject.
        Path proceed = dir.resolve("proceed");
        Path f = dir.resolve("f");
        String holdUntilProceed =
                "echo begin $$ >> " + f + "; while [ ! -e " + proceed + " ]; do sleep 0.05; done; echo end $$ >> " + f;
        try (RunProcess a = run(List.of(), "sh", "-c", holdUntilProceed);
                RunProcess b = run(List.of(), "sh", "-c", holdUntilProceed)) {
            TestTime.await(
                    Duration.ofSeconds(30),
                    () -> !a.isAlive() || !b.isAlive() || begun(f) > 1,
                    "one run to exit, or both to begin");
            Files.writeString(proceed, "");
            int codeA = a.exitCode();
            int codeB = b.exitCode();

            assertThat(List.of(codeA, codeB)).as(a.err() + b.err()).containsExactlyInAnyOrder(0, 75);
            RunProcess loser = codeA == 75 ? a : b;
            assertThat(loser.err().lines().toList())
                    .singleElement()
                    .asString()
                    .startsWith("quorumlock run: lock 'job' not acquired (one attempt, --wait 0; ")
                    .containsPattern("[01] of 3 votes, 2 needed\\): ")
                    // a node that answers after two others refused is named too ("no reply before the decision")
                    .containsPattern("held by another owner: redis://127\\.0\\.0\\.1:\\d+");
            assertThat(exclusivePairs("f")).as("only the winner ran").hasSize(2);
            assertThat(a.out() + b.out()).isEmpty();
        }
    }

    /**
     * A node whose every reply comes 200 ms late (a busy host, a far node): with the library's 50
     * ms node timeout a single attempt refused the free lock; run waits up to 500 ms for a silent
     * node, so a cron job is not skipped for a slow answer.
     */
    @Test
    void aSingleAttemptOnANodeThatAnswersLateStillTakesTheFreeLock() throws Exception {
        try (io.quorumlock.testkit.FaultProxy proxy = io.quorumlock.testkit.FaultProxy.inFrontOf(redis.get(0))) {
            proxy.latency(
                    io.quorumlock.testkit.FaultProxy.Direction.SERVER_TO_CLIENT, Duration.ofMillis(200), Duration.ZERO);
            try (RunProcess run = RunProcess.start(
                    dir, "--redis", "redis://" + proxy.address(), "--resource", "late", "--wait", "0s", "--", "true")) {
                assertThat(run.exitCode()).as(run.err()).isZero();
            }
        }
    }

    @Test
    void withWaitTheSecondRunsAfterTheFirst() throws Exception {
        try (RunProcess a = run(List.of("--wait", "10s"), "sh", "-c", critical("f"));
                RunProcess b = run(List.of("--wait", "10s"), "sh", "-c", critical("f"))) {
            assertThat(a.exitCode()).as(a.err()).isZero();
            assertThat(b.exitCode()).as(b.err()).isZero();
            assertThat(exclusivePairs("f")).hasSize(4);
            assertThat(a.err() + b.err()).isEmpty();
        }
    }

    @Test
    void aLeaseLostToFrozenNodesTerminatesTheCommandThenKillsItAfterTheGraceAndExits76() throws Exception {
        Path started = dir.resolve("started");
        // The command ignores SIGTERM, so only the SIGKILL after --grace ends it and its sleep.
        String script = "trap '' TERM; sleep 60 & echo $$ $! > " + started + "; wait; wait; echo finished";
        try (RunProcess run = run(List.of("--grace", GRACE.toMillis() + "ms"), "sh", "-c", script)) {
            TestTime.await(
                    TestTime.scaledByLoad(Duration.ofSeconds(20)),
                    () -> Files.exists(started) && size(started) > 0,
                    "the command");
            List<Long> pids = pids(started);
            redis.get(0).pause();
            redis.get(1).pause();
            long frozen = System.nanoTime();

            assertThat(run.exitCode()).as(run.err()).isEqualTo(76);
            Duration took = Duration.ofNanos(System.nanoTime() - frozen);
            assertThat(took).isLessThan(TestTime.scaled(TTL.plus(GRACE).plusSeconds(1)));
            assertThat(took).as("SIGKILL only after the grace").isGreaterThanOrEqualTo(GRACE);
            assertThat(run.err().lines().toList())
                    .singleElement()
                    .asString()
                    .startsWith("quorumlock run: lease on 'job' lost: extension got ")
                    .contains("timed out", "stopping the command: SIGTERM now, SIGKILL after --grace 100 ms");
            assertThat(run.out()).isEmpty();
            for (long pid : pids) {
                TestTime.await(Duration.ofSeconds(2), () -> RunProcess.isGone(pid), "process " + pid + " to be gone");
            }
        }
    }

    @Test
    void onLostContinueReportsTheLossAndLetsTheCommandFinishWithItsOwnCode() throws Exception {
        Path started = dir.resolve("started");
        Path proceed = dir.resolve("proceed");
        String script = "echo $$ > " + started + "; while [ ! -e " + proceed + " ]; do sleep 0.05; done; exit 4";
        try (RunProcess run = run(List.of("--on-lost=continue"), "sh", "-c", script)) {
            TestTime.await(
                    TestTime.scaledByLoad(Duration.ofSeconds(20)),
                    () -> Files.exists(started) || !run.isAlive(),
                    "the command");
            assertThat(Files.exists(started))
                    .as("the command started; run said: %s", run.err())
                    .isTrue();
            redis.get(0).pause();
            redis.get(1).pause();
            TestTime.await(Duration.ofSeconds(5), () -> !run.err().isEmpty(), "the report of the loss");
            assertThat(run.isAlive()).isTrue();
            Files.writeString(proceed, "");

            assertThat(run.exitCode()).as(run.err()).isEqualTo(4);
            assertThat(run.err().lines().toList())
                    .singleElement()
                    .asString()
                    .startsWith("quorumlock run: lease on 'job' lost: extension got ")
                    .endsWith("; the command goes on (--on-lost=continue), though another holder may now run at the"
                            + " same time");
        }
    }

    @Test
    void exitsWithTheCommandsExitCodeAnd128PlusTheSignalThatEndedIt() throws Exception {
        try (RunProcess seven = run(List.of(), "sh", "-c", "exit 7")) {
            assertThat(seven.exitCode()).as(seven.err()).isEqualTo(7);
            assertThat(seven.err()).isEmpty();
        }
        try (RunProcess killed = run(List.of(), "sh", "-c", "kill -KILL $$")) {
            assertThat(killed.exitCode()).as(killed.err()).isEqualTo(128 + 9);
            assertThat(killed.err()).isEmpty();
        }
    }

    @Test
    void sigtermToRunReachesTheCommandAndTheLockIsReleasedAfterItExits() throws Exception {
        Path started = dir.resolve("started");
        Path marker = dir.resolve("marker");
        String script = "trap 'echo TERM > " + marker + "; kill $p; exit 3' TERM; sleep 60 & p=$!; echo $$ > " + started
                + "; wait $p";
        try (RunProcess run = run(List.of(), "sh", "-c", script)) {
            TestTime.await(TestTime.scaledByLoad(Duration.ofSeconds(20)), () -> Files.exists(started), "the command");
            run.terminate();

            assertThat(run.exitCode()).as(run.err()).isEqualTo(3);
            assertThat(Files.readString(marker)).isEqualTo("TERM\n");
            assertThat(run.err()).isEmpty();
        }
        try (RunProcess next = run(List.of(), "true")) {
            assertThat(next.exitCode())
                    .as("released: the next run acquires at once; " + next.err())
                    .isZero();
        }
    }

    @Test
    void theCommandSeesTheResourceAndTheLeasesEndButNoTokenAndNoPassword() throws Exception {
        Instant before = Instant.now();
        try (RunProcess run = run(
                Map.of("QUORUMLOCK_FENCING_TOKEN", "999", "QUORUMLOCK_REDIS_PASSWORD", ""),
                List.of(),
                "sh",
                "-c",
                "echo \"$QUORUMLOCK_RESOURCE|$QUORUMLOCK_VALID_UNTIL|${QUORUMLOCK_FENCING_TOKEN-unset}|"
                        + "${QUORUMLOCK_REDIS_PASSWORD-unset}\"")) {
            assertThat(run.exitCode()).as(run.err()).isZero();
            String[] seen = run.out().trim().split("\\|", -1);
            assertThat(seen[0]).isEqualTo("job");
            Instant validUntil = Instant.parse(seen[1]);
            assertThat(validUntil).isAfter(before).isBefore(Instant.now().plus(TTL));
            assertThat(seen[2]).as("a Redis lease has no fencing token").isEqualTo("unset");
            assertThat(seen[3]).isEqualTo("unset");
        }
    }

    /** How many children have begun in {@code file}; 0 before it exists. */
    private static long begun(Path file) {
        try (var lines = Files.lines(file)) {
            return lines.filter(line -> line.startsWith("begin ")).count();
        } catch (IOException | java.io.UncheckedIOException e) {
            return 0;
        }
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0;
        }
    }

    private static List<Long> pids(Path file) throws IOException {
        return List.of(Files.readString(file).trim().split(" ")).stream()
                .map(Long::parseLong)
                .toList();
    }
}
