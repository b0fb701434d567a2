package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.cli.CliRun;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.testkit.MariaDbServerExtension;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.TestTime;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code quorumlock run --jdbc} and {@code check --jdbc} on a real PostgreSQL (Debian's {@code
 * postgresql}; skipped, saying why, where it is missing): fencing tokens, a busy lock, a missing
 * table, a database that is down, and the password kept from the command.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunJdbcIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @RegisterExtension
    static final MariaDbServerExtension mariadb = new MariaDbServerExtension();

    private static final AtomicInteger tables = new AtomicInteger();

    @TempDir
    Path dir;

    private RunProcess run(Map<String, String> env, String... args) {
        String[] all = new String[args.length + 6];
        System.arraycopy(
                new String[] {"--jdbc", postgres.jdbcUrl(), "--jdbc-user", postgres.user(), "--resource", "stock"},
                0,
                all,
                0,
                6);
        System.arraycopy(args, 0, all, 6, args.length);
        return RunProcess.start(dir, env, all);
    }

    private CliRun check(String... more) {
        String[] args = new String[more.length + 5];
        System.arraycopy(
                new String[] {"check", "--jdbc", postgres.jdbcUrl(), "--jdbc-user", postgres.user()}, 0, args, 0, 5);
        System.arraycopy(more, 0, args, 5, more.length);
        return CliRun.of(args);
    }

    private long token() throws Exception {
        try (RunProcess run = run(Map.of(), "--", "sh", "-c", "echo $QUORUMLOCK_FENCING_TOKEN")) {
            assertThat(run.exitCode()).as(run.err()).isZero();
            return Long.parseLong(run.out().trim());
        }
    }

    @Test
    void checkCreatesTheTableAndRunsSeeIncreasingTokens() throws Exception {
        CliRun created = check("--create-table");
        assertThat(created.exitCode()).as(created.err()).isZero();
        assertThat(created.out().lines().toList().get(0)).startsWith("database").contains("clock offset", "verdict");
        assertThat(created.out())
                .contains("postgresql", " ok")
                .contains("127.0.0.1:" + postgres.server().port());

        long first = token();
        long second = token();
        assertThat(first).isPositive();
        assertThat(second).isGreaterThan(first);
    }

    @Test
    void aBusyLockNamesItsHolderAndExits75() throws Exception {
        assertThat(check("--create-table").exitCode()).isZero();
        try (JdbcLock lock = JdbcLock.builder()
                        .url(postgres.jdbcUrl())
                        .user(postgres.user())
                        .holder("billing-worker-1")
                        .build();
                FencedLease held = lock.acquire("stock", Duration.ofSeconds(30), Duration.ZERO);
                RunProcess run = run(Map.of(), "--wait", "0s", "--", "true")) {
            assertThat(held.isValid()).isTrue();
            assertThat(run.exitCode()).as(run.err()).isEqualTo(RunCommand.NOT_ACQUIRED);
            assertThat(run.err()).contains("held by another owner", "holder billing-worker-1", "fencing token");
        }
    }

    @Test
    void aMissingTableSaysHowToCreateIt() throws Exception {
        // The table may exist from another test: look for it in a schema where it does not.
        String url = postgres.jdbcUrl() + "?currentSchema=nowhere_" + tables.incrementAndGet();
        CliRun missing = CliRun.of("check", "--jdbc", url, "--jdbc-user", postgres.user());
        assertThat(missing.exitCode()).isEqualTo(1);
        assertThat(missing.out()).startsWith("ERROR ").contains("quorumlock_locks", "does not exist");
        try (RunProcess run = RunProcess.start(
                dir, Map.of(), "--jdbc", url, "--jdbc-user", postgres.user(), "--resource", "r", "--", "true")) {
            assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
            assertThat(run.err())
                    .contains("quorumlock_locks")
                    .contains("does not exist")
                    .contains("quorumlock check --jdbc URL --create-table");
        }
    }

    /** MariaDB, whose test user has a password (the kit's PostgreSQL trusts every local user). */
    @Test
    void aWrongPasswordIsRefusedNamingWhereThePasswordComesFrom() throws Exception {
        try (RunProcess run = RunProcess.start(
                dir,
                Map.of("QUORUMLOCK_JDBC_PASSWORD", "wrong-s3cret"),
                "--jdbc",
                mariadb.jdbcUrl(),
                "--jdbc-user",
                mariadb.user(),
                "--resource",
                "r",
                "--",
                "true")) {
            assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
            assertThat(run.err())
                    .contains("refused the user", "Access denied")
                    .contains("--jdbc-user", "QUORUMLOCK_JDBC_PASSWORD", "jdbc.password")
                    .doesNotContain("wrong-s3cret");
        }
    }

    /**
     * A user that must give a password (scram-sha-256 in pg_hba.conf, first in the file, for this
     * user only) and gives none: a configuration error naming where the password comes from, not a
     * database that is down.
     */
    @Test
    void aMissingPasswordIsAConfigurationErrorNamingWhereThePasswordComesFrom() throws Exception {
        String user = "scram_" + tables.incrementAndGet();
        Path hba = postgres.server().dir().resolve("data").resolve("pg_hba.conf");
        String original = Files.readString(hba);
        try {
            Files.writeString(hba, "host all " + user + " 127.0.0.1/32 scram-sha-256\n" + original);
            try (Connection admin = DriverManager.getConnection(postgres.jdbcUrl(), postgres.user(), "");
                    Statement sql = admin.createStatement()) {
                sql.execute("SET password_encryption = 'scram-sha-256'");
                sql.execute("CREATE ROLE " + user + " LOGIN PASSWORD 'right-s3cret'");
                sql.execute("SELECT pg_reload_conf()");
            }
            TestTime.await(Duration.ofSeconds(10), () -> asksForAPassword(user), "pg_hba.conf to be reloaded");
            try (RunProcess run = runAs(user, Map.of())) {
                assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
                assertThat(run.err().lines().toList())
                        .singleElement()
                        .asString()
                        .contains("asks for a password and none was given")
                        .contains("QUORUMLOCK_JDBC_PASSWORD", "jdbc.password");
            }
            try (RunProcess run = runAs(user, Map.of("QUORUMLOCK_JDBC_PASSWORD", "wrong-s3cret"))) {
                assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
                assertThat(run.err())
                        .contains("refused the user", "--jdbc-user", "QUORUMLOCK_JDBC_PASSWORD")
                        .doesNotContain("wrong-s3cret");
            }
        } finally {
            Files.writeString(hba, original);
            try (Connection admin = DriverManager.getConnection(postgres.jdbcUrl(), postgres.user(), "");
                    Statement sql = admin.createStatement()) {
                sql.execute("SELECT pg_reload_conf()");
            }
        }
    }

    private RunProcess runAs(String user, Map<String, String> env) {
        return RunProcess.start(
                dir, env, "--jdbc", postgres.jdbcUrl(), "--jdbc-user", user, "--resource", "r", "--", "true");
    }

    private boolean asksForAPassword(String user) {
        try (Connection connection = DriverManager.getConnection(postgres.jdbcUrl(), user, "")) {
            return false;
        } catch (SQLException e) {
            return String.valueOf(e.getMessage()).contains("password");
        }
    }

    @Test
    void anUnknownDatabaseIsAConfigurationErrorNamingTheUrl() throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + postgres.server().port() + "/no_such_db";
        try (RunProcess run = RunProcess.start(
                dir, Map.of(), "--jdbc", url, "--jdbc-user", postgres.user(), "--resource", "r", "--", "true")) {
            assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
            assertThat(run.err().lines().toList())
                    .singleElement()
                    .asString()
                    .contains("does not exist", "no_such_db")
                    .contains("check the database at the end of the --jdbc URL");
        }
        CliRun checked = CliRun.of("check", "--jdbc", url, "--jdbc-user", postgres.user());
        assertThat(checked.exitCode()).isEqualTo(1);
        assertThat(checked.out()).startsWith("ERROR ").contains("no_such_db", "--jdbc URL");
    }

    @Test
    void aDatabaseThatIsDownIsReportedAsUnavailable() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        try (RunProcess run = RunProcess.start(
                dir,
                Map.of(),
                "--jdbc",
                "jdbc:postgresql://127.0.0.1:" + closed + "/postgres",
                "--resource",
                "r",
                "--wait",
                "0s",
                "--",
                "true")) {
            assertThat(run.exitCode()).as(run.err()).isEqualTo(RunCommand.UNAVAILABLE);
            assertThat(run.err()).contains("127.0.0.1:" + closed).contains("unreachable");
        }
    }

    @Test
    void thePasswordIsNeitherPrintedNorPassedToTheCommand() throws Exception {
        assertThat(check("--create-table").exitCode()).isZero();
        try (RunProcess run =
                run(Map.of("QUORUMLOCK_JDBC_PASSWORD", "s3cret-pw"), "-v", "--", "sh", "-c", "env; echo done")) {
            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(run.out()).contains("done", "QUORUMLOCK_FENCING_TOKEN").doesNotContain("s3cret-pw");
            assertThat(run.err()).doesNotContain("s3cret-pw");
        }
    }
}
