package io.quorumlock.torture;

import static io.quorumlock.torture.Events.accepted;
import static io.quorumlock.torture.Events.grant;
import static io.quorumlock.torture.Events.release;
import static io.quorumlock.torture.Events.write;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResultTableTest {

    /** Two clients granted at 100 and 150 ms, both writing 10 -> 9: an overlap and a lost update, after a fault at 120. */
    private static final List<Event> DOUBLE_GRANT = List.of(
            Event.state(Event.Kind.INITIAL, 10, 0, 0),
            grant("client-1", 100, 1),
            write("client-1", 110, 10, 9),
            Event.fault("restart redis-1,2,3", true, 120_000_000, 120),
            Event.fault("restart redis-1,2,3", false, 121_000_000, 121),
            grant("client-2", 150, 2),
            write("client-2", 160, 10, 9),
            accepted("client-2", 170).withWrite(10, 9),
            accepted("client-1", 180).withWrite(10, 9),
            release("client-2", 190),
            release("client-1", 200),
            Event.state(Event.Kind.FINAL, 9, 300_000_000, 300));

    private static Torture.Outcome outcome(Strategy strategy, List<Event> events) {
        List<Event> faults = events.stream()
                .filter(e -> e.kind() == Event.Kind.FAULT && e.op() == Event.Op.START)
                .toList();
        return new Torture.Outcome(strategy, Report.summarize(events), Checker.check(events), faults);
    }

    @Test
    void aViolationFailsTheRunOnlyForAStrategyThatClaimsCorrectness() {
        Torture.Outcome redlock = outcome(Strategy.REDLOCK, DOUBLE_GRANT);
        Torture.Outcome fenced = outcome(Strategy.ZOOKEEPER, DOUBLE_GRANT);
        assertThat(redlock.violated()).isTrue();

        assertThat(new Torture.Result(List.of(redlock), List.of(), Map.of(), Path.of("report.html")).exitCode())
                .isZero();
        assertThat(new Torture.Result(List.of(redlock, fenced), List.of(), Map.of(), Path.of("report.html")).exitCode())
                .isEqualTo(1);
    }

    /**
     * An expired holder writes after the next one was granted but before it wrote; the next one
     * reads that write (the fence's row lock orders them): two holders at once, the data kept.
     */
    private static final List<Event> FENCED_OVERLAP = List.of(
            Event.state(Event.Kind.INITIAL, 10, 0, 0),
            grant("client-1", 100, 1),
            Event.fault("expire client-1", true, 120_000_000, 120),
            grant("client-2", 150, 2),
            write("client-1", 160, 10, 9),
            accepted("client-1", 170).withWrite(10, 9),
            write("client-2", 180, 9, 8),
            accepted("client-2", 190).withWrite(9, 8),
            release("client-2", 200),
            release("client-1", 210),
            Event.state(Event.Kind.FINAL, 8, 300_000_000, 300));

    @Test
    void anOverlapWhoseWritesRanInOrderIsShownButViolatesOnlyALockThatPromisesOneHolder() {
        Torture.Outcome fenced = outcome(Strategy.POSTGRES, FENCED_OVERLAP);
        Torture.Outcome redis = outcome(Strategy.REDIS, FENCED_OVERLAP);

        assertThat(fenced.verdict().overlaps())
                .singleElement()
                .satisfies(o -> assertThat(o.serial()).isTrue());
        assertThat(fenced.verdict().conflictingOverlaps()).isEmpty();
        assertThat(fenced.verdict().lostUpdates()).isZero();
        assertThat(fenced.violated()).isFalse();
        assertThat(redis.violated()).isTrue();
        Torture.Result result = new Torture.Result(List.of(fenced), List.of(), Map.of(), Path.of("r.html"));
        assertThat(result.exitCode()).isZero();
        assertThat(ResultTable.lines(result))
                .anyMatch(line -> line.startsWith("PostgreSQL lock + JdbcFence") && line.endsWith("ok"))
                .anyMatch(line -> line.contains("1 overlapping pair(s) after expire client-1")
                        && line.endsWith("writes in order (each read the other's)"));

        // Both read 10: the same overlap with a lost decrement violates the fenced lock too
        Torture.Outcome conflicting = outcome(Strategy.POSTGRES, DOUBLE_GRANT);
        assertThat(conflicting.verdict().conflictingOverlaps()).hasSize(1);
        assertThat(conflicting.violated()).isTrue();
    }

    @Test
    void theDatabaseLockWithoutItsFenceShowsItsViolationsWithoutFailingTheRun() {
        Torture.Outcome unfenced = outcome(Strategy.POSTGRES_UNFENCED, DOUBLE_GRANT);
        Torture.Result result = new Torture.Result(List.of(unfenced), List.of(), Map.of(), Path.of("r.html"));

        assertThat(Strategy.POSTGRES_UNFENCED.fenced()).isFalse();
        assertThat(Strategy.POSTGRES_UNFENCED.tokens()).isTrue();
        assertThat(unfenced.violated()).isTrue();
        assertThat(result.exitCode()).isZero();
        assertThat(ResultTable.lines(result).get(1))
                .startsWith("PostgreSQL lock, no fence")
                .endsWith("violated (no fence)");
        assertThat(new Torture.Result(
                                List.of(outcome(Strategy.MARIADB, DOUBLE_GRANT)),
                                List.of(),
                                Map.of(),
                                Path.of("r.html"))
                        .exitCode())
                .isEqualTo(1);
    }

    @Test
    void theTableNamesTheViolationAndTheEvidenceNamesTheFaultBeforeIt() {
        Torture.Outcome redlock = outcome(Strategy.REDLOCK, DOUBLE_GRANT);
        List<String> lines = ResultTable.lines(
                new Torture.Result(List.of(redlock), List.of(), Map.of(Strategy.ETCD, "no etcd"), Path.of("r.html")));

        assertThat(lines.get(0)).startsWith("strategy").contains("overlaps", "lost upd", "verdict");
        assertThat(lines.get(1))
                .startsWith("Redlock, 5 nodes")
                .contains("violated (efficiency lock)")
                .containsPattern("\\s1\\s+1\\s+0\\s+0\\s");
        assertThat(lines).anyMatch(l -> l.contains("restart 1"));
        assertThat(lines).anyMatch(l -> l.contains("etcd + JdbcFence: skipped, no etcd"));
        assertThat(lines)
                .anyMatch(l -> l.contains("1 overlapping pair(s) after restart redis-1,2,3")
                        && l.contains("client-1")
                        && l.contains("client-2"));
        assertThat(lines).anyMatch(l -> l.contains("lost updates: final value 9, expected 8"));
    }
}
