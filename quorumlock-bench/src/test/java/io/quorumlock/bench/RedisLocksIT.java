package io.quorumlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisServers;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Redis hand-off case of the bench, apart from the smoke run (which leaves it out to stay
 * short): on 5 nodes of its own, the PING round trips and one counted hand-off of each library, in
 * the order the table shows them, and target 11 computed from them. It measures nothing worth
 * quoting.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisLocksIT {

    @Test
    void measuresThePingAndOneHandOffOfEachLibraryOnOneNodeAndOnFive() {
        List<CaseResult> rows = new ArrayList<>();
        StringWriter out = new StringWriter();
        try (RedisServers servers = RedisServers.start(5)) {
            RedisLocks.run(
                    servers, 1, Duration.ofMillis(200), new Progress(new PrintWriter(out, true), false), rows::add);
        }

        assertThat(rows)
                .extracting(r -> r.caseId() + "/" + r.library())
                .containsExactly(
                        Plan.REDIS_HAND_OFF + "/" + Plan.PING,
                        Plan.REDIS_HAND_OFF + "/" + Plan.IDLE_PING,
                        Plan.REDIS_HAND_OFF + "/" + Plan.QUORUMLOCK,
                        Plan.REDIS_HAND_OFF + "/" + Plan.REDISSON,
                        Plan.REDIS_HAND_OFF + "/" + Plan.SPRING_INTEGRATION_REDIS,
                        Plan.REDIS5_HAND_OFF + "/" + Plan.PING,
                        Plan.REDIS5_HAND_OFF + "/" + Plan.IDLE_PING,
                        Plan.REDIS5_HAND_OFF + "/" + Plan.QUORUMLOCK);
        for (CaseResult r : rows) {
            assertThat(r.error()).as("error of %s", r).isNull();
            assertThat(r.p50Micros()).as("p50 of %s", r).isPositive();
            assertThat(r.p99Micros()).as("p99 of %s", r).isGreaterThanOrEqualTo(r.p50Micros());
            if (r.library().equals(Plan.IDLE_PING)) {
                // PINGs one at a time after an idle hold: latencies, no rate
                assertThat(r.opsPerSecond()).as("ops/s of %s", r).isNull();
                assertThat(r.number("pings")).isEqualTo(1.0);
                assertThat(r.nodes()).isEqualTo(r.caseId().equals(Plan.REDIS_HAND_OFF) ? 1 : 5);
            } else if (r.library().equals(Plan.PING)) {
                assertThat(r.opsPerSecond()).as("PINGs of %s", r).isPositive();
                assertThat(r.number("errors")).as("errors of %s", r).isZero();
                assertThat(r.nodes()).isEqualTo(r.caseId().equals(Plan.REDIS_HAND_OFF) ? 1 : 5);
            } else {
                // latencies from the release call to the waiter's grant, no rate
                assertThat(r.opsPerSecond()).as("ops/s of %s", r).isNull();
                assertThat(r.number("hand_offs")).isEqualTo(1.0);
                assertThat(r.number("overlaps"))
                        .as("grants before the release in %s", r)
                        .isZero();
                assertThat(r.threads()).isEqualTo(2);
            }
        }

        Targets.Target target = Targets.evaluate(rows, null).stream()
                .filter(t -> t.number() == 11)
                .findFirst()
                .orElseThrow();
        assertThat(target.checks()).hasSize(6);
        for (Targets.Check check : target.checks().subList(0, 2)) {
            assertThat(check.name()).contains("PING-after-idle");
            assertThat(check.bound()).isEqualTo("<= 3");
            assertThat(check.value()).as(check.name()).isPositive();
        }
        for (Targets.Check check : target.checks().subList(2, 6)) {
            assertThat(check.verdict()).as(check.name()).isEqualTo(Targets.Verdict.REPORTED);
            assertThat(check.value()).as(check.name()).isPositive();
        }
    }
}
