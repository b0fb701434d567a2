package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.cli.CliRun;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code quorumlock run --permits 3} as separate processes, on three Redis nodes and on
 * PostgreSQL: at most three commands at once, each told its permit and, on PostgreSQL, the permit's
 * own fencing token.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunPermitsIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    /** Ten JVMs start at once on two cores: a lease must outlast a renewal thread kept off the CPU for seconds. */
    private static final Duration TTL = Duration.ofSeconds(6);

    @TempDir
    Path dir;

    /** The lock options of {@code backend}: the nodes up longer than the TTL (the restart guard), or the table made. */
    private List<String> lockOptions(String backend) throws Exception {
        if (backend.equals("redis")) {
            for (int i = 0; i < redis.size(); i++) {
                RedisServer node = redis.get(i);
                node.awaitUpLongerThan(TTL);
            }
            return List.of("--redis", String.join(",", redis.uris()));
        }
        List<String> options = List.of("--jdbc", postgres.jdbcUrl(), "--jdbc-user", postgres.user());
        List<String> check = new ArrayList<>(List.of("check"));
        check.addAll(options);
        check.add("--create-table");
        CliRun created = CliRun.of(check.toArray(String[]::new));
        assertThat(created.exitCode()).as(created.err()).isZero();
        return options;
    }

    private RunProcess run(List<String> lockOptions, String resource, String wait, String script) {
        List<String> args = new ArrayList<>(lockOptions);
        args.addAll(List.of(
                "--resource", resource, "--permits", "3", "--ttl", TTL.toMillis() + "ms", "--wait", wait, "--"));
        args.addAll(List.of("sh", "-c", script));
        return RunProcess.start(dir, Map.of(), args.toArray(String[]::new));
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgresql"})
    void tenRunsHoldAtMostThreePermitsAtOnce(String backend) throws Exception {
        List<String> options = lockOptions(backend);
        Path log = dir.resolve("permits.log");
        String script = "echo \"begin $QUORUMLOCK_PERMIT ${QUORUMLOCK_FENCING_TOKEN:-none} $QUORUMLOCK_RESOURCE\" >> "
                + log + "; sleep 1; echo \"end $QUORUMLOCK_PERMIT\" >> " + log;
        List<RunProcess> runs = new ArrayList<>();
        try {
            for (int i = 0; i < 10; i++) {
                runs.add(run(options, "backups-" + backend, "120s", script));
            }
            for (RunProcess run : runs) {
                assertThat(run.exitCode(Duration.ofSeconds(150))).as(run.err()).isZero();
            }
        } finally {
            for (RunProcess run : runs) {
                run.close();
            }
        }

        List<String> lines = Files.readAllLines(log);
        assertThat(lines).hasSize(20);
        int running = 0;
        int most = 0;
        Map<String, Boolean> held = new HashMap<>();
        Map<String, List<Long>> tokens = new HashMap<>();
        for (String line : lines) {
            String[] fields = line.split(" ");
            String permit = fields[1];
            assertThat(permit).isIn("1", "2", "3");
            if (fields[0].equals("begin")) {
                assertThat(held.getOrDefault(permit, false))
                        .as("permit %s begun twice at once: %s", permit, lines)
                        .isFalse();
                held.put(permit, true);
                running++;
                most = Math.max(most, running);
                assertThat(fields[3]).isEqualTo("backups-" + backend);
                if (backend.equals("postgresql")) {
                    tokens.computeIfAbsent(permit, p -> new ArrayList<>()).add(Long.parseLong(fields[2]));
                } else {
                    assertThat(fields[2]).isEqualTo("none");
                }
            } else {
                held.put(permit, false);
                running--;
            }
        }
        System.out.println(backend + ": 10 runs of --permits 3, at most " + most
                + " commands at once; tokens by permit " + tokens);
        assertThat(most).as("commands at once: %s", lines).isBetween(1, 3);
        if (backend.equals("postgresql")) {
            assertThat(tokens.values().stream().mapToInt(List::size).sum()).isEqualTo(10);
            assertThat(tokens)
                    .allSatisfy((permit, inOrder) -> assertThat(inOrder)
                            .isSortedAccordingTo(Long::compare)
                            .doesNotHaveDuplicates());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgresql"})
    void aRunThatFindsEveryPermitHeldNamesTheHoldersAndExits75(String backend) throws Exception {
        List<String> options = lockOptions(backend);
        Path started = dir.resolve("started");
        List<RunProcess> holders = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                holders.add(run(
                        options, "nightly-" + backend, "30s", "echo $QUORUMLOCK_PERMIT >> " + started + "; sleep 60"));
            }
            TestTime.await(
                    Duration.ofSeconds(60),
                    () -> Files.exists(started) && lines(started).size() == 3,
                    "three commands holding the three permits");
            try (RunProcess refused = run(options, "nightly-" + backend, "0s", "true")) {
                assertThat(refused.exitCode()).as(refused.err()).isEqualTo(RunCommand.NOT_ACQUIRED);
                assertThat(refused.err())
                        .startsWith("quorumlock run: no permit of 'nightly-" + backend
                                + "' acquired (3 permits; one attempt each, --wait 0): nightly-" + backend
                                + "#1 held by ")
                        .contains("nightly-" + backend + "#2 held by ", "nightly-" + backend + "#3 held by ");
            }
            List<String> check = new ArrayList<>(List.of("check"));
            check.addAll(options);
            check.addAll(List.of("--resource", "nightly-" + backend, "--permits", "3"));
            CliRun checked = CliRun.of(check.toArray(String[]::new));
            assertThat(checked.exitCode()).as(checked.err()).isZero();
            List<String> table = checked.out()
                    .lines()
                    .dropWhile(line -> !line.startsWith("resource"))
                    .toList();
            assertThat(table).hasSize(4);
            assertThat(table.get(0)).contains("holder", "fencing token");
            for (int permit = 1; permit <= 3; permit++) {
                assertThat(table.get(permit))
                        .startsWith("nightly-" + backend + "#" + permit)
                        .doesNotContain("free")
                        .containsPattern(backend.equals("postgresql") ? "\\d+\\s*$" : "-\\s*$");
            }
        } finally {
            for (RunProcess holder : holders) {
                holder.close();
            }
        }
    }

    private static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (java.io.IOException e) {
            return List.of();
        }
    }
}
