package io.quorumlock.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's pause on a real PostgreSQL: A, the leader, reaches the database lock through a
 * proxy that holds its packets from the pause on, so its renewals stop as a frozen process's do.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LeaderPauseTimelineIT {

    private static final Logger log = LoggerFactory.getLogger(LeaderPauseTimelineIT.class);

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @Test
    void thePausedLeadersLateWriteIsRefusedAfterTheHandOver() throws Exception {
        Duration ttl = TestTime.scaled(Duration.ofSeconds(2));
        PGSimpleDataSource database = new PGSimpleDataSource();
        database.setUrl(postgres.jdbcUrl());
        database.setUser(postgres.user());
        try (FaultProxy proxy = FaultProxy.inFrontOf(postgres.server());
                JdbcLock a = JdbcLock.builder()
                        .url("jdbc:postgresql://" + proxy.address() + "/postgres")
                        .user(postgres.user())
                        .holder("A")
                        .requestTimeout(Duration.ofSeconds(1))
                        .build();
                JdbcLock b = JdbcLock.builder().dataSource(database).holder("B").build()) {
            b.createTable();
            LeaderPauseTimeline.Result result = new LeaderPauseTimeline(database, ttl).play(a, b, proxy::partition);
            log.info("the leader's pause, on PostgreSQL:\n{}", String.join("\n", result.timeline()));

            assertThat(result.tokenB()).isGreaterThan(result.tokenA());
            assertThat(result.staleWriteRefused()).as("A's late write").isTrue();
            assertThat(result.stock()).as("B's sale kept").isEqualTo(999);
            assertThat(result.handOver())
                    .isGreaterThanOrEqualTo(ttl.dividedBy(2))
                    .isLessThan(ttl.plus(TestTime.scaled(Duration.ofSeconds(3))));
            assertThat(String.join("\n", result.timeline()))
                    .containsSubsequence(
                            "A elected",
                            "A pauses",
                            "A revoked: its lease is lost",
                            "B elected",
                            "B writes stock 999",
                            "A wakes",
                            "the fence refuses A's write");
        }
    }
}
