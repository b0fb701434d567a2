package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.FencedLease;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.MariaDbServer;
import io.quorumlock.testkit.MariaDbServerExtension;
import io.quorumlock.testkit.PostgresServerExtension;
import java.sql.Connection;
import java.sql.DriverManager;
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
