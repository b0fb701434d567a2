package io.quorumlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisServers;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The semaphore cases of the bench, on a node and a ZooKeeper server of their own, at the smoke
 * plan's times: each library's row, measured, in order. It measures nothing worth quoting.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SemaphoresIT {

    @Test
    void measuresACycleOfEachLibrarysSemaphoreOnRedisAndOnZooKeeper() {
        List<CaseResult> rows = new ArrayList<>();
        StringWriter out = new StringWriter();
        try (RedisServers servers = RedisServers.start(1)) {
            Semaphores.run(servers, Plan.smoke(), new Progress(new PrintWriter(out, true), false), rows::add);
        }

        assertThat(rows)
                .extracting(r -> r.caseId() + "/" + r.library())
                .containsExactly(
                        Plan.SEMAPHORE + "/" + Plan.QUORUMLOCK,
                        Plan.SEMAPHORE + "/" + Plan.REDISSON_SEMAPHORE,
                        Plan.ZK_SEMAPHORE + "/" + Plan.QUORUMLOCK,
                        Plan.ZK_SEMAPHORE + "/" + Plan.CURATOR_SEMAPHORE);
        for (CaseResult r : rows) {
            assertThat(r.error()).as("error of %s", r).isNull();
            assertThat(r.opsPerSecond()).as("cycles/s of %s", r).isPositive();
            assertThat(r.p99Micros()).as("p99 of %s", r).isGreaterThanOrEqualTo(r.p50Micros());
            assertThat(r.number("failures"))
                    .as("cycles without a permit in %s", r)
                    .isZero();
        }
    }
}
