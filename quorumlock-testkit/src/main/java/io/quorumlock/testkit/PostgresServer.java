package io.quorumlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One real PostgreSQL server for tests: a fresh cluster ({@code initdb}) in a temporary directory,
 * listening on a free port on 127.0.0.1, with the {@code postgres} superuser and trust
 * authentication (no password).
 *
 * <pre>{@code
 * assumeTrue(PostgresServer.available(), PostgresServer.unavailableReason().orElse(""));
 * try (PostgresServer server = PostgresServer.start();
 *         Connection connection = DriverManager.getConnection(server.jdbcUrl(), server.user(), "")) {
 *     // ...
 * }
 * }</pre>
 *
 * <p>The binaries come from the directory named by the environment variable {@code
 * QUORUMLOCK_PG_BIN}, else the highest {@code /usr/lib/postgresql/<major>/bin} (where Debian's
 * {@code postgresql} package puts them; they are not on the PATH), else the directory of {@code
 * initdb} on the PATH. PostgreSQL refuses to run as root: as root, the kit runs {@code initdb} and
 * the server as the {@code postgres} user (which the package creates) through {@code runuser}, and
 * gives that user the server's directory.
 *
 * <p>The server runs with {@code fsync=off}: fast, and what a test needs, since committed data
 * still survives {@link #stop()} (a crash of the server, not of the machine); {@link #pause()}
 * freezes it with SIGSTOP. The directory (named
 * {@code quorumlock-pg-*}) holds the cluster ({@code data/}), the Unix socket and the logs; {@link
 * #close()} deletes it. Every server is also stopped by a JVM shutdown hook. The test kit does not
 * depend on a JDBC driver: put {@code org.postgresql:postgresql} on the test class path. Every wait
 * is bounded and scaled by {@link TestTime#scale()}; the methods are thread-safe.
 */
public final class PostgresServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PostgresServer.class);

    private static final String HOST = "127.0.0.1";
    private static final String DATABASE = "postgres";
    private static final int LOG_TAIL_LINES = 20;
    private static final Duration INITDB_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration SIGNAL_TIMEOUT = Duration.ofSeconds(5);

    /** Servers not yet closed, stopped by the shutdown hook. */
    private static final Set<PostgresServer> live = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(() -> live.forEach(PostgresServer::killAtExit), "quorumlock-postgres-killer"));
    }

    private final PostgresBinaries.Lookup binaries;
    private final Path binDir;
    private final Path dir;
    private int port;
    /** The runuser process as root, else the postmaster itself. */
    private volatile Process process;
    /** The postmaster's pid, read from postmaster.pid once it is ready; 0 when not running. */
    private volatile long postmasterPid;
    /** The processes frozen by {@link #pause()}, the postmaster first; empty when not paused. */
    private volatile List<Long> paused = List.of();

    private boolean closed;
    private long logMark;

    private PostgresServer(PostgresBinaries.Lookup binaries) {
        this.binaries = binaries;
        this.binDir = binaries.binDir().orElseThrow();
        try {
            this.dir = Files.createTempDirectory("quorumlock-pg-");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create a temporary directory for PostgreSQL", e);
        }
        live.add(this);
    }

    /**
     * Whether PostgreSQL can run here, so that tests can {@code assumeTrue} it: the binaries are
     * found and, as root, {@code runuser} and the {@code postgres} user exist. If {@code
     * QUORUMLOCK_PG_BIN} is set, PostgreSQL is required: this returns {@code true} and a wrong
     * setting makes {@link #start()} fail, so a misconfigured CI fails instead of skipping.
     *
     * @return {@code true} if {@link #start()} should work
     */
    public static boolean available() {
        PostgresBinaries.Lookup lookup = PostgresBinaries.lookup();
        return lookup.required() || lookup.unavailableReason().isEmpty();
    }

    /**
     * Why PostgreSQL cannot run here, for a skipped test's message; it names the package to install.
     *
     * @return the reason, such as {@code "PostgreSQL not found: ...; install it with `apt-get install
     *     postgresql` ..."}, or empty if it can run
     */
    public static Optional<String> unavailableReason() {
        return PostgresBinaries.lookup().unavailableReason();
    }

    /**
     * Creates a cluster in a new temporary directory and starts a server on a free port.
     *
     * @return the running server, accepting connections
     * @throws IllegalStateException if PostgreSQL is not available ({@link #unavailableReason()}),
     *     or {@code initdb} or the server fails; the message carries the end of its log
     */
    public static PostgresServer start() {
        return start(0);
    }

    /**
     * Creates a cluster in a new temporary directory and starts a server on {@code port}.
     *
     * @param port the port to listen on; 0 for a free one
     * @return the running server, accepting connections
     * @throws PortInUseException if another process holds the port; nothing is left running
     * @throws IllegalStateException as {@link #start()}
     */
    public static PostgresServer start(int port) {
        PostgresBinaries.Lookup lookup = PostgresBinaries.lookup();
        if (lookup.unavailableReason().isPresent()) {
            throw new IllegalStateException(
                    "Cannot start PostgreSQL: " + lookup.unavailableReason().get());
        }
        PostgresServer server = new PostgresServer(lookup);
        try {
            server.initdb();
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

    /** {@return the superuser to connect as: {@code "postgres"}, without a password (trust authentication)} */
    public String user() {
        return PostgresBinaries.OS_USER;
    }

    /** {@return the database to connect to: {@code "postgres"}} */
    public String database() {
        return DATABASE;
    }

    /** {@return {@code jdbc:postgresql://127.0.0.1:PORT/postgres}} */
    public String jdbcUrl() {
        return "jdbc:postgresql://" + HOST + ":" + port() + "/" + DATABASE;
    }

    /** {@return the server's temporary directory: the cluster in {@code data/}, the socket and the logs} */
    public Path dir() {
        return dir;
    }

    /** {@return the PostgreSQL version of the binaries, such as {@code "15.14"}} */
    public String version() {
        return PostgresBinaries.version(binDir);
    }

    /**
     * {@return the pid of the postmaster, the server's main process} It changes on every start.
     *
     * @throws IllegalStateException if the server is not running
     */
    public synchronized long pid() {
        if (!isRunning()) {
            throw new IllegalStateException("PostgreSQL on port " + port + " is not running");
        }
        return postmasterPid;
    }

    /** {@return whether the server is running} A paused server counts as running. */
    public synchronized boolean isRunning() {
        long pid = postmasterPid;
        return pid != 0 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** {@return whether the server is frozen by {@link #pause()}} */
    public synchronized boolean isPaused() {
        return !paused.isEmpty() && isRunning();
    }

    /**
     * Freezes the server with SIGSTOP, as a stalled machine or VM would: first the postmaster, so
     * that it starts no new process, then every process it started (the backends of the open
     * connections, the checkpointer, the WAL writer...). TCP connects still succeed (the kernel
     * accepts them) but nothing is answered, neither queries on open connections nor new
     * handshakes, until {@link #resume()}; the clock runs on meanwhile. Does nothing if it is
     * already paused.
     *
     * @throws IllegalStateException if the server is not running
     */
    public synchronized void pause() {
        long pid = pid();
        if (!paused.isEmpty()) {
            return;
        }
        Duration timeout = TestTime.scaled(SIGNAL_TIMEOUT);
        List<Long> stopped = new ArrayList<>();
        try {
            Processes.signal(pid, "STOP", true, timeout);
            stopped.add(pid);
            // Stopped, the postmaster starts no process and reaps none: this list is final, but for
            // a backend that exits meanwhile (a zombie until the thaw, which no signal stops).
            List<ProcessHandle> children = ProcessHandle.of(pid)
                    .map(postmaster -> postmaster.descendants().toList())
                    .orElse(List.of());
            for (ProcessHandle child : children) {
                if (!Processes.isRunning(child)) {
                    continue;
                }
                try {
                    Processes.signal(child.pid(), "STOP", true, timeout);
                    stopped.add(child.pid());
                } catch (IllegalStateException | UncheckedIOException e) {
                    if (Processes.isRunning(child)) {
                        throw e;
                    }
                }
            }
        } catch (RuntimeException e) {
            paused = List.copyOf(stopped);
            thaw();
            throw e;
        }
        paused = List.copyOf(stopped);
        log.debug("Paused PostgreSQL on port {} (processes {})", port, paused);
    }

    /**
     * Thaws a server frozen by {@link #pause()} with SIGCONT to each of its processes: it answers
     * what it was sent meanwhile. Does nothing if it is not paused.
     */
    public synchronized void resume() {
        thaw();
    }

    /**
     * SIGCONT to the processes frozen by {@link #pause()}, the postmaster last, then to {@code
     * runuser} if it stopped itself: it does when it sees its child stopped, and a stopped parent
     * would not reap the postmaster when it exits. Without locks, for the shutdown hook.
     */
    private void thaw() {
        List<Long> frozen = paused;
        paused = List.of();
        for (int i = frozen.size() - 1; i >= 0; i--) {
            cont(frozen.get(i));
        }
        Process launched = process;
        if (launched != null && launched.pid() != postmasterPid && Processes.isStopped(launched.pid())) {
            cont(launched.pid());
        }
    }

    private static void cont(long pid) {
        if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            try {
                Processes.signal(pid, "CONT", false, TestTime.scaled(SIGNAL_TIMEOUT));
            } catch (IllegalStateException | UncheckedIOException e) {
                log.debug("SIGCONT to PostgreSQL process {} failed (already gone?): {}", pid, e.toString());
            }
        }
    }

    /**
     * Stops the server at once, as a crash would: an immediate shutdown (SIGQUIT to the postmaster,
     * which ends every backend and writes no checkpoint), or SIGKILL to all its processes if it is
     * not gone within the (scaled) exit timeout. Committed data survives; open transactions are
     * lost and their clients see their connections fail. Does nothing if it is not running; a
     * paused server is thawed first, so that it can act on the SIGQUIT.
     *
     * @throws IllegalStateException if its processes are still there after SIGKILL
     */
    public synchronized void stop() {
        kill(TestTime.scaled(EXIT_TIMEOUT));
    }

    /**
     * Starts the server again after {@link #stop()}, on the same port and with the same data. Does
     * nothing if it is running.
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
            throw new IllegalStateException("Cannot start PostgreSQL again: port " + port
                    + " is now used by another process\n" + launchOutput());
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
            live.remove(this);
            Processes.deleteTree(dir);
        }
    }

    @Override
    public synchronized String toString() {
        return "PostgresServer[" + jdbcUrl() + (isRunning() ? (isPaused() ? ", paused" : "") : ", stopped") + "]";
    }

    private void initdb() {
        if (binaries.runuser().isPresent()) {
            giveToOsUser(dir);
        }
        Path initdbLog = dir.resolve("initdb.log");
        List<String> command = asOsUser(List.of(
                binDir.resolve("initdb").toString(),
                "-D",
                dataDir().toString(),
                "-A",
                "trust",
                "-U",
                PostgresBinaries.OS_USER,
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync"));
        Duration timeout = TestTime.scaledByLoad(INITDB_TIMEOUT);
        try {
            Process initdb = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(initdbLog.toFile())
                    .start();
            if (!initdb.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                List<ProcessHandle> children = initdb.descendants().toList();
                initdb.destroyForcibly();
                children.forEach(ProcessHandle::destroyForcibly);
                throw new IllegalStateException(
                        "initdb did not finish within " + timeout.toMillis() + " ms\n" + tail(initdbLog, 0));
            }
            if (initdb.exitValue() != 0) {
                String asOsUser = binaries.runuser().isPresent()
                        ? " (run as the " + PostgresBinaries.OS_USER + " user, who must be able to reach " + dir
                                + ": if it cannot, point java.io.tmpdir at a directory it can traverse)"
                        : "";
                throw new IllegalStateException("initdb failed with exit code " + initdb.exitValue() + asOsUser + ": "
                        + String.join(" ", command) + "\n" + tail(initdbLog, 0));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run " + command.get(0), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running initdb", e);
        }
    }

    private void launchOnFreePort() {
        Launch.onFreePort(
                HOST,
                "PostgreSQL",
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
        List<String> command = asOsUser(List.of(
                binDir.resolve("postgres").toString(),
                "-D",
                dataDir().toString(),
                "-p",
                Integer.toString(port),
                "-k",
                dir.toString(),
                "-c",
                "listen_addresses=" + HOST,
                "-c",
                "fsync=off"));
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
        Launch result = Launch.settle(this::awaitReady, this::stop);
        if (result == Launch.READY) {
            log.debug("Started PostgreSQL {} (postmaster pid {}, dir {})", jdbcUrl(), postmasterPid, dir);
        }
        return result;
    }

    /**
     * Waits until the postmaster of our process writes "ready" into {@code postmaster.pid} and
     * accepts a TCP connection. A server that fails to bind the port exits.
     */
    private Launch awaitReady() {
        ServerWait wait = ServerWait.start("PostgreSQL on port " + port, "ready", READY_TIMEOUT);
        while (true) {
            if (!process.isAlive()) {
                postmasterPid = 0;
                String output = launchOutput();
                if (output.contains("Address already in use")) {
                    return Launch.PORT_IN_USE;
                }
                throw new IllegalStateException(
                        "postgres exited with code " + process.exitValue() + " before it was ready\n" + output);
            }
            long pid = readyPostmasterPid();
            if (pid != 0 && ours(pid) && acceptsConnections()) {
                postmasterPid = pid;
                wait.done();
                return Launch.READY;
            }
            if (wait.expired()) {
                throw new IllegalStateException(wait.failure() + "\n" + launchOutput());
            }
            wait.pause(5);
        }
    }

    /** The pid in {@code postmaster.pid} if its status line (the 8th) says "ready", else 0. */
    private long readyPostmasterPid() {
        try {
            List<String> lines = Files.readAllLines(dataDir().resolve("postmaster.pid"), StandardCharsets.US_ASCII);
            if (lines.size() >= 8 && lines.get(7).trim().equals("ready")) {
                return Long.parseLong(lines.get(0).trim());
            }
        } catch (IOException | NumberFormatException | UncheckedIOException notYet) {
            // not written yet, or half written
        }
        return 0;
    }

    /** Whether the postmaster is our process or (as root) the child of our runuser. */
    private boolean ours(long pid) {
        return pid == process.pid() || process.children().anyMatch(child -> child.pid() == pid);
    }

    private boolean acceptsConnections() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(HOST, port), 500);
            return true;
        } catch (IOException notYet) {
            return false;
        }
    }

    /**
     * Ends every process of the server: SIGQUIT to the postmaster (an immediate shutdown, which also
     * frees its shared memory), then SIGKILL to whatever is left after {@code timeout}. Without locks,
     * for the shutdown hook.
     */
    private void kill(Duration timeout) {
        thaw();
        Process launched = process;
        if (launched == null) {
            return;
        }
        long pid = postmasterPid != 0 ? postmasterPid : launchedPostmaster(launched);
        List<ProcessHandle> all = new ArrayList<>();
        all.add(launched.toHandle());
        launched.descendants().forEach(all::add);
        if (pid != 0) {
            ProcessHandle.of(pid).ifPresent(postmaster -> {
                all.add(postmaster);
                postmaster.descendants().forEach(all::add);
            });
            if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                try {
                    Processes.signal(pid, "QUIT", false, TestTime.scaled(SIGNAL_TIMEOUT));
                } catch (IllegalStateException | UncheckedIOException e) {
                    log.debug("SIGQUIT to postmaster {} failed (already gone?): {}", pid, e.toString());
                }
            }
        }
        if (!awaitGone(all, timeout)) {
            log.warn("PostgreSQL on port {} still runs {} ms after SIGQUIT; sending SIGKILL", port, timeout.toMillis());
            all.forEach(ProcessHandle::destroyForcibly);
            if (!awaitGone(all, timeout)) {
                throw new IllegalStateException("PostgreSQL processes "
                        + all.stream()
                                .filter(ProcessHandle::isAlive)
                                .map(handle -> Long.toString(handle.pid()))
                                .toList()
                        + " still run " + timeout.toMillis() + " ms after SIGKILL");
            }
        }
        process = null;
        postmasterPid = 0;
        log.debug("Stopped PostgreSQL on port {} (postmaster pid {})", port, pid);
    }

    /** Before it is ready: the postgres process we launched, directly or as the child of runuser. */
    private long launchedPostmaster(Process launched) {
        if (binaries.runuser().isEmpty()) {
            return launched.pid();
        }
        return launched.children().findFirst().map(ProcessHandle::pid).orElse(0L);
    }

    private void killAtExit() {
        try {
            kill(Duration.ofSeconds(2));
        } catch (RuntimeException e) {
            log.warn("Cannot stop PostgreSQL on port {}: {}", port, e.toString());
        }
        Processes.deleteTree(dir);
    }

    private static boolean awaitGone(List<ProcessHandle> processes, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (processes.stream().anyMatch(ProcessHandle::isAlive)) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return !processes.stream().anyMatch(ProcessHandle::isAlive);
            }
        }
        return true;
    }

    private List<String> asOsUser(List<String> command) {
        if (binaries.runuser().isEmpty()) {
            return command;
        }
        List<String> wrapped =
                new ArrayList<>(List.of(binaries.runuser().get().toString(), "-u", PostgresBinaries.OS_USER, "--"));
        wrapped.addAll(command);
        return wrapped;
    }

    /** Makes the OS user the owner of the directory, so that initdb can create the cluster in it. */
    private static void giveToOsUser(Path dir) {
        try {
            UserPrincipal owner =
                    dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(PostgresBinaries.OS_USER);
            Files.getFileAttributeView(dir, PosixFileAttributeView.class).setOwner(owner);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "Cannot give " + dir + " to the " + PostgresBinaries.OS_USER + " user, who must own it", e);
        }
    }

    private Path dataDir() {
        return dir.resolve("data");
    }

    private Path logFile() {
        return dir.resolve("postgres.log");
    }

    private String launchOutput() {
        return "--- " + logFile() + " (end) ---\n" + Processes.tail(logFile(), logMark, LOG_TAIL_LINES);
    }

    private static String tail(Path file, long from) {
        return "--- " + file + " (end) ---\n" + Processes.tail(file, from, LOG_TAIL_LINES);
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("PostgreSQL on port " + port + " was closed");
        }
    }

    /** For tests of the kit: the processes that belong to the server now. */
    synchronized List<Long> processIds() {
        List<Long> pids = new ArrayList<>();
        Process launched = process;
        if (launched != null) {
            pids.add(launched.pid());
            launched.descendants().forEach(handle -> pids.add(handle.pid()));
        }
        return Stream.concat(pids.stream(), Stream.of(postmasterPid).filter(pid -> pid != 0))
                .distinct()
                .toList();
    }
}
