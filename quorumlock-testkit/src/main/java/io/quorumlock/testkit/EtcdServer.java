package io.quorumlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One member of an {@link EtcdCluster}: a real {@code etcd} process on two loopback ports (client
 * and peer), in its own temporary directory named {@code quorumlock-etcd-*} (also the process's
 * working directory), which holds its data directory and its log.
 *
 * <p>Faults: {@link #stop()} kills the member with SIGKILL, as a crash would (etcd fsyncs its
 * write-ahead log, so nothing acknowledged is lost); {@link #startAgain()} brings it back on the
 * same ports with its data; {@link #pause()} freezes it with SIGSTOP. Every process is also
 * killed by a JVM shutdown hook. The methods are thread-safe.
 */
public final class EtcdServer {

    private static final Logger log = LoggerFactory.getLogger(EtcdServer.class);

    static final String HOST = "127.0.0.1";
    private static final int LOG_TAIL_LINES = 15;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(15);
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);
    private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\"\\s*:\\s*\"(\\d+)\"");
    private static final Pattern LEADER = Pattern.compile("\"leader\"\\s*:\\s*\"(\\d+)\"");

    private static final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(PROBE_TIMEOUT)
            .build();

    private final EtcdCluster cluster;
    private final String name;
    private final Path dir;
    // Volatile, so that the cluster can look at a member while another thread starts it.
    private volatile int clientPort;
    private volatile int peerPort;
    private final ServerProcess server = new ServerProcess();
    private boolean closed;
    private long logMark;

    /** What a probe of a freshly launched member found. */
    enum Probe {
        READY,
        NOT_YET,
        PORT_IN_USE
    }

    EtcdServer(EtcdCluster cluster, String name) {
        this.cluster = cluster;
        this.name = name;
        try {
            this.dir = Files.createTempDirectory("quorumlock-etcd-");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create a temporary directory for an etcd member", e);
        }
    }

    /** {@return the member's name in the cluster, such as {@code member-0}} */
    public String name() {
        return name;
    }

    /** {@return the client URL, {@code http://127.0.0.1:PORT}: what a client's endpoints list} */
    public String clientUrl() {
        return "http://" + HOST + ":" + clientPort;
    }

    /** {@return the client port} It stays the same across {@link #stop()} and {@link #startAgain()}. */
    public int clientPort() {
        return clientPort;
    }

    /** {@return the peer URL, {@code http://127.0.0.1:PORT}, on which the members talk to each other} */
    public String peerUrl() {
        return "http://" + HOST + ":" + peerPort;
    }

    /** {@return the member's own temporary directory: its working directory, data and log} */
    public Path dir() {
        return dir;
    }

    /**
     * {@return the process id of the running member} It changes on every start.
     *
     * @throws IllegalStateException if the member is not running
     */
    public synchronized long pid() {
        requireRunning();
        return server.process().pid();
    }

    /** {@return whether the process is alive} A paused member counts as running. */
    public boolean isRunning() {
        return server.isRunning();
    }

    /** {@return whether the member is frozen by {@link #pause()}} */
    public boolean isPaused() {
        return server.isPaused();
    }

    /**
     * {@return whether the member answers {@code GET /health} with {@code "health":"true"}} That is,
     * it runs, sees a leader and can serve a read. Never throws; takes at most half a second times
     * {@link TestTime#loadScale()}: a busy member answers late, and is healthy all the same.
     */
    public boolean isHealthy() {
        if (!isRunning() || isPaused()) {
            return false;
        }
        return get("/health").map(body -> body.contains("\"health\":\"true\"")).orElse(false);
    }

    /**
     * Kills the member with SIGKILL, as a crash would, and waits until the process is gone. Does
     * nothing if it is not running. (etcd takes seconds to stop on SIGTERM in a cluster; tests need
     * no graceful stop.)
     *
     * @throws IllegalStateException if the process is still there after the (scaled) exit timeout
     */
    public synchronized void stop() {
        long pid = server.kill();
        if (pid >= 0) {
            log.debug("Stopped etcd member {} at {} (pid {})", name, clientUrl(), pid);
        }
    }

    /**
     * Starts the member again after {@link #stop()}, on the same ports, with the data it had. Waits
     * until it serves its client port and, if a majority of the cluster runs, until it is healthy
     * (has rejoined and sees a leader). Does nothing if it is running.
     *
     * @throws IllegalStateException if the member was closed, its port has been taken by another
     *     process, or it does not come up in time; the message carries the end of its log
     */
    public synchronized void startAgain() {
        requireOpen();
        if (isRunning()) {
            return;
        }
        spawn();
        // Healthy once it has rejoined and sees a leader; only serving while no majority runs.
        boolean needHealth = cluster.majorityRunning();
        ServerWait wait = ServerWait.start(description(), needHealth ? "healthy" : "serving", READY_TIMEOUT);
        while (true) {
            Probe probe = probe(needHealth);
            if (probe == Probe.READY) {
                wait.done();
                return;
            }
            if (probe == Probe.PORT_IN_USE) {
                throw new IllegalStateException("Cannot start etcd member " + name + " again: port " + clientPort
                        + " or " + peerPort + " is now used by another process\n" + launchOutput());
            }
            if (wait.expired()) {
                stop();
                throw new IllegalStateException(wait.failure() + "\n" + launchOutput());
            }
            wait.pause(10);
        }
    }

    /**
     * Freezes the member with SIGSTOP: TCP connects still succeed but nothing is answered, and its
     * peers see it as unreachable. Does nothing if it is already paused.
     *
     * @throws IllegalStateException if the member is not running
     */
    public synchronized void pause() {
        requireRunning();
        server.pause();
    }

    /** Thaws a member frozen by {@link #pause()} with SIGCONT. Does nothing if it is not paused. */
    public synchronized void resume() {
        server.resume();
    }

    @Override
    public String toString() {
        return "EtcdServer[" + name + " " + clientUrl() + (isRunning() ? (isPaused() ? ", paused" : "") : ", stopped")
                + "]";
    }

    // ---- for EtcdCluster -------------------------------------------------------------------------

    /** {@code etcd member member-2 at http://127.0.0.1:21824}, for what is awaited. */
    String description() {
        return "etcd member " + name + " at " + clientUrl();
    }

    synchronized void assignPorts(int client, int peer) {
        this.clientPort = client;
        this.peerPort = peer;
    }

    /** Starts the process and returns at once; {@link #probe(boolean)} tells when it is ready. */
    synchronized void spawn() {
        List<String> command = List.of(
                EtcdBinary.path().toString(),
                "--name",
                name,
                "--data-dir",
                dataDir().toString(),
                "--listen-client-urls",
                clientUrl(),
                "--advertise-client-urls",
                clientUrl(),
                "--listen-peer-urls",
                peerUrl(),
                "--initial-advertise-peer-urls",
                peerUrl(),
                "--initial-cluster",
                cluster.initialCluster(),
                "--initial-cluster-token",
                cluster.token(),
                "--initial-cluster-state",
                "new",
                "--logger",
                "zap",
                "--log-outputs",
                "stderr");
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()));
        logMark = Processes.size(logFile());
        try {
            server.started(builder.start());
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run " + command.get(0), e);
        }
        Processes.register(server.process(), dir);
    }

    /**
     * Looks once whether the launched process is ready: serving its client port, or also healthy.
     *
     * @throws IllegalStateException if the process exited for another reason than a taken port
     */
    synchronized Probe probe(boolean needHealth) {
        Process process = server.process();
        if (process == null) {
            throw new IllegalStateException("etcd member " + name + " is not running");
        }
        if (!process.isAlive()) {
            String output = launchOutput();
            String code = exitCode(process);
            server.kill(); // forgets it
            if (output.contains("address already in use")) {
                return Probe.PORT_IN_USE;
            }
            throw new IllegalStateException(
                    "etcd member " + name + " exited before it was ready (code " + code + ")\n" + output);
        }
        boolean ready = needHealth ? isHealthy() : get("/version").isPresent();
        return ready ? Probe.READY : Probe.NOT_YET;
    }

    /** The member's id and the id of the leader it sees, from {@code /v3/maintenance/status}. */
    Optional<String[]> status() {
        if (!isRunning() || isPaused()) {
            return Optional.empty();
        }
        return post("/v3/maintenance/status", "{}").flatMap(body -> {
            Matcher id = MEMBER_ID.matcher(body);
            Matcher leader = LEADER.matcher(body);
            return id.find() && leader.find()
                    ? Optional.of(new String[] {id.group(1), leader.group(1)})
                    : Optional.empty();
        });
    }

    /** POSTs JSON to the member's gRPC gateway; empty if it does not answer 200. */
    Optional<String> post(String path, String json) {
        return send(HttpRequest.newBuilder(URI.create(clientUrl() + path))
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .header("Content-Type", "application/json")
                .timeout(ServerWait.probeTimeout(PROBE_TIMEOUT))
                .build());
    }

    /** Deletes the data of an earlier launch, before the cluster is formed again on new ports. */
    synchronized void wipeData() {
        Processes.deleteTree(dataDir());
    }

    /** Stops the member and deletes its directory. Idempotent. */
    synchronized void close() {
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

    /** What the member wrote since it was last launched. */
    synchronized String launchOutput() {
        return "--- " + logFile() + " (end) ---\n" + Processes.tail(logFile(), logMark, LOG_TAIL_LINES);
    }

    private Optional<String> get(String path) {
        return send(HttpRequest.newBuilder(URI.create(clientUrl() + path))
                .GET()
                .timeout(ServerWait.probeTimeout(PROBE_TIMEOUT))
                .build());
    }

    private static Optional<String> send(HttpRequest request) {
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? Optional.of(response.body()) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for an etcd member", e);
        }
    }

    private static String exitCode(Process process) {
        try {
            return Integer.toString(process.exitValue());
        } catch (IllegalThreadStateException e) {
            return "?";
        }
    }

    private Path dataDir() {
        return dir.resolve("data");
    }

    private Path logFile() {
        return dir.resolve("etcd.log");
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("etcd member " + name + " was closed");
        }
    }

    private void requireRunning() {
        requireOpen();
        if (!isRunning()) {
            throw new IllegalStateException("etcd member " + name + " at " + clientUrl() + " is not running");
        }
    }
}
