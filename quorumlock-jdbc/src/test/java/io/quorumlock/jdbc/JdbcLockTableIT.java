package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.FencedLease;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.internal.Ticker;
import io.quorumlock.testkit.MariaDbServerExtension;
import io.quorumlock.testkit.PostgresServerExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The lock's table on each engine: a table made by an earlier version is named with its remedy and
 * upgraded without losing a row; and the undo of a grant whose answer was lost leaves its statement
 * nothing to take, however late it runs.
 */
class JdbcLockTableIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @RegisterExtension
    static final MariaDbServerExtension mariadb = new MariaDbServerExtension();

    private static final AtomicInteger tables = new AtomicInteger();
    private static final Duration TTL = Duration.ofSeconds(30);

    private final List<JdbcLock> locks = new ArrayList<>();
    private DataSource database;
    private String table;

    private JdbcLock lock(Engine engine) {
        database = engine.dataSource(postgres, mariadb);
        table = "shape_" + tables.incrementAndGet();
        JdbcLock lock =
                JdbcLock.builder().dataSource(database).table(table).holder("a").build();
        locks.add(lock);
        return lock;
    }

    @AfterEach
    void closeLocks() {
        locks.forEach(JdbcLock::close);
    }

    /** The table as the version before the attempt column made it. */
    private void createOldTable(Engine engine) throws SQLException {
        String old = switch (engine) {
            case MARIADB ->
                "CREATE TABLE " + table + " (resource VARCHAR(255) CHARACTER SET utf8mb4 COLLATE"
                        + " utf8mb4_nopad_bin NOT NULL PRIMARY KEY, holder VARCHAR(64), token BIGINT NOT NULL,"
                        + " expires_at DATETIME(6) NOT NULL) ENGINE=InnoDB";
            default ->
                "CREATE TABLE " + table + " (resource VARCHAR(255) PRIMARY KEY, holder VARCHAR(64),"
                        + " token BIGINT NOT NULL, expires_at TIMESTAMP WITH TIME ZONE NOT NULL)";
        };
        try (Connection connection = database.getConnection();
                Statement sql = connection.createStatement()) {
            sql.execute("CREATE SEQUENCE " + Dialect.sequence(table));
            sql.execute(old);
            sql.execute("INSERT INTO " + table + " (resource, holder, token, expires_at) VALUES ('kept', NULL, "
                    + engine.dialect().nextValue(table) + ", "
                    + engine.dialect().now() + ")");
        }
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aTableOfAnEarlierVersionIsNamedWithTheRemedyAndUpgradedKeepingItsRows(Engine engine) throws Exception {
        JdbcLock lock = lock(engine);
        createOldTable(engine);

        LockConfigurationException refused = catchThrowableOfType(
                LockConfigurationException.class, () -> lock.acquire("r", TTL, Duration.ofSeconds(5)));
        assertThat(refused.attempts()).isEqualTo(1);
        assertThat(refused)
                .hasMessageContaining("made by an earlier version")
                .hasMessageContaining("createTable()")
                .hasMessageContaining("ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS attempt");
        assertThat(catchThrowableOfType(QuorumlockException.class, () -> lock.check(Duration.ofSeconds(5))))
                .hasMessageContaining("made by an earlier version");
        assertThat(lock.ddl(engine.dialect())).last().asString().startsWith("ALTER TABLE " + table);

        lock.createTable();
        lock.createTable(); // twice: nothing more to add
        lock.check(Duration.ofSeconds(5));
        long kept;
        try (Connection connection = database.getConnection();
                Statement sql = connection.createStatement();
                java.sql.ResultSet row = sql.executeQuery("SELECT token FROM " + table + " WHERE resource = 'kept'")) {
            assertThat(row.next()).as("the old row is kept").isTrue();
            kept = row.getLong(1);
        }
        try (FencedLease lease = lock.acquire("kept", TTL, Duration.ZERO)) {
            assertThat(lease.fencingToken()).isGreaterThan(kept);
        }
        assertThat(lock.holder("kept")).isEmpty();
    }

    /**
     * The undo of a grant whose answer was lost, before the grant's statement runs (a row free or
     * absent) and after (the row taken): afterwards the statement, sent again as it was, takes
     * nothing, and the row is free.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aGrantSettledBeforeOrAfterItRanCanTakeNothing(Engine engine) throws Exception {
        JdbcLock lock = lock(engine);
        lock.createTable();
        lock.acquire("free", TTL, Duration.ZERO).release();
        long bound;
        try (FencedLease lease = lock.acquire("taken", TTL, Duration.ZERO)) {
            bound = lease.fencingToken();
        }
        LockTable statements = new LockTable(table, engine.dialect());
        try (LockTable.Session session = session()) {
            for (String resource : List.of("free", "absent")) {
                assertThat(statements.settle(session, resource, "late", 41, bound))
                        .as(resource)
                        .isTrue();
                Grants.Outcome late = statements.grant(session, resource, "late", 30_000, 41, bound, 0);
                assertThat(late.granted()).as(resource).isFalse();
                assertThat(late.row().orElseThrow().held()).isFalse();
            }

            Grants.Outcome landed = statements.grant(session, "taken", "late", 30_000, 42, bound, 0);
            assertThat(landed.granted()).isTrue();
            assertThat(statements.settle(session, "taken", "late", 42, bound)).isTrue();
            Optional<LockTable.Row> row = statements.read(session, "taken");
            assertThat(row.orElseThrow().held()).isFalse();
            assertThat(statements
                            .grant(session, "taken", "late", 30_000, 42, bound, 0)
                            .granted())
                    .isFalse();
        }
        try (FencedLease next = lock.acquire("taken", TTL, Duration.ZERO)) {
            assertThat(next.fencingToken()).isGreaterThan(bound);
        }
    }

    private LockTable.Session session() throws SQLException {
        return new LockTable.Session(
                database.getConnection(), Ticker.SYSTEM, Ticker.SYSTEM.nanos() + TimeUnit.SECONDS.toNanos(10));
    }
}
