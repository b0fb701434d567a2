package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.FencedLease;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.MariaDbServer;
import io.quorumlock.testkit.MariaDbServerExtension;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.TestTime;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What only a real server shows: the privileges the lock needs and the remedy it names, a refused
 * password, MariaDB's collations, and tokens across a crash of the server.
 */
class JdbcLockServersIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @RegisterExtension
    static final MariaDbServerExtension mariadb = new MariaDbServerExtension();

    private static final AtomicInteger names = new AtomicInteger();
    private static final Duration TTL = Duration.ofSeconds(10);

    private final List<JdbcLock> locks = new ArrayList<>();

    @AfterEach
    void close() {
        locks.forEach(JdbcLock::close);
    }

    private JdbcLock lock(String url, String user, String password, String table) {
        JdbcLock lock = JdbcLock.builder()
                .url(url)
                .user(user)
                .password(password)
                .table(table)
                .build();
        locks.add(lock);
        return lock;
    }

    private JdbcLock mariaLock(String table) {
        return lock(mariadb.jdbcUrl(), mariadb.user(), mariadb.password(), table);
    }

    @Test
    void aPostgresUserWithoutTheGrantsIsToldWhichOnes() throws Exception {
        String table = "locks_pg_" + names.incrementAndGet();
        String reader = "reader_" + names.get();
        lock(postgres.jdbcUrl(), postgres.user(), null, table).createTable();
        try (Connection admin = DriverManager.getConnection(postgres.jdbcUrl(), postgres.user(), "");
                Statement sql = admin.createStatement()) {
            sql.execute("CREATE ROLE " + reader + " LOGIN");
            sql.execute("GRANT SELECT ON " + table + " TO " + reader);
        }
        JdbcLock lock = lock(postgres.jdbcUrl(), reader, null, table);
        LockConfigurationException refused = catchThrowableOfType(
                LockConfigurationException.class, () -> lock.acquire("r", TTL, Duration.ofSeconds(5)));
        assertThat(refused.attempts()).isEqualTo(1);
        assertThat(refused.lastAttempt())
                .singleElement()
                .satisfies(answer -> assertThat(answer.kind()).isEqualTo(ServerAnswer.Kind.MISCONFIGURED));
        assertThat(refused)
                .hasMessageContaining("lacks a privilege")
                .hasMessageContaining("GRANT SELECT, INSERT, UPDATE ON " + table)
                .hasMessageContaining("GRANT USAGE ON SEQUENCE " + table + "_token");
    }

    @Test
    void aMariaDbUserWithoutTheGrantsIsToldWhichOnes() {
        String table = "locks_maria_" + names.incrementAndGet();
        mariaLock(table).createTable();
        String reader = "reader_" + names.get();
        mariadb.server().createUser(reader, "pw-" + reader, "SELECT ON quorumlock." + table);
        JdbcLock lock = lock(mariadb.jdbcUrl(), reader, "pw-" + reader, table);
        LockConfigurationException refused = catchThrowableOfType(
                LockConfigurationException.class, () -> lock.acquire("r", TTL, Duration.ofSeconds(5)));
        assertThat(refused)
                .hasMessageContaining("lacks a privilege")
                .hasMessageContaining("GRANT SELECT, INSERT ON " + table + "_token");
    }

    @Test
    void aRefusedPasswordIsAConfigurationErrorThatDoesNotShowIt() {
        JdbcLock lock = lock(mariadb.jdbcUrl(), mariadb.user(), "wrong-s3cret", "locks_any");
        LockConfigurationException refused = catchThrowableOfType(
                LockConfigurationException.class, () -> lock.acquire("r", TTL, Duration.ofSeconds(5)));
        assertThat(refused).hasMessageContaining("the database refused the user");
        assertThat(refused.getMessage() + refused.lastAttempt() + lock).doesNotContain("wrong-s3cret");
    }

    @Test
    void onMariaDbResourcesThatDifferInCaseOrTrailingSpacesAreDistinct() {
        JdbcLock lock = mariaLock("locks_case_" + names.incrementAndGet());
        lock.createTable();
        try (FencedLease upper = lock.acquire("Stock", TTL, Duration.ZERO);
                FencedLease lower = lock.acquire("stock", TTL, Duration.ZERO);
                FencedLease spaced = lock.acquire("stock ", TTL, Duration.ZERO)) {
            assertThat(List.of(upper.fencingToken(), lower.fencingToken(), spaced.fencingToken()))
                    .doesNotHaveDuplicates();
        }
    }

    /** Through url(...): one connection kept between statements, not one per statement; none after close. */
    @Test
    void aUrlLockKeepsItsConnectionBetweenStatementsAndClosesItWithTheLock() throws Exception {
        String app = "urlcache" + names.incrementAndGet();
        JdbcLock lock = lock(postgres.jdbcUrl() + "?ApplicationName=" + app, postgres.user(), null, "locks_" + app);
        lock.createTable();
        lock.acquire("r", TTL, Duration.ZERO).release();
        List<Integer> first = backends(app);
        assertThat(first).as("the connection kept").hasSize(1);
        for (int i = 0; i < 10; i++) {
            lock.acquire("r", TTL, Duration.ZERO).release();
        }
        assertThat(backends(app)).as("the same connection").isEqualTo(first);

        postgres.server().stop();
        postgres.server().startAgain();
        lock.acquire("r", TTL, Duration.ofSeconds(10)).release(); // the kept one is dead: a new one
        // (the failed attempt's clean-up may hold a second one for a moment)
        TestTime.await(Duration.ofSeconds(10), () -> backends(app).size() == 1, "one connection kept");
        assertThat(backends(app)).doesNotContainAnyElementsOf(first);

        lock.close();
        TestTime.await(Duration.ofSeconds(10), () -> backends(app).isEmpty(), "the kept connection to close");
    }

    /** The server processes of the connections that name {@code app}. */
    private static List<Integer> backends(String app) {
        try (Connection connection = DriverManager.getConnection(postgres.jdbcUrl(), postgres.user(), "");
                PreparedStatement statement = connection.prepareStatement(
                        "SELECT pid FROM pg_stat_activity WHERE application_name = ? ORDER BY pid")) {
            statement.setString(1, app);
            List<Integer> pids = new ArrayList<>();
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    pids.add(rows.getInt(1));
                }
            }
            return pids;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void tokensGrowAcrossACrashOfMariaDb() {
        JdbcLock lock = mariaLock("locks_crash_" + names.incrementAndGet());
        lock.createTable();
        long before;
        try (FencedLease lease = lock.acquire("r", TTL, Duration.ZERO)) {
            before = lease.fencingToken();
        }
        MariaDbServer server = mariadb.server();
        server.stop(); // SIGKILL
        server.startAgain();
        try (FencedLease lease = lock.acquire("r", TTL, Duration.ofSeconds(10))) {
            assertThat(lease.fencingToken()).isGreaterThan(before);
        }
    }
}
