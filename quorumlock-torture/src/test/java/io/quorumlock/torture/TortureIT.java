package io.quorumlock.torture;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.Processes;
import io.quorumlock.testkit.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A 20-second torture of every strategy, client processes and all fault kinds, as the command runs it. */
class TortureIT {

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void fencedLocksAndTheVersionColumnStayCorrectUnderEveryFault(@TempDir Path out) throws Exception {
        List<String> progress = new ArrayList<>();
        Torture.Result result = Torture.run(
                new Torture.Options(
                        EnumSet.allOf(Strategy.class),
                        EnumSet.allOf(FaultKind.class),
                        Duration.ofSeconds(20),
                        5,
                        20261130L,
                        out,
                        false,
                        Duration.ofSeconds(2)),
                new Torture.Progress(progress::add, progress::add));
        List<String> table = ResultTable.lines(result);
        String shown = String.join("\n", table);

        if (System.getenv("QUORUMLOCK_ETCD") != null || EtcdCluster.available()) {
            assertThat(result.skipped()).as(shown).isEmpty();
        }
        assertThat(progress).anyMatch(line -> line.startsWith("torture "));
        for (Torture.Outcome outcome : result.outcomes()) {
            Map<String, Integer> faults = outcome.summary().faultsByKind();
            assertThat(outcome.summary().operations())
                    .as(outcome.strategy() + "\n" + shown)
                    .isPositive();
            assertThat(outcome.verdict().writesAcknowledged())
                    .as(outcome.strategy() + "\n" + shown)
                    .isPositive();
            if (outcome.strategy().claimsCorrectness()) {
                assertThat(outcome.violated())
                        .as(outcome.strategy() + "\n" + shown)
                        .isFalse();
            }
            if (outcome.strategy().servers() == Strategy.Servers.REDIS) {
                assertThat(faults).as(outcome.strategy() + "\n" + shown).containsKeys("kill", "freeze", "restart");
                if (RedisServer.clockControlAvailable()) {
                    assertThat(faults).as(shown).containsKey("clock");
                }
            }
            if (faults.containsKey("pause")) {
                // The paused client wakes believing it holds the lock and writes what it read
                // before the pause: a TTL lock lets the write through, a fence refuses it.
                if (outcome.strategy().fenced() || outcome.strategy() == Strategy.OPTIMISTIC) {
                    assertThat(outcome.verdict().staleRejected())
                            .as(outcome.strategy() + "\n" + shown)
                            .isPositive();
                } else {
                    assertThat(outcome.verdict().overlaps())
                            .as(outcome.strategy() + "\n" + shown)
                            .isNotEmpty();
                    assertThat(outcome.verdict().lostUpdates())
                            .as(outcome.strategy() + "\n" + shown)
                            .isPositive();
                }
            }
        }
        assertThat(result.outcomes().stream()
                        .filter(o -> o.strategy().fenced())
                        .mapToInt(o -> o.summary().faultsByKind().getOrDefault("expire", 0)))
                .as(shown)
                .allMatch(n -> n > 0);
        assertThat(result.exitCode()).as(shown).isZero();

        String html = Files.readString(result.report());
        for (Torture.Outcome outcome : result.outcomes()) {
            assertThat(html).contains(outcome.strategy().label().replace("+", "+"));
        }
        try (var dirs = Files.list(out)) {
            assertThat(dirs.filter(Files::isDirectory).count())
                    .isEqualTo(result.outcomes().size());
        }
        assertThat(ProcessHandle.current().descendants().filter(Processes::isRunning))
                .as("client processes and servers left behind")
                .isEmpty();
    }
}
