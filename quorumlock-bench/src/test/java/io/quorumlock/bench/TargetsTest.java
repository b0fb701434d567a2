package io.quorumlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The target arithmetic on made-up results: each ratio against its bound, and missing cases. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class TargetsTest {

    private final List<CaseResult> results = new ArrayList<>();

    @Test
    void singleNodeNeedsRawJedisSpeed() {
        add(Plan.SINGLE, Plan.RAW, 10_000, null);
        add(Plan.SINGLE, Plan.REDISSON, 1_000, null);
        allocating(Plan.SINGLE, 10_000, 1_000.0);
        assertThat(target(1).verdict()).isEqualTo(Targets.Verdict.PASS);
        assertThat(check(1, "quorumlock / raw-jedis").value()).isEqualTo(1.0);
        assertThat(check(1, "quorumlock / redisson").verdict()).isEqualTo(Targets.Verdict.REPORTED);

        results.clear();
        add(Plan.SINGLE, Plan.RAW, 10_000, null);
        add(Plan.SINGLE, Plan.REDISSON, 1_000, null);
        allocating(Plan.SINGLE, 9_900, 800.0);
        assertThat(check(1, "quorumlock / raw-jedis").verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(target(1).verdict()).isEqualTo(Targets.Verdict.FAIL);
    }

    @Test
    void aSingleNodeCycleAllocatesAtMostAThousandBytes() {
        add(Plan.SINGLE, Plan.RAW, 10_000, null);
        allocating(Plan.SINGLE, 10_000, 1_000.4);
        assertThat(check(1, "quorumlock alloc").shown()).isEqualTo("1,000");
        assertThat(check(1, "quorumlock alloc").bound()).isEqualTo("<= 1,000");
        assertThat(check(1, "quorumlock alloc").verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(target(1).verdict()).isEqualTo(Targets.Verdict.FAIL);

        results.clear();
        add(Plan.SINGLE, Plan.RAW, 10_000, null);
        add(Plan.SINGLE, Plan.QUORUMLOCK, 10_000, null); // no gc profiler figures
        assertThat(check(1, "quorumlock alloc").verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
        assertThat(target(1).verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
    }

    @Test
    void aFiveNodeCycleAllocatesAtMostFifteenHundredBytes() {
        assertThat(fiveNodeAlloc(1_500.0).verdict()).isEqualTo(Targets.Verdict.PASS);
        assertThat(fiveNodeAlloc(1_500.0).shown()).isEqualTo("1,500");
        assertThat(fiveNodeAlloc(1_900.0).verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(target(2).verdict()).isEqualTo(Targets.Verdict.FAIL);
    }

    /** Target 2's allocation check, with the floors met and quorumlock allocating {@code bytesPerOp}. */
    private Targets.Check fiveNodeAlloc(double bytesPerOp) {
        results.clear();
        add(Plan.FIVE, Plan.FANOUT, 6_000, null);
        add(Plan.FIVE, Plan.SEQUENTIAL, 1_500, null);
        allocating(Plan.FIVE, 6_000, bytesPerOp);
        return check(2, "quorumlock alloc");
    }

    @Test
    void fiveNodesNeedTheFanOutsSpeedAndThreeTimesTheSequentialRedlock() {
        add(Plan.FIVE, Plan.FANOUT, 6_000, null);
        add(Plan.FIVE, Plan.SEQUENTIAL, 1_500, null);
        add(Plan.FIVE, Plan.REDLOCK, 300, null);
        allocating(Plan.FIVE, 6_000, 1_200.0);
        results.add(new CaseResult(
                Plan.CAPACITY,
                Plan.PIPELINED,
                5,
                2,
                1e6,
                null,
                null,
                null,
                Map.of("set_per_s_per_node", 2e5),
                null,
                null));
        assertThat(target(2).verdict()).isEqualTo(Targets.Verdict.PASS);
        assertThat(check(2, "server capacity").value()).isCloseTo(100_000 / 6_000.0, within());
        assertThat(check(2, "quorumlock / raw-fanout").value()).isCloseTo(1.0, within());
        assertThat(check(2, "quorumlock / sequential-redlock").value()).isCloseTo(4, within());
        assertThat(check(2, "raw-fanout / redisson-redlock").value()).isCloseTo(20, within());

        results.clear();
        add(Plan.FIVE, Plan.FANOUT, 6_000, null);
        add(Plan.FIVE, Plan.SEQUENTIAL, 2_000, null);
        add(Plan.FIVE, Plan.QUORUMLOCK, 5_900, null);
        assertThat(check(2, "quorumlock / raw-fanout").verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(check(2, "quorumlock / sequential-redlock").verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(target(2).verdict()).isEqualTo(Targets.Verdict.FAIL);
    }

    @Test
    void aMissingFloorLeavesTheTargetNotMeasured() {
        add(Plan.FIVE, Plan.SEQUENTIAL, 1_500, null);
        add(Plan.FIVE, Plan.QUORUMLOCK, 5_400, null);
        results.add(CaseResult.failed(Plan.FIVE, Plan.FANOUT, 5, 1, "connection refused"));
        assertThat(check(2, "quorumlock / raw-fanout").verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
        assertThat(target(2).verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
    }

    @Test
    void manyCallersNeedTheFanOutsThroughputAtMostEightConnectionsAndNoRefusals() {
        add(Plan.MANY, Plan.FANOUT, 9_000, null);
        add(Plan.MANY, Plan.REDLOCK, 900, null);
        results.add(many(9_000, 8, 0));
        add(Plan.FIVE, Plan.QUORUMLOCK, 5_000, null);
        add(Plan.MANY_SHARED, Plan.QUORUMLOCK, 2_000, null);
        assertThat(target(5).verdict()).isEqualTo(Targets.Verdict.PASS);
        assertThat(check(5, "64 threads / 1 thread").value()).isCloseTo(1.8, within());

        results.clear();
        add(Plan.MANY, Plan.FANOUT, 9_000, null);
        add(Plan.MANY, Plan.REDLOCK, 500, null);
        results.add(many(6_000, 8, 0));
        assertThat(check(5, "raw-fanout").value()).isCloseTo(0.667, within());
        assertThat(check(5, "raw-fanout").verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(check(5, "redisson-redlock").verdict()).isEqualTo(Targets.Verdict.PASS);

        results.clear();
        add(Plan.MANY, Plan.FANOUT, 9_000, null);
        add(Plan.MANY, Plan.REDLOCK, 500, null);
        results.add(many(10_000, 9, 1));
        assertThat(check(5, "connections per node").verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(check(5, "not acquired").verdict()).isEqualTo(Targets.Verdict.FAIL);
    }

    @Test
    void slowNetworkComparesMediansWithTheRoundTripAndWithTheRunWithoutTheSlowNode() {
        add(Plan.SLOW, Plan.PING, 450, 2_200.0);
        add(Plan.SLOW, Plan.QUORUMLOCK, 200, 4_800.0);
        add(Plan.SLOW, Plan.SEQUENTIAL, 40, 22_000.0);
        add(Plan.SLOW, Plan.REDLOCK, 25, 36_000.0);
        add(Plan.SLOW_NODE, Plan.QUORUMLOCK, 190, 5_200.0);
        assertThat(check(6, "quorumlock cycle p50").value()).isCloseTo(2.18, within());
        assertThat(check(6, "sequential-redlock").value()).isCloseTo(10, within());
        assertThat(check(6, "one node +20 ms").value()).isCloseTo(1.083, within());
        assertThat(target(6).verdict()).isEqualTo(Targets.Verdict.PASS);

        results.clear();
        add(Plan.SLOW, Plan.PING, 450, 2_000.0);
        add(Plan.SLOW, Plan.QUORUMLOCK, 200, 4_800.0);
        add(Plan.SLOW_NODE, Plan.QUORUMLOCK, 40, 25_000.0);
        assertThat(check(6, "quorumlock cycle p50").verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(check(6, "one node +20 ms").verdict()).isEqualTo(Targets.Verdict.FAIL);
    }

    @Test
    void theSevenTargetsAreNumberedAsTheIssueListsThemAndTheDatabaseFiguresAndConsensusTargetsFollow() {
        assertThat(Targets.evaluate(results, null).stream().map(Targets.Target::number))
                .containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
        assertThat(target(11).title())
                .isEqualTo("Redis hand-off p50 at most 3 round trips of a PING after idle to the same nodes");
        for (int bounded : new int[] {1, 2, 8, 9, 10, 11, 13}) {
            assertThat(target(bounded).reason())
                    .as("target %d's reason", bounded)
                    .endsWith(".");
        }
        assertThat(target(12).title()).startsWith("Threads of one process queued on one resource");
        assertThat(target(7).title()).startsWith("Resources");
        assertThat(target(8).title()).startsWith("Database lock");
        assertThat(target(9).title()).isEqualTo("ZooKeeper and etcd hand-off at most 1.2x their own clients'");
        assertThat(target(10).title()).isEqualTo("ZooKeeperLock and EtcdLock cycles at least 0.9x their own clients'");
    }

    @Test
    void consensusHandOffsNeedAMedianAtMostOnePointTwoTimesTheirOwnClientsPerBackend() {
        handOff(Plan.ZK_HAND_OFF, Plan.QUORUMLOCK, 6_000, 9_000);
        handOff(Plan.ZK_HAND_OFF, Plan.CURATOR, 5_000, 12_000);
        handOff(Plan.ETCD_HAND_OFF, Plan.QUORUMLOCK, 9_600, 20_000);
        handOff(Plan.ETCD_HAND_OFF, Plan.JETCD, 8_000, 10_000);
        assertThat(check(9, "ZooKeeperLock / " + Plan.CURATOR + ", hand-off p50")
                        .value())
                .isCloseTo(1.2, within());
        assertThat(check(9, "EtcdLock / " + Plan.JETCD + ", hand-off p50").value())
                .isCloseTo(1.2, within());
        assertThat(check(9, "hand-off p99").verdict()).isEqualTo(Targets.Verdict.REPORTED);
        assertThat(target(9).verdict()).isEqualTo(Targets.Verdict.PASS);

        results.clear();
        handOff(Plan.ZK_HAND_OFF, Plan.QUORUMLOCK, 6_000, 9_000);
        handOff(Plan.ZK_HAND_OFF, Plan.CURATOR, 5_000, 12_000);
        handOff(Plan.ETCD_HAND_OFF, Plan.QUORUMLOCK, 16_000, 20_000);
        handOff(Plan.ETCD_HAND_OFF, Plan.JETCD, 8_000, 10_000);
        assertThat(check(9, "ZooKeeperLock / " + Plan.CURATOR + ", hand-off p50")
                        .verdict())
                .isEqualTo(Targets.Verdict.PASS);
        assertThat(check(9, "EtcdLock / " + Plan.JETCD + ", hand-off p50").verdict())
                .isEqualTo(Targets.Verdict.FAIL);
        assertThat(target(9).verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(target(9).met()).isFalse();
    }

    @Test
    void consensusCyclesNeedNinetyPercentOfTheirOwnClientsPerBackend() {
        add(Plan.ZK_CYCLE, Plan.QUORUMLOCK, 90, null);
        add(Plan.ZK_CYCLE, Plan.CURATOR, 100, null);
        add(Plan.ETCD_CYCLE, Plan.QUORUMLOCK, 60, null);
        add(Plan.ETCD_CYCLE, Plan.JETCD, 50, null);
        assertThat(check(10, "ZooKeeperLock").value()).isCloseTo(0.9, within());
        assertThat(check(10, "EtcdLock").value()).isCloseTo(1.2, within());
        assertThat(target(10).verdict()).isEqualTo(Targets.Verdict.PASS);

        results.clear();
        add(Plan.ZK_CYCLE, Plan.QUORUMLOCK, 50, null);
        add(Plan.ZK_CYCLE, Plan.CURATOR, 100, null);
        add(Plan.ETCD_CYCLE, Plan.QUORUMLOCK, 60, null);
        add(Plan.ETCD_CYCLE, Plan.JETCD, 50, null);
        assertThat(check(10, "ZooKeeperLock").verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(target(10).verdict()).isEqualTo(Targets.Verdict.FAIL);
    }

    @Test
    void consensusTargetsWithoutEtcdAreNotMeasuredAndNotMet() {
        add(Plan.ZK_CYCLE, Plan.QUORUMLOCK, 95, null);
        add(Plan.ZK_CYCLE, Plan.CURATOR, 100, null);
        results.add(CaseResult.skipped(Plan.ETCD_CYCLE, Plan.QUORUMLOCK, 3, 1, "etcd not found"));
        results.add(CaseResult.skipped(Plan.ETCD_CYCLE, Plan.JETCD, 3, 1, "etcd not found"));
        assertThat(check(10, "ZooKeeperLock").verdict()).isEqualTo(Targets.Verdict.PASS);
        assertThat(check(10, "EtcdLock").verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
        assertThat(target(10).verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
        assertThat(target(10).met()).isFalse();
        assertThat(target(9).verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
    }

    @Test
    void theDatabaseLockNeedsOnePointTwoTimesShedLocksCyclesAndReportsSpringIntegrations() {
        add(Plan.DB_CYCLE, Plan.QUORUMLOCK, 3_600, null);
        add(Plan.DB_CYCLE, Plan.SHEDLOCK, 3_000, null);
        add(Plan.DB_CYCLE, Plan.SPRING_INTEGRATION, 1_000, null);
        assertThat(check(8, Plan.SHEDLOCK).value()).isCloseTo(1.2, within());
        assertThat(check(8, Plan.SHEDLOCK).verdict()).isEqualTo(Targets.Verdict.PASS);
        assertThat(check(8, Plan.SPRING_INTEGRATION).value()).isCloseTo(3.6, within());
        assertThat(check(8, Plan.SPRING_INTEGRATION).verdict()).isEqualTo(Targets.Verdict.REPORTED);
        assertThat(target(8).verdict()).isEqualTo(Targets.Verdict.PASS);

        results.clear();
        add(Plan.DB_CYCLE, Plan.QUORUMLOCK, 3_500, null);
        add(Plan.DB_CYCLE, Plan.SHEDLOCK, 3_000, null);
        assertThat(target(8).verdict()).isEqualTo(Targets.Verdict.FAIL);

        results.clear();
        results.add(CaseResult.skipped(Plan.DB_CYCLE, Plan.QUORUMLOCK, 1, 1, "PostgreSQL not found"));
        assertThat(check(8, Plan.SHEDLOCK).verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
        assertThat(target(8).verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
        assertThat(target(8).met()).isFalse();
    }

    @Test
    void redisHandOffsNeedAMedianAtMostThreePingsAfterIdleToTheSameNodes() {
        handOff(Plan.REDIS_HAND_OFF, Plan.PING, 50, 100);
        handOff(Plan.REDIS_HAND_OFF, Plan.IDLE_PING, 150, 400);
        handOff(Plan.REDIS_HAND_OFF, Plan.QUORUMLOCK, 450, 900);
        handOff(Plan.REDIS_HAND_OFF, Plan.REDISSON, 900, 2_000);
        handOff(Plan.REDIS_HAND_OFF, Plan.SPRING_INTEGRATION_REDIS, 60_000, 100_000);
        handOff(Plan.REDIS5_HAND_OFF, Plan.PING, 100, 500);
        handOff(Plan.REDIS5_HAND_OFF, Plan.IDLE_PING, 250, 600);
        handOff(Plan.REDIS5_HAND_OFF, Plan.QUORUMLOCK, 500, 1_000);
        assertThat(check(11, "PING-after-idle p50, 1 node").value()).isCloseTo(3, within());
        assertThat(check(11, "PING-after-idle p50, 1 node").bound()).isEqualTo("<= 3");
        assertThat(check(11, "fan-out PING-after-idle p50, 5 nodes").value()).isCloseTo(2, within());
        assertThat(check(11, "quorumlock / " + Plan.REDISSON).value()).isCloseTo(0.5, within());
        assertThat(check(11, "quorumlock / " + Plan.SPRING_INTEGRATION_REDIS).value())
                .isCloseTo(0.0075, within());
        assertThat(check(11, Plan.REDISSON + " hand-off p50 / PING-after-idle").value())
                .isCloseTo(6, within());
        assertThat(check(11, "PING p50 in a loop").value()).isCloseTo(9, within());
        assertThat(check(11, "PING p50 in a loop").verdict()).isEqualTo(Targets.Verdict.REPORTED);
        assertThat(target(11).verdict()).isEqualTo(Targets.Verdict.PASS);

        results.clear();
        handOff(Plan.REDIS_HAND_OFF, Plan.IDLE_PING, 150, 400);
        handOff(Plan.REDIS_HAND_OFF, Plan.QUORUMLOCK, 600, 1_900);
        handOff(Plan.REDIS5_HAND_OFF, Plan.IDLE_PING, 250, 600);
        handOff(Plan.REDIS5_HAND_OFF, Plan.QUORUMLOCK, 500, 1_000);
        assertThat(check(11, "PING-after-idle p50, 1 node").verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(check(11, "fan-out PING-after-idle p50, 5 nodes").verdict()).isEqualTo(Targets.Verdict.PASS);
        assertThat(check(11, "quorumlock / " + Plan.REDISSON).verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
        assertThat(target(11).verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(target(11).met()).isFalse();

        results.clear();
        handOff(Plan.REDIS_HAND_OFF, Plan.QUORUMLOCK, 300, 900);
        handOff(Plan.REDIS_HAND_OFF, Plan.PING, 50, 100); // a PING in a loop is no unit
        results.add(CaseResult.failed(Plan.REDIS_HAND_OFF, Plan.IDLE_PING, 1, 1, "connection refused"));
        assertThat(check(11, "PING-after-idle p50, 1 node").verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
        assertThat(target(11).verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
    }

    @Test
    void queuedThreadsAreReportedOverTheSingleWaitersHandOffOfTheSameBackendWithTheirCount() {
        handOff(Plan.ZK_HAND_OFF, Plan.QUORUMLOCK, 6_000, 9_000);
        handOff(Plan.ETCD_HAND_OFF, Plan.QUORUMLOCK, 10_000, 20_000);
        results.add(new CaseResult(
                Plan.ZK_QUEUE, Plan.QUORUMLOCK, 3, 1_000, null, 9_000.0, 30_000.0, null, Map.of(), null, null));
        assertThat(check(12, "ZooKeeperLock, 1,000 threads / 1 waiter").value()).isCloseTo(1.5, within());
        assertThat(check(12, "ZooKeeperLock").verdict()).isEqualTo(Targets.Verdict.REPORTED);
        assertThat(check(12, "EtcdLock, queued threads / 1 waiter").verdict()).isEqualTo(Targets.Verdict.NOT_MEASURED);
        assertThat(target(12).verdict()).isEqualTo(Targets.Verdict.REPORTED);
        assertThat(target(12).met()).isTrue();
    }

    private static org.assertj.core.data.Offset<Double> within() {
        return org.assertj.core.data.Offset.offset(0.01);
    }

    @Test
    void waitingClientsMustBeServedFairlyWithinTwelveHandOffsWinningAlmostAsOftenAsClientsThatNeverWait() {
        add(Plan.CONTENTION, Plan.QUORUMLOCK, 1_500, null);
        add(Plan.FIVE, Plan.QUORUMLOCK, 6_000, null); // a free cycle is not the unit
        results.add(waiting(1_200, 0.9, 12.0));
        assertThat(target(13).verdict()).isEqualTo(Targets.Verdict.PASS);
        assertThat(check(13, "(never waits) wins/s").value()).isCloseTo(0.8, within());
        assertThat(check(13, "wait p99, in hand-offs").bound()).isEqualTo("<= 12");

        results.clear();
        add(Plan.CONTENTION, Plan.QUORUMLOCK, 1_500, null);
        results.add(waiting(1_150, 0.85, 13.0));
        assertThat(target(13).verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(check(13, "fairness").verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(check(13, "wait p99, in hand-offs").verdict()).isEqualTo(Targets.Verdict.FAIL);
        assertThat(check(13, "(never waits) wins/s").verdict()).isEqualTo(Targets.Verdict.FAIL);
    }

    private static CaseResult waiting(double winsPerSecond, double fairness, double p99HandOffs) {
        return new CaseResult(
                Plan.CONTENTION,
                Plan.QUORUMLOCK_WAITING,
                5,
                8,
                winsPerSecond,
                null,
                null,
                null,
                Map.of("fairness", fairness, "wait_p99_hand_offs", p99HandOffs, "overlaps", 0L),
                null,
                null);
    }

    private void add(String caseId, String library, double opsPerSecond, Double p50) {
        results.add(new CaseResult(caseId, library, 5, 1, opsPerSecond, p50, null, null, Map.of(), null, null));
    }

    /** quorumlock's result in {@code caseId}, with JMH's gc profiler figure. */
    private void allocating(String caseId, double opsPerSecond, double bytesPerOp) {
        results.add(new CaseResult(
                caseId, Plan.QUORUMLOCK, 5, 1, opsPerSecond, null, null, bytesPerOp, Map.of(), null, null));
    }

    private void handOff(String caseId, String library, double p50, double p99) {
        results.add(new CaseResult(caseId, library, 3, 2, null, p50, p99, null, Map.of(), null, null));
    }

    private static CaseResult many(double opsPerSecond, int connections, int failures) {
        return new CaseResult(
                Plan.MANY,
                Plan.QUORUMLOCK,
                5,
                64,
                opsPerSecond,
                null,
                null,
                null,
                Map.of("connections_per_node", connections, "failures", failures),
                null,
                null);
    }

    private Targets.Target target(int number) {
        return Targets.evaluate(results, null).stream()
                .filter(t -> t.number() == number)
                .findFirst()
                .orElseThrow();
    }

    private Targets.Check check(int target, String nameContains) {
        return target(target).checks().stream()
                .filter(c -> c.name().contains(nameContains))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no check '" + nameContains + "' in target " + target));
    }
}
