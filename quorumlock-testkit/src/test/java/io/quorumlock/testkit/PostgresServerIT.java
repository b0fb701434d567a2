package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class PostgresServerIT {

    private static final Logger log = LoggerFactory.getLogger(PostgresServerIT.class);

    @BeforeAll
    static void postgresIsInstalled() {
        assumeTrue(
                PostgresServer.available(),
                () -> PostgresServer.unavailableReason().orElse(""));
    }

    @Test
    void startsAcceptsConnectionsKeepsDataAcrossAStopAndLeavesNothingAfterClose() throws Exception {
        PostgresServer server = PostgresServer.start();
        Path dir = server.dir();
        assertThat(dir.getFileName().toString()).startsWith("quorumlock-pg-");
        assertThat(server.jdbcUrl()).isEqualTo("jdbc:postgresql://127.0.0.1:" + server.port() + "/postgres");
        assertThat(server.user()).isEqualTo("postgres");
        assertThat(server.isRunning()).isTrue();
        assertThat(server.version()).matches("\\d+(\\.\\d+)*");
        log.info("Testing with PostgreSQL {} ({})", server.version(), server);

        Connection open = connect(server);
        try (Statement statement = open.createStatement()) {
            statement.execute("CREATE TABLE kept (id INT PRIMARY KEY)");
            statement.execute("INSERT INTO kept VALUES (42)");
            assertThat(query(statement, "SELECT current_setting('fsync')")).isEqualTo("off");
        }
        List<Long> pids = server.processIds();
        assertThat(pids).contains(server.pid()).hasSizeGreaterThan(2); // the postmaster and its workers, a backend

        server.stop();
        assertThat(pids).allMatch(Clients::processGone);
        assertThat(server.isRunning()).isFalse();
        assertThatThrownBy(server::pid).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> open.createStatement().executeQuery("SELECT 1"))
                .isInstanceOf(SQLException.class);
        open.close();
        server.stop(); // idempotent

        int port = server.port();
        server.startAgain();
        server.startAgain(); // no-op while running
        assertThat(server.port()).isEqualTo(port);
        try (Connection connection = connect(server);
                Statement statement = connection.createStatement()) {
            assertThat(query(statement, "SELECT id FROM kept")).isEqualTo("42");
        }
        List<Long> secondPids = server.processIds();

        server.close();
        assertThat(secondPids).allMatch(Clients::processGone);
        assertThat(dir).doesNotExist();
        server.close(); // idempotent
        assertThatThrownBy(server::startAgain)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void aPausedServerAnswersNothingUntilResumedAndStopEndsIt() throws Exception {
        try (PostgresServer server = PostgresServer.start();
                Connection open = connect(server, 1)) {
            long postmaster = server.pid();
            // the postmaster and every process it started, the backend of the open connection too
            List<Long> pids = Stream.concat(
                            Stream.of(postmaster),
                            ProcessHandle.of(postmaster)
                                    .orElseThrow()
                                    .descendants()
                                    .map(ProcessHandle::pid))
                    .toList();
            assertThat(pids).hasSizeGreaterThan(2);
            server.pause();
            server.pause(); // no-op while paused
            assertThat(server.isPaused()).isTrue();
            assertThat(server.isRunning()).isTrue();
            assertThat(server.toString()).contains("paused");
            assertThat(pids).allMatch(Processes::isStopped);
            assertThatThrownBy(() -> open.createStatement().executeQuery("SELECT 1"))
                    .isInstanceOf(SQLException.class);

            server.resume();
            assertThat(server.isPaused()).isFalse();
            assertThat(pids).noneMatch(Processes::isStopped);
            try (Connection connection = connect(server, 5);
                    Statement statement = connection.createStatement()) {
                assertThat(query(statement, "SELECT 1")).isEqualTo("1");
            }

            server.pause();
            server.stop(); // thaws it first, so that the postmaster acts on the SIGQUIT
            assertThat(pids).allMatch(Clients::processGone);
            assertThat(server.isPaused()).isFalse();
            server.startAgain();
            try (Connection connection = connect(server, 5);
                    Statement statement = connection.createStatement()) {
                assertThat(query(statement, "SELECT 1")).isEqualTo("1");
            }
        }
    }

    @Test
    void twoServersRunSideBySide() throws Exception {
        try (PostgresServer first = PostgresServer.start();
                PostgresServer second = PostgresServer.start();
                Connection a = connect(first);
                Connection b = connect(second);
                Statement sa = a.createStatement();
                Statement sb = b.createStatement()) {
            assertThat(first.port()).isNotEqualTo(second.port());
            sa.execute("CREATE TABLE only_in_first (id INT)");
            assertThat(query(sb, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_first'"))
                    .isEqualTo("0");
        }
    }

    @Test
    void aJvmThatIsInterruptedLeavesNoServerBehind() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process demo = new ProcessBuilder(
                        java.toString(), "-cp", System.getProperty("java.class.path"), Demo.class.getName())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try {
            long postmaster;
            List<Long> pids;
            Path dir;
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(demo.getInputStream(), StandardCharsets.UTF_8))) {
                postmaster = Long.parseLong(out.readLine());
                pids = Arrays.stream(out.readLine().split(","))
                        .map(Long::parseLong)
                        .toList();
                dir = Path.of(out.readLine());
            }
            assertThat(Clients.processGone(postmaster)).isFalse();

            demo.destroy(); // SIGTERM runs the shutdown hooks, as Ctrl-C's SIGINT does

            assertThat(demo.waitFor(TestTime.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            TestTime.await(
                    Duration.ofSeconds(5),
                    () -> pids.stream().allMatch(Clients::processGone),
                    "every PostgreSQL process to be gone");
            assertThat(dir).doesNotExist();
        } finally {
            demo.destroyForcibly(); // never leave the demo behind, even when an assertion failed
        }
    }

    static Connection connect(PostgresServer server) throws SQLException {
        return DriverManager.getConnection(server.jdbcUrl(), server.user(), "");
    }

    /** A connection whose reads give up after {@code seconds}. */
    private static Connection connect(PostgresServer server, int seconds) throws SQLException {
        return DriverManager.getConnection(
                server.jdbcUrl() + "?socketTimeout=" + seconds + "&loginTimeout=" + seconds, server.user(), "");
    }

    private static String query(Statement statement, String sql) throws SQLException {
        try (ResultSet rows = statement.executeQuery(sql)) {
            assertThat(rows.next()).isTrue();
            return rows.getString(1);
        }
    }

    /** Starts a server and runs until it is interrupted. */
    static final class Demo {
        public static void main(String[] args) throws InterruptedException {
            PostgresServer server = PostgresServer.start();
            System.out.println(server.pid());
            System.out.println(String.join(
                    ",", server.processIds().stream().map(String::valueOf).toList()));
            System.out.println(server.dir());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
