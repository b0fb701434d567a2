package io.quorumlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.testkit.PostgresServerExtension;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The database lock on the application's DataSource, and its health, in real contexts over a real PostgreSQL. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JdbcStarterIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(QuorumlockAutoConfiguration.class, QuorumlockHealthAutoConfiguration.class));

    private DataSource dataSource() {
        PGSimpleDataSource source = new PGSimpleDataSource();
        source.setUrl(postgres.jdbcUrl());
        source.setUser(postgres.user());
        return source;
    }

    @Test
    void theLockLivesInTheApplicationsDatabaseAndHealthChecksIt() {
        runner.withBean(DataSource.class, this::dataSource)
                .withPropertyValues(
                        "quorumlock.jdbc.enabled=true",
                        "quorumlock.jdbc.table=spring_locks",
                        "quorumlock.jdbc.create-table=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    JdbcLock lock = context.getBean(JdbcLock.class);
                    assertThat(context.getBean(DistributedLock.class)).isSameAs(lock);
                    long first;
                    try (FencedLease lease = lock.acquire("invoice:2026-12", Duration.ofSeconds(10), Duration.ZERO)) {
                        first = lease.fencingToken();
                    }
                    try (FencedLease lease = lock.acquire("invoice:2026-12", Duration.ofSeconds(10), Duration.ZERO)) {
                        assertThat(lease.fencingToken()).isGreaterThan(first);
                    }
                    Health up = context.getBean(QuorumlockHealthAutoConfiguration.BEAN, HealthIndicator.class)
                            .health();
                    System.out.println("jdbc health: " + up);
                    assertThat(up.getStatus()).isEqualTo(Status.UP);
                    assertThat(up.getDetails()).containsEntry("backend", "jdbc").containsEntry("dialect", "postgresql");
                });
    }

    @Test
    void aTableDroppedAfterTheStartIsAHealthDownThatNamesTheRemedy() {
        runner.withBean(DataSource.class, this::dataSource)
                .withPropertyValues("quorumlock.jdbc.create-table=true", "quorumlock.jdbc.table=dropped_locks")
                .run(context -> {
                    try (Connection connection = dataSource().getConnection();
                            Statement statement = connection.createStatement()) {
                        statement.execute("DROP TABLE dropped_locks");
                    }
                    Health down = context.getBean(QuorumlockHealthAutoConfiguration.BEAN, HealthIndicator.class)
                            .health();
                    assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                    assertThat((String) down.getDetails().get("error")).contains("dropped_locks", "does not exist");
                });
    }

    @Test
    void aMissingTableStopsTheStartNamingCreateTable() {
        runner.withBean(DataSource.class, this::dataSource)
                .withPropertyValues("quorumlock.jdbc.enabled=true", "quorumlock.jdbc.table=not_created")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .hasMessageContaining("not_created")
                            .hasMessageContaining("does not exist");
                    assertThat(context.getStartupFailure())
                            .hasStackTraceContaining("set quorumlock.jdbc.create-table=true to create them at start");
                });
    }

    @Test
    void withoutADataSourceTheStartFailsNamingTheProperty() {
        runner.withPropertyValues("quorumlock.jdbc.enabled=true").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining(
                            "quorumlock.jdbc.enabled=true puts the lock in the application's database, but"
                                    + " the context has no single DataSource");
        });
    }

    @Test
    void aBadTableNameIsNamedByItsProperty() {
        runner.withBean(DataSource.class, this::dataSource)
                .withPropertyValues("quorumlock.jdbc.enabled=true", "quorumlock.jdbc.table=locks; drop")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .hasStackTraceContaining("quorumlock.jdbc.table: table must be a SQL identifier");
                });
    }
}
