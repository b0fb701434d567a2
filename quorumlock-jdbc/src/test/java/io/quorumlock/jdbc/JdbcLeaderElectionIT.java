package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.LeaderElection;
import io.quorumlock.LeaseLostException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.LeaderTimeline;
import io.quorumlock.testkit.MariaDbServerExtension;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.TestTime;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election over the database lock on a real PostgreSQL and a real MariaDB: one candidate of
 * four leads, each hand-over (the leader closed, stepping down, its row deleted, cut off by a
 * partition) raises the term's fencing token, and takes no longer than the TTL and a margin. A
 * paused leader is not shown here: the module's tests run every client in the test's JVM (the
 * torture runs pause child processes).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class JdbcLeaderElectionIT {

    private static final Logger log = LoggerFactory.getLogger(JdbcLeaderElectionIT.class);

    private static final Duration TTL = TestTime.scaled(Duration.ofSeconds(3));
    private static final AtomicInteger tables = new AtomicInteger();

    /**
     * A waiter on MariaDB polls (PostgreSQL wakes it by NOTIFY): the poll must come within the second
     * a leader that stepped down leaves the role to the others, or that leader takes it back.
     */
    private static final RetryPolicy WAITER_POLL =
            RetryPolicy.jitteredBackoff(Duration.ofMillis(20), Duration.ofMillis(200));

    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(20));
    private static final Duration MARGIN = TestTime.scaled(Duration.ofSeconds(2));

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @RegisterExtension
    static final MariaDbServerExtension mariadb = new MariaDbServerExtension();

    private String table;
    private Engine engine;

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final LeaderTimeline timeline = new LeaderTimeline(TTL, WAIT, MARGIN);

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private final class Candidate {
        final String name;
        final JdbcLock lock;
        final LeaderElection<FencedLease> election;

        Candidate(String name, DataSource database) {
            this.name = name;
            this.lock = JdbcLock.builder()
                    .dataSource(database)
                    .table(table)
                    .holder(name)
                    .requestTimeout(TestTime.scaled(Duration.ofSeconds(1)))
                    .retry(WAITER_POLL)
                    .build();
            closing.add(lock);
            this.election = LeaderElection.builder(lock, "scheduler")
                    .ttl(TTL)
                    .listener(new LeaderElection.Listener<>() {
                        @Override
                        public void elected(LeaderElection.Term<? extends FencedLease> term) {
                            timeline.elected(name, token(term));
                        }

                        @Override
                        public void revoked(
                                LeaderElection.Term<? extends FencedLease> term, Optional<LeaseLostException> cause) {
                            timeline.revoked(name, token(term));
                        }
                    })
                    .start();
            closing.add(election);
        }
    }

    private static long token(LeaderElection.Term<?> term) {
        return term.fencingToken().orElseThrow();
    }

    private static Candidate theLeader(List<Candidate> candidates) {
        TestTime.await(
                WAIT,
                () -> candidates.stream().filter(c -> c.election.isLeader()).count() == 1,
                "exactly one leader");
        return candidates.stream()
                .filter(c -> c.election.isLeader())
                .findFirst()
                .orElseThrow();
    }

    private DataSource setUp(Engine engine) {
        this.engine = engine;
        this.table = "leaders_" + tables.incrementAndGet();
        DataSource database = engine.dataSource(postgres, mariadb);
        try (JdbcLock setup =
                JdbcLock.builder().dataSource(database).table(table).build()) {
            setup.createTable();
        }
        return database;
    }

    private LeaderTimeline.Told handOver(String how, LeaderTimeline.Fault fault, Candidate leader) throws Exception {
        LeaderTimeline.HandOver handOver = timeline.handOver(how, leader.name, fault);
        log.info(
                "{} leader hand-over, leader {}: {} ms (TTL {} ms)",
                engine,
                how,
                handOver.took().toMillis(),
                TTL.toMillis());
        return handOver.next();
    }

    @ParameterizedTest
    @EnumSource(
            value = Engine.class,
            names = {"POSTGRESQL", "MARIADB"})
    void oneOfFourLeadsAndEveryHandOverRaisesTheToken(Engine engine) throws Exception {
        DataSource database = setUp(engine);
        List<Candidate> candidates = new ArrayList<>();
        for (String name : List.of("a", "b", "c", "d")) {
            candidates.add(new Candidate(name, database));
        }
        Candidate first = theLeader(candidates);
        Thread.sleep(TestTime.scaled(Duration.ofMillis(300)).toMillis());
        assertThat(candidates.stream().filter(c -> c.election.isLeader()))
                .as("leaders")
                .hasSize(1);

        LeaderTimeline.Told afterClose = handOver("closed", () -> first.election.close(), first);
        timeline.assertRevokedBeforeElected(first.name, afterClose);
        candidates.remove(first);

        Candidate second = theLeader(candidates);
        LeaderTimeline.Told afterStepDown = handOver("stepped down", () -> second.election.stepDown(), second);
        timeline.assertRevokedBeforeElected(second.name, afterStepDown);

        Candidate third = theLeader(candidates);
        // The lease dropped as if its process died: the row is gone at once, and the old leader
        // learns it at its next renewal, so no order between the two is asserted.
        handOver(
                "killed (row deleted)",
                () -> {
                    try (Connection connection = database.getConnection();
                            Statement sql = connection.createStatement()) {
                        sql.execute("DELETE FROM " + table);
                    }
                },
                third);
        timeline.awaitRevoked(third.name);
        theLeader(candidates);

        List<Long> tokens = timeline.electedTokens();
        assertThat(tokens)
                .as("the terms' tokens")
                .hasSizeGreaterThanOrEqualTo(4)
                .isSorted()
                .doesNotHaveDuplicates();
    }

    @ParameterizedTest
    @EnumSource(
            value = Engine.class,
            names = {"POSTGRESQL", "MARIADB"})
    void aLeaderCutOffByAPartitionIsRevokedBeforeAnotherIsElected(Engine engine) throws Exception {
        DataSource database = setUp(engine);
        FaultProxy proxy = engine == Engine.POSTGRESQL
                ? FaultProxy.inFrontOf(postgres.server())
                : FaultProxy.inFrontOf(mariadb.server());
        closing.add(proxy);
        Candidate cutOff = new Candidate("cut-off", through(proxy, engine));
        cutOff.election.awaitLeadership(WAIT).orElseThrow();
        Candidate direct = new Candidate("direct", database);

        LeaderTimeline.Told next = handOver("partitioned", () -> proxy.partition(), cutOff);
        assertThat(next.candidate()).isEqualTo("direct");
        timeline.assertRevokedBeforeElected(cutOff.name, next);
        assertThat(next.token()).isGreaterThan(timeline.told().get(0).token());
        assertThat(cutOff.election.isLeader()).isFalse();
        proxy.heal();
        assertThat(direct.election.isLeader()).isTrue();
    }

    /** The engine's database reached through {@code proxy}. */
    private static DataSource through(FaultProxy proxy, Engine engine) throws Exception {
        if (engine == Engine.POSTGRESQL) {
            org.postgresql.ds.PGSimpleDataSource pg = new org.postgresql.ds.PGSimpleDataSource();
            pg.setUrl(postgres.jdbcUrl().replace(":" + postgres.server().port() + "/", ":" + proxy.port() + "/"));
            pg.setUser(postgres.user());
            return pg;
        }
        org.mariadb.jdbc.MariaDbDataSource maria = new org.mariadb.jdbc.MariaDbDataSource(
                mariadb.jdbcUrl().replace(":" + mariadb.server().port() + "/", ":" + proxy.port() + "/"));
        maria.setUser(mariadb.user());
        maria.setPassword(mariadb.password());
        return maria;
    }
}
