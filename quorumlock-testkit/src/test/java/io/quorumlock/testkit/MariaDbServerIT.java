package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class MariaDbServerIT {

    private static final Logger log = LoggerFactory.getLogger(MariaDbServerIT.class);

    @BeforeAll
    static void mariaDbIsInstalled() {
        assumeTrue(
                MariaDbServer.available(),
                () -> MariaDbServer.unavailableReason().orElse(""));
    }

    @Test
    void startsAcceptsConnectionsKeepsCommittedDataAcrossAStopAndLeavesNothingAfterClose() throws Exception {
        long started = System.nanoTime();
        MariaDbServer server = MariaDbServer.start();
        log.info(
                "Testing with MariaDB {} ({}), started in {} ms",
                server.version(),
                server,
                (System.nanoTime() - started) / 1_000_000);
        Path dir = server.dir();
        assertThat(dir.getFileName().toString()).startsWith("quorumlock-mariadb-");
        assertThat(server.host()).isEqualTo("127.0.0.1");
        assertThat(server.jdbcUrl()).isEqualTo("jdbc:mariadb://127.0.0.1:" + server.port() + "/quorumlock");
        assertThat(server.database()).isEqualTo("quorumlock");
        assertThat(server.isRunning()).isTrue();
        assertThat(server.version()).matches("\\d+(\\.\\d+)+");

        Connection open = connect(server);
        Connection uncommitted = connect(server);
        try (Statement statement = open.createStatement()) {
            assertThat(query(statement, "SELECT CURRENT_USER()")).isEqualTo("quorumlock@127.0.0.1");
            assertThat(query(statement, "SELECT DATABASE()")).isEqualTo("quorumlock");
            assertThat(query(statement, "SELECT @@character_set_database")).isEqualTo("utf8mb4");
            assertThat(query(statement, "SELECT @@innodb_flush_log_at_trx_commit"))
                    .isEqualTo("2");
            statement.execute("CREATE TABLE kept (id INT PRIMARY KEY) ENGINE=InnoDB");
            statement.execute("INSERT INTO kept VALUES (42)");
        }
        uncommitted.setAutoCommit(false);
        try (Statement statement = uncommitted.createStatement()) {
            statement.execute("INSERT INTO kept VALUES (43)");
        }
        long pid = server.pid();
        assertThat(pid).isPositive();

        server.stop();
        assertThat(Clients.processGone(pid)).isTrue();
        assertThat(server.isRunning()).isFalse();
        assertThatThrownBy(server::pid).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> open.createStatement().executeQuery("SELECT 1"))
                .isInstanceOf(SQLException.class);
        assertThatThrownBy(() -> server.execute("SELECT 1"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not running");
        open.close();
        uncommitted.close();
        server.stop(); // idempotent

        int port = server.port();
        server.startAgain();
        server.startAgain(); // no-op while running
        assertThat(server.port()).isEqualTo(port);
        assertThat(server.pid()).isNotEqualTo(pid);
        try (Connection connection = connect(server);
                Statement statement = connection.createStatement()) {
            assertThat(query(statement, "SELECT GROUP_CONCAT(id) FROM kept")).isEqualTo("42");
        }
        assertThat(server.execute("SELECT id FROM kept")).isEqualTo("42");
        long secondPid = server.pid();

        server.close();
        assertThat(Clients.processGone(secondPid)).isTrue();
        assertThat(dir).doesNotExist();
        server.close(); // idempotent
        assertThatThrownBy(server::startAgain)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void createsUsersWithOnlyTheGivenPrivileges() throws Exception {
        try (MariaDbServer server = MariaDbServer.start()) {
            server.execute("CREATE TABLE locks (name VARCHAR(64) PRIMARY KEY); INSERT INTO locks VALUES ('job')");
            server.createUser("reader", "it's secret", "SELECT ON quorumlock.*");
            server.createUser("nobody", "secret");

            try (Connection reader = DriverManager.getConnection(server.jdbcUrl(), "reader", "it's secret");
                    Statement statement = reader.createStatement()) {
                assertThat(query(statement, "SELECT name FROM locks")).isEqualTo("job");
                assertThatThrownBy(() -> statement.execute("INSERT INTO locks VALUES ('other')"))
                        .isInstanceOf(SQLException.class)
                        .hasMessageContaining("INSERT command denied");
                assertThatThrownBy(() -> statement.execute("CREATE TABLE mine (id INT)"))
                        .isInstanceOf(SQLException.class)
                        .hasMessageContaining("CREATE command denied");
            }
            assertThatThrownBy(() -> DriverManager.getConnection(server.jdbcUrl(), "nobody", "secret")
                            .close())
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("Access denied");
            assertThatThrownBy(() -> DriverManager.getConnection(server.jdbcUrl(), "reader", "wrong")
                            .close())
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("Access denied");

            assertThat(server.execute("SELECT COUNT(*) FROM locks")).isEqualTo("1");
            assertThat(server.execute("SELECT user, host FROM mysql.user WHERE user = 'reader'"))
                    .isEqualTo("reader\t127.0.0.1");
            assertThatThrownBy(() -> server.execute("SELECT * FROM missing"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("doesn't exist");
            assertThatThrownBy(() -> server.createUser("reader", "again"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Operation CREATE USER failed");
        }
    }

    @Test
    void aPausedServerAnswersNothingUntilResumedAndStopEndsIt() throws Exception {
        try (MariaDbServer server = MariaDbServer.start();
                Connection open = connect(server, 1_000)) {
            long pid = server.pid();
            server.pause();
            server.pause(); // no-op while paused
            assertThat(server.isPaused()).isTrue();
            assertThat(server.isRunning()).isTrue();
            assertThat(server.toString()).contains("paused");
            assertThat(Processes.isStopped(pid)).isTrue();
            assertThatThrownBy(() -> open.createStatement().executeQuery("SELECT 1"))
                    .isInstanceOf(SQLException.class);

            server.resume();
            assertThat(server.isPaused()).isFalse();
            assertThat(Processes.isStopped(pid)).isFalse();
            try (Connection connection = connect(server, 5_000);
                    Statement statement = connection.createStatement()) {
                assertThat(query(statement, "SELECT 1")).isEqualTo("1");
            }

            server.pause();
            server.stop();
            assertThat(Clients.processGone(pid)).isTrue();
            assertThat(server.isPaused()).isFalse();
            server.startAgain();
            assertThat(server.execute("SELECT 1")).isEqualTo("1");
        }
    }

    @Test
    void twoServersRunSideBySide() throws Exception {
        try (MariaDbServer first = MariaDbServer.start();
                MariaDbServer second = MariaDbServer.start();
                Connection a = connect(first);
                Connection b = connect(second);
                Statement sa = a.createStatement();
                Statement sb = b.createStatement()) {
            assertThat(first.port()).isNotEqualTo(second.port());
            sa.execute("CREATE TABLE only_in_first (id INT)");
            assertThat(query(sb, "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'only_in_first'"))
                    .isEqualTo("0");
        }
    }

    @Test
    void aTakenPortIsReportedAndNothingIsLeftRunning() throws Exception {
        List<Path> dirsBefore = serverDirs();
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            assertThatThrownBy(() -> MariaDbServer.start(port))
                    .isInstanceOfSatisfying(
                            PortInUseException.class, e -> assertThat(e.port()).isEqualTo(port));
        }
        assertThat(ProcessHandle.current()
                        .descendants()
                        .filter(ProcessHandle::isAlive)
                        .map(process -> process.info().command().orElse("")))
                .noneMatch(command -> command.contains("mariadb"));
        assertThat(serverDirs()).isSubsetOf(dirsBefore);
    }

    private static List<Path> serverDirs() throws IOException {
        try (Stream<Path> files = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return files.filter(file -> file.getFileName().toString().startsWith("quorumlock-mariadb-"))
                    .toList();
        }
    }

    @Test
    void aJvmThatIsInterruptedLeavesNoServerBehind() throws Exception {
        Clients.assertInterruptedJvmLeavesNothing(Demo.class, "mariadbd");
    }

    static Connection connect(MariaDbServer server) throws SQLException {
        return DriverManager.getConnection(server.jdbcUrl(), server.user(), server.password());
    }

    /** A connection whose reads give up after {@code millis}. */
    private static Connection connect(MariaDbServer server, int millis) throws SQLException {
        return DriverManager.getConnection(
                server.jdbcUrl() + "?socketTimeout=" + millis + "&connectTimeout=" + millis,
                server.user(),
                server.password());
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
            MariaDbServer server = MariaDbServer.start();
            System.out.println(server.pid());
            System.out.println(server.dir());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
