package io.quorumlock.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One real MariaDB server for tests: a fresh data directory ({@code mariadb-install-db}) in a
 * temporary directory, listening on a free port on 127.0.0.1, with a database {@code quorumlock}
 * and a user {@code quorumlock} (password {@code quorumlock}) who holds every privilege.
 *
 * <pre>{@code
 * assumeTrue(MariaDbServer.available(), MariaDbServer.unavailableReason().orElse(""));
 * try (MariaDbServer server = MariaDbServer.start();
 *         Connection connection =
 *                 DriverManager.getConnection(server.jdbcUrl(), server.user(), server.password())) {
 *     // ...
 * }
 * }</pre>
 *
 * <p>The server binary is the one named by the environment variable {@code
 * QUORUMLOCK_MARIADB_BIN} (the {@code mariadbd} file, or the directory that holds it), else {@code
 * mariadbd} on the PATH, else {@code /usr/sbin/mariadbd} (where Debian's {@code mariadb-server}
 * package puts it) or {@code /usr/libexec/mariadbd}; {@code mariadb-install-db} and the client
 * {@code mariadb} are taken from its directory, the {@code bin} directory next to it, or the PATH.
 * As root, the server runs as root ({@code --user=root}, without which it refuses to start): it
 * only touches its own temporary directory, which then needs no change of owner.
 *
 * <p>The server runs with {@code innodb_flush_log_at_trx_commit=2}, which writes the redo log at
 * every commit, and {@code --debug-no-sync}, which skips every fsync: fast, and what a test
 * needs, since committed data still survives {@link #stop()} (a crash of the server, not of the
 * machine); {@link #pause()} freezes it with SIGSTOP. The user connects over TCP from 127.0.0.1; the kit itself works as MariaDB's {@code
 * root} through the Unix socket and the {@code mariadb} client ({@link #execute(String)}, {@link
 * #createUser(String, String, String...)}). The directory (named {@code quorumlock-mariadb-*})
 * holds the data ({@code data/}), the socket and the logs; {@link #close()} deletes it. Every
 * server is also killed by a JVM shutdown hook. The test kit does not depend on a JDBC driver: put
 * {@code org.mariadb.jdbc:mariadb-java-client} on the test class path. Every wait is bounded and
 * scaled by {@link TestTime#scale()}; the methods are thread-safe.
 */
public final class MariaDbServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MariaDbServer.class);

    private static final String HOST = "127.0.0.1";
    private static final String DATABASE = "quorumlock";
    private static final String USER = "quorumlock";
    private static final String PASSWORD = "quorumlock";
    /** The administrator the kit connects as, through the socket, without a password. */
    private static final String ADMIN = "root";

    private static final int LOG_TAIL_LINES = 20;
    private static final int INSTALL_LOG_LINES = 60;
    private static final Duration INSTALL_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration READY_PROBE_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration SIGNAL_TIMEOUT = Duration.ofSeconds(5);

    /** Small InnoDB files and buffers: a test server holds little data. */
    private static final List<String> INNODB_OPTIONS =
            List.of("--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M", "--debug-no-sync");

    private final MariaDbBinaries.Binaries binaries;
    private final boolean root;
    private final Path dir;
    private int port;
    private volatile Process process;
    private volatile boolean paused;

    private boolean closed;
    private long logMark;

    private MariaDbServer(MariaDbBinaries.Binaries binaries) {
        this.binaries = binaries;
        this.root = PostgresBinaries.isRoot();
        try {
            this.dir = Files.createTempDirectory("quorumlock-mariadb-");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create a temporary directory for MariaDB", e);
        }
    }

    /**
     * Whether MariaDB can run here, so that tests can {@code assumeTrue} it: {@code mariadbd},
     * {@code mariadb-install-db} and {@code mariadb} are found. If {@code QUORUMLOCK_MARIADB_BIN} is
     * set, MariaDB is required: this returns {@code true} and a wrong setting makes {@link #start()}
     * fail, so a misconfigured CI fails instead of skipping.
     *
     * @return {@code true} if {@link #start()} should work
     */
    public static boolean available() {
        MariaDbBinaries.Lookup lookup = MariaDbBinaries.lookup();
        return lookup.required() || lookup.unavailableReason().isEmpty();
    }

    /**
     * Why MariaDB cannot run here, for a skipped test's message; it names the package to install
     * and the environment variable.
     *
     * @return the reason, such as {@code "MariaDB not found: ...; install it with `apt-get install
     *     mariadb-server` ..."}, or empty if it can run
     */
    public static Optional<String> unavailableReason() {
        return MariaDbBinaries.lookup().unavailableReason();
    }

    /**
     * Creates a data directory in a new temporary directory and starts a server on a free port.
     *
     * @return the running server, accepting connections
     * @throws IllegalStateException if MariaDB is not available ({@link #unavailableReason()}), or
     *     {@code mariadb-install-db} or the server fails; the message carries the end of its log
     */
    public static MariaDbServer start() {
        return start(0);
    }

    /**
     * Creates a data directory in a new temporary directory and starts a server on {@code port}.
     *
     * @param port the port to listen on; 0 for a free one
     * @return the running server, accepting connections
     * @throws PortInUseException if another process holds the port; nothing is left running
     * @throws IllegalStateException as {@link #start()}
     */
    public static MariaDbServer start(int port) {
        MariaDbBinaries.Lookup lookup = MariaDbBinaries.lookup();
        if (lookup.unavailableReason().isPresent()) {
            throw new IllegalStateException(
                    "Cannot start MariaDB: " + lookup.unavailableReason().get());
        }
        MariaDbServer server = new MariaDbServer(lookup.binaries().orElseThrow());
        try {
            server.installDb();
            if (port == 0) {
                server.launchOnFreePort();
            } else {
                server.launchOn(port);
            }
            return server;
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /** {@return the address the server listens on: always {@code "127.0.0.1"}} */
    public String host() {
        return HOST;
    }

    /** {@return the port the server listens on} It stays the same across {@link #stop()} and {@link #startAgain()}. */
    public synchronized int port() {
        return port;
    }

    /**
     * {@return the user to connect as: {@code "quorumlock"}, who holds every privilege (with grant
     * option) when connecting from 127.0.0.1}
     */
    public String user() {
        return USER;
    }

    /** {@return the password of {@link #user()}: {@code "quorumlock"}} */
    public String password() {
        return PASSWORD;
    }

    /** {@return the database to connect to, created with the server: {@code "quorumlock"} (utf8mb4)} */
    public String database() {
        return DATABASE;
    }

    /** {@return {@code jdbc:mariadb://127.0.0.1:PORT/quorumlock}} */
    public String jdbcUrl() {
        return "jdbc:mariadb://" + HOST + ":" + port() + "/" + DATABASE;
    }

    /** {@return the server's temporary directory: the data in {@code data/}, the socket and the logs} */
    public Path dir() {
        return dir;
    }

    /** {@return the MariaDB version of the server binary, such as {@code "10.11.19"}} */
    public String version() {
        return MariaDbBinaries.version(binaries.server());
    }

    /**
     * {@return the pid of {@code mariadbd}, the server's only process} It changes on every start.
     *
     * @throws IllegalStateException if the server is not running
     */
    public synchronized long pid() {
        if (!isRunning()) {
            throw new IllegalStateException("MariaDB on port " + port + " is not running");
        }
        return process.pid();
    }

    /** {@return whether the server is running} A paused server counts as running. */
    public synchronized boolean isRunning() {
        Process launched = process;
        return launched != null && launched.isAlive();
    }

    /** {@return whether the server is frozen by {@link #pause()}} */
    public synchronized boolean isPaused() {
        return paused && isRunning();
    }

    /**
     * Freezes the server with SIGSTOP to {@code mariadbd}, as a stalled machine or VM would: TCP
     * connects still succeed (the kernel accepts them) but nothing is answered, neither queries on
     * open connections nor new handshakes, until {@link #resume()}; its clock runs on meanwhile.
     * {@link #execute(String)} waits until its timeout then. Does nothing if it is already paused.
     *
     * @throws IllegalStateException if the server is not running
     */
    public synchronized void pause() {
        long pid = pid();
        if (!paused) {
            Processes.signal(pid, "STOP", true, TestTime.scaled(SIGNAL_TIMEOUT));
            paused = true;
            log.debug("Paused MariaDB on port {} (pid {})", port, pid);
        }
    }

    /**
     * Thaws a server frozen by {@link #pause()} with SIGCONT: it answers what it was sent
     * meanwhile. Does nothing if it is not paused.
     */
    public synchronized void resume() {
        if (paused && isRunning()) {
            Processes.signal(process.pid(), "CONT", false, TestTime.scaled(SIGNAL_TIMEOUT));
        }
        paused = false;
    }

    /**
     * Runs SQL as MariaDB's {@code root}, through the Unix socket with the {@code mariadb} client,
     * in the database {@link #database()}: to set up what the test user must not be able to do
     * itself, or to look at the server from outside the code under test.
     *
     * @param sql one or more statements, separated by {@code ;}
     * @return what the client printed: the rows of the last statements that return rows, one per
     *     line, the columns separated by tabs, without the column names; empty if none did
     * @throws IllegalStateException if a statement fails (the message carries the client's error),
     *     the server is not running, or the client does not finish within the (scaled) timeout
     */
    public String execute(String sql) {
        ClientResult result = runClient(sql, TestTime.scaled(CLIENT_TIMEOUT));
        if (result.exitCode() != 0) {
            String state = isRunning() ? "" : " (the server is not running)";
            throw new IllegalStateException("SQL failed on MariaDB on port " + port() + state + ": " + sql + "\n"
                    + result.output().strip());
        }
        return result.output().strip();
    }

    /**
     * Creates a user who connects like {@link #user()}, from 127.0.0.1 with a password, but holds
     * only the given privileges: for tests of what the code does without them.
     *
     * <pre>{@code
     * server.createUser("reader", "secret", "SELECT ON quorumlock.*");
     * DriverManager.getConnection(server.jdbcUrl(), "reader", "secret"); // can read, cannot write
     * }</pre>
     *
     * @param name the user name
     * @param password the password
     * @param privileges what to grant, each as in {@code GRANT <privileges> TO ...}, such as {@code
     *     "SELECT, INSERT ON quorumlock.*"} or {@code "SELECT ON quorumlock.locks"}; none leaves the
     *     user with no privilege (then connecting to {@link #jdbcUrl()}, which names the database,
     *     fails with "Access denied")
     * @throws IllegalStateException as {@link #execute(String)}, for instance if the user exists
     */
    public void createUser(String name, String password, String... privileges) {
        String account = literal(name) + "@'" + HOST + "'";
        StringBuilder sql = new StringBuilder("CREATE USER " + account + " IDENTIFIED BY " + literal(password) + ";");
        for (String privilege : privileges) {
            sql.append("\nGRANT ")
                    .append(privilege)
                    .append(" TO ")
                    .append(account)
                    .append(';');
        }
        execute(sql.toString());
    }

    /**
     * Stops the server at once, as a crash would: SIGKILL to {@code mariadbd}. Committed data
     * survives; open transactions are lost and their clients see their connections fail. Does
     * nothing if it is not running; also kills a paused server.
     *
     * @throws IllegalStateException if the process is still there after the (scaled) exit timeout
     */
    public synchronized void stop() {
        Process launched = process;
        paused = false;
        if (launched == null) {
            return;
        }
        Processes.kill(launched, TestTime.scaled(EXIT_TIMEOUT));
        process = null;
        log.debug("Killed MariaDB on port {} (pid {})", port, launched.pid());
    }

    /**
     * Starts the server again after {@link #stop()}, on the same port and with the same data; it
     * recovers like a server after a crash. Does nothing if it is running.
     *
     * @throws IllegalStateException if the server was closed, its port has been taken by another
     *     process, or it does not come up
     */
    public synchronized void startAgain() {
        requireOpen();
        if (isRunning()) {
            return;
        }
        stop(); // forgets a process that died by itself
        if (launch() == Launch.PORT_IN_USE) {
            throw new IllegalStateException(
                    "Cannot start MariaDB again: port " + port + " is now used by another process\n" + launchOutput());
        }
    }

    /** Stops the server and deletes its directory. Idempotent; the server cannot be started again. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        try {
            stop();
        } finally {
            closed = true;
            Processes.deleteTree(dir);
        }
    }

    @Override
    public synchronized String toString() {
        return "MariaDbServer[" + jdbcUrl() + (isRunning() ? (isPaused() ? ", paused" : "") : ", stopped") + "]";
    }

    /**
     * Creates the system tables, the database and the test user. The bootstrap server runs without
     * grant tables; FLUSH PRIVILEGES loads them, so that the account statements that follow work.
     */
    private void installDb() {
        Path sql = dir.resolve("bootstrap.sql");
        Path installLog = dir.resolve("install.log");
        String account = literal(USER) + "@'" + HOST + "'";
        try {
            Files.writeString(
                    sql,
                    String.join(
                            "\n",
                            "FLUSH PRIVILEGES;",
                            "CREATE DATABASE `" + DATABASE + "` CHARACTER SET utf8mb4;",
                            "CREATE USER " + account + " IDENTIFIED BY " + literal(PASSWORD) + ";",
                            "GRANT ALL PRIVILEGES ON *.* TO " + account + " WITH GRANT OPTION;",
                            ""),
                    StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write " + sql, e);
        }
        List<String> command = new ArrayList<>(List.of(
                binaries.installDb().toString(),
                "--no-defaults",
                "--auth-root-authentication-method=normal",
                "--datadir=" + dataDir(),
                "--skip-test-db",
                "--skip-name-resolve",
                "--force", // no DNS lookup of the host name
                "--extra-file=" + sql,
                "--tmpdir=" + tmpDir()));
        command.addAll(INNODB_OPTIONS); // passed on to the bootstrap server
        Duration timeout = TestTime.scaledByLoad(INSTALL_TIMEOUT);
        try {
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(installLog.toFile());
            // The script runs the bootstrap with this server, not the one it would find by itself.
            builder.environment().put("MYSQLD_BOOTSTRAP", binaries.server().toString());
            Process install = builder.start();
            Processes.register(install, dir);
            try {
                if (!install.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    List<ProcessHandle> children = install.descendants().toList();
                    children.forEach(ProcessHandle::destroyForcibly);
                    throw new IllegalStateException("mariadb-install-db did not finish within " + timeout.toMillis()
                            + " ms\n" + installOutput(installLog));
                }
            } finally {
                Processes.kill(install, timeout);
            }
            if (install.exitValue() != 0) {
                throw new IllegalStateException("mariadb-install-db failed with exit code " + install.exitValue() + ": "
                        + String.join(" ", command) + "\n" + installOutput(installLog));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run " + command.get(0), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running mariadb-install-db", e);
        }
    }

    private void launchOnFreePort() {
        Launch.onFreePort(
                HOST,
                "MariaDB",
                free -> {
                    port = free;
                    return launch();
                },
                this::launchOutput);
    }

    private void launchOn(int chosen) {
        port = chosen;
        if (launch() == Launch.PORT_IN_USE) {
            throw new PortInUseException(HOST, chosen);
        }
    }

    private Launch launch() {
        List<String> command = new ArrayList<>(List.of(binaries.server().toString(), "--no-defaults"));
        if (root) {
            command.add("--user=root");
        }
        command.addAll(List.of(
                "--datadir=" + dataDir(),
                "--port=" + port,
                "--bind-address=" + HOST,
                "--socket=" + socket(),
                "--tmpdir=" + tmpDir(),
                "--pid-file=" + dir.resolve("mariadbd.pid"),
                "--log-error=" + logFile(),
                "--skip-name-resolve",
                "--innodb-flush-log-at-trx-commit=2",
                "--character-set-server=utf8mb4"));
        command.addAll(INNODB_OPTIONS);
        logMark = Processes.size(logFile());
        try {
            process = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run " + command.get(0), e);
        }
        Processes.register(process, dir);
        Launch result = Launch.settle(this::awaitReady, this::stop);
        if (result == Launch.READY) {
            log.debug("Started MariaDB {} (pid {}, dir {})", jdbcUrl(), process.pid(), dir);
        }
        return result;
    }

    /**
     * Waits until the server accepts a TCP connection and answers a query through the socket. A
     * server that fails to bind the port exits.
     */
    private Launch awaitReady() {
        ServerWait wait = ServerWait.start("MariaDB on port " + port, "ready", READY_TIMEOUT);
        while (true) {
            if (!process.isAlive()) {
                String output = launchOutput();
                if (output.contains("Address already in use")) {
                    return Launch.PORT_IN_USE;
                }
                throw new IllegalStateException(
                        "mariadbd exited with code " + process.exitValue() + " before it was ready\n" + output);
            }
            if (acceptsConnections() && answersQueries()) {
                wait.done();
                return Launch.READY;
            }
            if (wait.expired()) {
                throw new IllegalStateException(wait.failure() + "\n" + launchOutput());
            }
            wait.pause(5);
        }
    }

    private boolean acceptsConnections() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(HOST, port), 500);
            return true;
        } catch (IOException notYet) {
            return false;
        }
    }

    private boolean answersQueries() {
        return runClient("SELECT 1", TestTime.scaled(READY_PROBE_TIMEOUT)).exitCode() == 0;
    }

    private record ClientResult(int exitCode, String output) {}

    /** Runs the {@code mariadb} client as root through the socket; its output holds stdout and stderr. */
    private ClientResult runClient(String sql, Duration timeout) {
        List<String> command = List.of(
                binaries.client().toString(),
                "--no-defaults",
                "--socket=" + socket(),
                "--user=" + ADMIN,
                "--database=" + DATABASE,
                "--batch",
                "--skip-column-names",
                "--connect-timeout=" + Math.max(1, timeout.toSeconds()),
                "--execute=" + sql);
        Path output = null;
        try {
            output = Files.createTempFile(dir, "client-", ".out");
            Process client = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            if (!client.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                client.destroyForcibly();
                client.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
                return new ClientResult(
                        -1,
                        "the mariadb client did not finish within " + timeout.toMillis() + " ms\n"
                                + Files.readString(output, StandardCharsets.UTF_8));
            }
            return new ClientResult(client.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run " + command.get(0), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running the mariadb client", e);
        } finally {
            if (output != null) {
                try {
                    Files.deleteIfExists(output);
                } catch (IOException e) {
                    log.debug("Cannot delete {}: {}", output, e.toString());
                }
            }
        }
    }

    /** A string literal for SQL, its quotes and backslashes escaped. */
    static String literal(String value) {
        return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'";
    }

    private Path dataDir() {
        return dir.resolve("data");
    }

    /**
     * The server's own temporary directory, for its bootstrap too: a bootstrap in the shared /tmp
     * once failed with "Could not remove temporary table '/tmp/#sql-temptable-...', error: 2".
     */
    private Path tmpDir() {
        Path tmp = dir.resolve("tmp");
        try {
            return Files.createDirectories(tmp);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create " + tmp, e);
        }
    }

    private Path socket() {
        return dir.resolve("mysqld.sock");
    }

    private Path logFile() {
        return dir.resolve("mariadbd.log");
    }

    private String launchOutput() {
        return "--- " + logFile() + " (end) ---\n" + Processes.tail(logFile(), logMark, LOG_TAIL_LINES);
    }

    /** The install log: its error comes first, then some 25 lines of advice. */
    private static String installOutput(Path installLog) {
        return "--- " + installLog + " ---\n" + Processes.tail(installLog, 0, INSTALL_LOG_LINES);
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("MariaDB on port " + port + " was closed");
        }
    }
}
