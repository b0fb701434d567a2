package io.quorumlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;

/**
 * One real {@code redis-server} process for tests, with faults: kill, freeze, restart with or
 * without persistence, and a shifted wall clock.
 *
 * <p>The node listens on a free port on 127.0.0.1 and lives in its own temporary directory (named
 * {@code quorumlock-redis-*}, also the process's working directory), which holds its log and, when
 * persistent, its append-only file. It is an independent master: no replication, no cluster, no
 * RDB snapshots. Every process is also killed by a JVM shutdown hook, so an interrupted run leaves
 * none behind.
 *
 * <pre>{@code
 * try (RedisServer node = RedisServer.start()) {
 *     try (Jedis jedis = new Jedis(node.host(), node.port(), 1000)) {
 *         jedis.set("k", "v");
 *     }
 *     node.pause();      // frozen: connects succeed, commands time out
 *     node.resume();
 *     node.stop();       // killed
 *     node.startAgain(); // same port, keys lost unless persistent
 * }
 * }</pre>
 *
 * <p>The binary is chosen by {@link #binary()}. Clock jumps ({@link #jumpClock(Duration)}) need
 * Linux and gcc; see {@link #clockControlAvailable()}. Every wait is bounded and scaled by {@link
 * TestTime#scale()}. The methods are thread-safe.
 */
public final class RedisServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisServer.class);

    private static final String HOST = "127.0.0.1";
    private static final int LOG_TAIL_LINES = 20;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration CLOCK_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);

    private final Path binary;
    private final Path dir;
    private final Path offsetFile;
    private int port;
    private boolean persistent;
    /** For a TLS node: its certificates; null for a plain one. */
    private final TlsMaterial tls;

    private final boolean requireClientCertificates;
    /** For a sentinel: its configuration file, which it rewrites; null for a data node. */
    private Path sentinelConfig;
    /** For a Redis Cluster node: its cluster bus port, kept across restarts (0 until chosen); -1 for none. */
    private int clusterBusPort = -1;
    /** For a Redis Cluster node: {@code cluster-node-timeout}. */
    private Duration clusterNodeTimeout;

    private final ServerProcess server = new ServerProcess();
    private boolean closed;
    private Duration clockOffset = Duration.ZERO;
    private String version;
    private long logMark; // sizes of the log files when the node was last launched
    private long outMark;

    private RedisServer(Path binary, boolean persistent) {
        this(binary, persistent, null, false);
    }

    private RedisServer(Path binary, boolean persistent, TlsMaterial tls, boolean requireClientCertificates) {
        this.binary = binary;
        this.persistent = persistent;
        this.tls = tls;
        this.requireClientCertificates = requireClientCertificates;
        try {
            this.dir = Files.createTempDirectory("quorumlock-redis-");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create a temporary directory for a Redis node", e);
        }
        this.offsetFile = dir.resolve("clock-offset");
        ClockShift.writeOffset(offsetFile, Duration.ZERO);
    }

    /**
     * Starts a node without persistence: its keys are lost when it stops.
     *
     * @return the running node, answering PING
     * @throws IllegalStateException if no binary is found or the node does not come up; the message
     *     carries the end of its log
     */
    public static RedisServer start() {
        return start(false);
    }

    /**
     * Starts a node.
     *
     * @param persistent {@code true} for {@code --appendonly yes --appendfsync always}: every write
     *     is on disk before it is acknowledged and keys survive a restart; {@code false} for no
     *     persistence at all
     * @return the running node, answering PING
     * @throws IllegalStateException if no binary is found or the node does not come up; the message
     *     carries the end of its log
     */
    public static RedisServer start(boolean persistent) {
        return start(binary(), persistent);
    }

    /**
     * Starts a node on a given port of 127.0.0.1, rather than a free one.
     *
     * @param port the port, from 1 to 65535
     * @param persistent as for {@link #start(boolean)}
     * @return the running node, answering PING
     * @throws IllegalArgumentException if the port is out of range
     * @throws PortInUseException if another process holds the port
     * @throws IllegalStateException if no binary is found or the node does not come up
     */
    public static RedisServer start(int port, boolean persistent) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be between 1 and 65535, was " + port);
        }
        RedisServer server = new RedisServer(binary(), persistent);
        try {
            synchronized (server) {
                server.port = port;
                if (server.launch() == Launch.PORT_IN_USE) {
                    throw new PortInUseException(HOST, port);
                }
            }
            return server;
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /**
     * Starts a node without persistence that speaks TLS only ({@code --port 0 --tls-port P}), with
     * the server certificate and key of {@code material}, checking client certificates against
     * its CA. Its {@link #uri()} is {@code rediss://127.0.0.1:P}. The binary must be built with
     * TLS (Debian's {@code redis-server} is). The kit's own connections ({@link #connect}, the
     * readiness probe, {@link #flushAll()}) trust the material's CA and present its client
     * certificate.
     *
     * @param material the certificates, such as {@link TlsMaterial#generate()}; they stay the caller's to close
     * @param requireClientCertificates {@code true} for {@code --tls-auth-clients yes} (mutual TLS:
     *     a client without a certificate issued by the CA is refused), {@code false} for {@code no}
     * @return the running node, answering PING over TLS
     * @throws IllegalStateException if no binary is found or the node does not come up (a binary
     *     without TLS says so in the log carried by the message)
     */
    public static RedisServer startTls(TlsMaterial material, boolean requireClientCertificates) {
        Objects.requireNonNull(material, "material");
        return launchedOnFreePort(new RedisServer(binary(), false, material, requireClientCertificates));
    }

    /**
     * Starts a Redis Sentinel on a free port of 127.0.0.1 ({@code redis-server CONF --sentinel}),
     * monitoring the master {@code name} at {@code master} with {@code quorum}, {@code
     * down-after-milliseconds} and a failover timeout of 4 times that; {@code masterPassword} is
     * given to it as {@code auth-pass} if not null.
     */
    static RedisServer startSentinel(
            String name, int masterPort, int quorum, Duration downAfter, String masterPassword) {
        return startSentinel(name, masterPort, quorum, downAfter, masterPassword, null);
    }

    /**
     * As {@link #startSentinel(String, int, int, Duration, String)}; with {@code tls} not null, the
     * sentinel speaks TLS only, with that material's server certificate, and reaches the master,
     * its replicas and the other sentinels over TLS ({@code tls-replication yes}).
     */
    static RedisServer startSentinel(
            String name, int masterPort, int quorum, Duration downAfter, String masterPassword, TlsMaterial tls) {
        RedisServer sentinel = new RedisServer(binary(), false, tls, false);
        long down = Math.max(100, downAfter.toMillis());
        String config = "sentinel monitor " + name + " " + HOST + " " + masterPort + " " + quorum + "\n"
                + "sentinel down-after-milliseconds " + name + " " + down + "\n"
                + "sentinel failover-timeout " + name + " " + 4 * down + "\n"
                + "sentinel parallel-syncs " + name + " 1\n"
                + (masterPassword == null ? "" : "sentinel auth-pass " + name + " " + masterPassword + "\n")
                + (tls == null ? "" : "tls-replication yes\n");
        sentinel.sentinelConfig = sentinel.dir.resolve("sentinel.conf");
        try {
            Files.writeString(sentinel.sentinelConfig, config);
        } catch (IOException e) {
            sentinel.close();
            throw new UncheckedIOException("Cannot write a sentinel's configuration", e);
        }
        return launchedOnFreePort(sentinel);
    }

    /**
     * Starts a Redis Cluster node without persistence on a free port of 127.0.0.1 ({@code
     * cluster-enabled yes}, its bus on another free port, {@code cluster-node-timeout} of {@code
     * nodeTimeout}), alone in its cluster and serving no slot: see {@link RedisCluster}. Its
     * cluster configuration ({@code nodes.conf}) survives a restart, so that it comes back as the
     * same node.
     */
    static RedisServer startClusterNode(Duration nodeTimeout) {
        RedisServer node = new RedisServer(binary(), false);
        node.clusterBusPort = 0;
        node.clusterNodeTimeout = nodeTimeout;
        return launchedOnFreePort(node);
    }

    /** The cluster bus port of a Redis Cluster node; -1 for other nodes. */
    synchronized int clusterBusPort() {
        return clusterBusPort;
    }

    /** Starts a node that runs this binary; for tests of the kit itself. */
    static RedisServer start(Path binary, boolean persistent) {
        return launchedOnFreePort(new RedisServer(binary, persistent));
    }

    private static RedisServer launchedOnFreePort(RedisServer server) {
        try {
            server.launchOnFreePort();
            return server;
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /**
     * The {@code redis-server} binary that nodes run, resolved once per JVM: the file named by the
     * environment variable {@code QUORUMLOCK_REDIS_SERVER} if it is set, else {@code redis-server}
     * on the {@code PATH}, else (on Linux x86-64) the binary shipped in {@code
     * com.github.codemonstur:embedded-redis}, extracted once to {@code $QUORUMLOCK_CACHE} or {@code
     * ~/.cache/quorumlock}.
     *
     * @return the path of the binary
     * @throws IllegalStateException if {@code QUORUMLOCK_REDIS_SERVER} names no executable file, or
     *     no binary can be found for this machine
     */
    public static Path binary() {
        return RedisBinary.path();
    }

    /**
     * Whether {@link #jumpClock(Duration)} works here: on Linux with gcc on the {@code PATH}, the
     * kit builds a small clock-shift library once (into the cache directory) and preloads it into
     * every node. Tests of clock jumps should be skipped otherwise: {@code
     * assumeTrue(RedisServer.clockControlAvailable(), ...)}.
     *
     * @return {@code true} if clock jumps are available
     */
    public static boolean clockControlAvailable() {
        return ClockShift.library().isPresent();
    }

    /**
     * Why clock jumps are not available, for a skipped test's message.
     *
     * @return the reason, such as {@code "gcc not found on PATH: ..."}, or empty if they are
     *     available
     */
    public static Optional<String> clockControlUnavailableReason() {
        return ClockShift.unavailableReason();
    }

    /** {@return the address the node listens on: always {@code "127.0.0.1"}} */
    public String host() {
        return HOST;
    }

    /** {@return the port the node listens on} It stays the same across {@link #stop()} and {@link #startAgain()}. */
    public synchronized int port() {
        return port;
    }

    /** {@return the node's address as {@code redis://127.0.0.1:PORT}, or {@code rediss://} for a TLS node} */
    public String uri() {
        return (tls != null ? "rediss://" : "redis://") + HOST + ":" + port();
    }

    /** {@return whether the node speaks TLS only: started by {@link #startTls}} */
    public boolean isTls() {
        return tls != null;
    }

    /**
     * {@return the process id of the running node} It changes on every start.
     *
     * @throws IllegalStateException if the node is not running
     */
    public synchronized long pid() {
        requireRunning();
        return server.process().pid();
    }

    /** {@return the node's own temporary directory: its working directory, log and append-only file} */
    public Path dir() {
        return dir;
    }

    /** {@return whether the process is alive} A paused node counts as running. */
    public synchronized boolean isRunning() {
        return server.isRunning();
    }

    /** {@return whether the node is frozen by {@link #pause()}} */
    public synchronized boolean isPaused() {
        return server.isPaused();
    }

    /**
     * Kills the node with SIGKILL, as a crash would, and waits until the process is gone. Keys not
     * on disk are lost. Does nothing if the node is not running.
     *
     * @throws IllegalStateException if the process is still there after the (scaled) exit timeout
     */
    public synchronized void stop() {
        long pid = server.kill();
        if (pid >= 0) {
            log.debug("Stopped Redis node {} (pid {})", uri(), pid);
        }
    }

    /**
     * Starts the node again after {@link #stop()}, on the same port and with the persistence it had
     * last time. The clock offset is kept too. Does nothing if the node is running.
     *
     * <p>This is the instance counterpart of the factory {@link #start()}; Java does not allow both
     * to be called {@code start}.
     *
     * @throws IllegalStateException if the node was closed, its port has been taken by another
     *     process, or it does not come up
     */
    public synchronized void startAgain() {
        requireOpen();
        if (isRunning()) {
            return;
        }
        stop(); // forgets a process that died by itself
        if (launch() == Launch.PORT_IN_USE) {
            throw new IllegalStateException("Cannot start the Redis node again: port " + port
                    + " is now used by another process\n" + launchOutput());
        }
    }

    /**
     * Kills the node and starts it again on the same port.
     *
     * @param persistent {@code false}: the node comes back empty; {@code true}: it comes back with
     *     what its append-only file holds (all acknowledged writes, if it was persistent before),
     *     and stays persistent
     * @throws IllegalStateException as {@link #startAgain()}
     */
    public synchronized void restart(boolean persistent) {
        requireOpen();
        stop();
        this.persistent = persistent;
        startAgain();
    }

    /**
     * Freezes the node with SIGSTOP, as a long GC pause or a stalled VM would: TCP connects still
     * succeed (the kernel accepts them) but commands get no answer until {@link #resume()}. Does
     * nothing if it is already paused.
     *
     * @throws IllegalStateException if the node is not running
     */
    public synchronized void pause() {
        requireRunning();
        server.pause();
    }

    /**
     * Thaws a node frozen by {@link #pause()} with SIGCONT. Commands sent while it was frozen are
     * then executed. Does nothing if it is not paused.
     */
    public synchronized void resume() {
        server.resume();
    }

    /**
     * Shifts this node's wall clock ({@code CLOCK_REALTIME}, {@code gettimeofday}, {@code time})
     * by {@code offset}, added to the current shift; its monotonic clock is untouched. Redis expires
     * keys by the wall clock, so a forward jump longer than a key's TTL expires it on this node.
     *
     * <p>If the node is running and not paused, returns once the node's {@code TIME} shows the new
     * shift; otherwise the node sees it as soon as it runs again. The shift survives {@link #stop()}
     * and {@link #startAgain()}.
     *
     * @param offset the jump, forward if positive
     * @throws IllegalStateException if clock jumps are not available here (the message is {@link
     *     #clockControlUnavailableReason()}), or the node does not show the new time in time
     */
    public synchronized void jumpClock(Duration offset) {
        Objects.requireNonNull(offset, "offset");
        requireOpen();
        Optional<String> unavailable = clockControlUnavailableReason();
        if (unavailable.isPresent()) {
            throw new IllegalStateException("Cannot jump the clock: " + unavailable.get());
        }
        setClockOffset(clockOffset.plus(offset));
    }

    /**
     * Shifts this node's wall clock back to the real time; does nothing if it is not shifted (so it
     * works where clock jumps are not available).
     */
    public synchronized void resetClock() {
        if (!clockOffset.isZero()) {
            requireOpen();
            setClockOffset(Duration.ZERO);
        }
    }

    /** {@return the current shift of this node's wall clock} {@link Duration#ZERO} unless jumped. */
    public synchronized Duration clockOffset() {
        return clockOffset;
    }

    /** {@return the {@code redis_version} the node reported in {@code INFO server} when it started} */
    public synchronized String version() {
        return version;
    }

    /**
     * Deletes every key on the node ({@code FLUSHALL}).
     *
     * @throws IllegalStateException if the node is not running or paused
     */
    public synchronized void flushAll() {
        call(Jedis::flushAll);
    }

    /** Makes the node an independent master again ({@code REPLICAOF NO ONE}), for {@link RedisServers#reset()}. */
    synchronized void makeIndependent() {
        call(Jedis::replicaofNoOne);
    }

    /** Stops the node and deletes its directory. Idempotent; the node cannot be started again. */
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
        return "RedisServer[" + uri() + (isRunning() ? (isPaused() ? ", paused" : "") : ", stopped") + "]";
    }

    private void launchOnFreePort() {
        Launch.onFreePort(
                HOST,
                "The Redis node",
                free -> {
                    port = free;
                    return launch();
                },
                this::launchOutput);
    }

    private Launch launch() {
        List<String> command = new ArrayList<>(List.of(binary.toString()));
        if (sentinelConfig != null) {
            command.addAll(List.of(sentinelConfig.toString(), "--sentinel"));
        }
        if (tls == null) {
            command.addAll(List.of("--port", Integer.toString(port)));
        } else {
            command.addAll(List.of(
                    "--port",
                    "0",
                    "--tls-port",
                    Integer.toString(port),
                    "--tls-cert-file",
                    tls.serverCertificate().toString(),
                    "--tls-key-file",
                    tls.serverKey().toString(),
                    "--tls-ca-cert-file",
                    tls.caCertificate().toString(),
                    "--tls-auth-clients",
                    requireClientCertificates ? "yes" : "no"));
        }
        command.addAll(List.of("--bind", HOST, "--save", "", "--appendonly", persistent ? "yes" : "no"));
        if (persistent) {
            command.addAll(List.of("--appendfsync", "always"));
        } else {
            deleteAppendOnlyFiles(); // so that a later persistent start does not bring back old keys
        }
        if (clusterBusPort >= 0) {
            if (clusterBusPort == 0) {
                clusterBusPort = Processes.freePort(HOST);
            }
            command.addAll(List.of(
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-port",
                    Integer.toString(clusterBusPort),
                    "--cluster-node-timeout",
                    Long.toString(clusterNodeTimeout.toMillis())));
        }
        command.addAll(List.of("--dir", dir.toString(), "--logfile", logFile().toString(), "--daemonize", "no"));
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(outFile().toFile()));
        ClockShift.library().ifPresent(library -> {
            Map<String, String> env = builder.environment();
            String preload = env.get("LD_PRELOAD");
            env.put("LD_PRELOAD", preload == null || preload.isBlank() ? library.toString() : library + ":" + preload);
            env.put(ClockShift.OFFSET_FILE_ENV, offsetFile.toString());
        });
        logMark = Processes.size(logFile());
        outMark = Processes.size(outFile());
        try {
            server.started(builder.start());
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run " + binary, e);
        }
        Process process = server.process();
        Processes.register(process, dir);
        Launch result = Launch.settle(this::awaitReady, this::stop);
        if (result == Launch.READY) {
            log.debug(
                    "Started Redis {} node {} (pid {}, persistent: {}, dir {})",
                    version,
                    uri(),
                    process.pid(),
                    persistent,
                    dir);
        }
        return result;
    }

    /**
     * Waits until our process answers PING on the port. INFO's process_id makes sure it is ours
     * and not another server that holds the port (ours then exits on the failed bind).
     */
    private Launch awaitReady() {
        Process process = server.process();
        ServerWait wait = ServerWait.start("Redis node on port " + port, "ready", READY_TIMEOUT);
        while (true) {
            if (!process.isAlive()) {
                if (launchOutput().contains("Address already in use")) {
                    if (clusterBusPort > 0) {
                        clusterBusPort = 0; // the bus's port may be the one taken: both are chosen again
                    }
                    return Launch.PORT_IN_USE;
                }
                throw new IllegalStateException("redis-server exited with code " + process.exitValue()
                        + " before it was ready\n" + launchOutput());
            }
            try (Jedis jedis = connect(ServerWait.probeTimeout(PROBE_TIMEOUT))) {
                if ("PONG".equals(jedis.ping())) {
                    String info = jedis.info("server");
                    if (Long.toString(process.pid()).equals(infoField(info, "process_id"))) {
                        version = infoField(info, "redis_version");
                        wait.done();
                        return Launch.READY;
                    }
                }
            } catch (JedisException notYet) {
                // not listening yet, or still loading its append-only file
            }
            if (wait.expired()) {
                throw new IllegalStateException(wait.failure() + "\n" + launchOutput());
            }
            wait.pause(5);
        }
    }

    private void setClockOffset(Duration target) {
        ClockShift.writeOffset(offsetFile, target);
        clockOffset = target;
        if (isRunning() && !isPaused()) {
            awaitClock(target);
        }
    }

    /** Waits until the node's TIME falls between the local times before and after the call, plus the shift. */
    private void awaitClock(Duration target) {
        Duration timeout = TestTime.scaled(CLOCK_TIMEOUT);
        Duration slack = Duration.ofMillis(1);
        long deadline = System.nanoTime() + timeout.toNanos();
        Instant nodeTime;
        Instant before;
        do {
            before = Instant.now();
            List<String> time = call(Jedis::time);
            Instant after = Instant.now();
            nodeTime = Instant.ofEpochSecond(Long.parseLong(time.get(0)), Long.parseLong(time.get(1)) * 1000);
            if (!nodeTime.isBefore(before.plus(target).minus(slack))
                    && !nodeTime.isAfter(after.plus(target).plus(slack))) {
                return;
            }
            Processes.pollPause(1, "a Redis node");
        } while (System.nanoTime() - deadline < 0);
        throw new IllegalStateException("Redis node " + uri() + " did not show its clock shifted by " + target
                + " within " + timeout.toMillis() + " ms: its TIME was " + nodeTime + " at local time " + before);
    }

    private <T> T call(Function<Jedis, T> command) {
        requireRunning();
        if (isPaused()) {
            throw new IllegalStateException("Redis node " + uri() + " is paused; resume() it first");
        }
        try (Jedis jedis = connect(TestTime.scaled(COMMAND_TIMEOUT))) {
            return command.apply(jedis);
        }
    }

    /**
     * {@return how many connections to this node carry the client name {@code name} (CLIENT
     * SETNAME), as the node lists them in CLIENT LIST}
     *
     * @param name a client name, such as {@code quorumlock}
     */
    public int connectionsNamed(String name) {
        return call(jedis -> (int) jedis.clientList()
                .lines()
                .filter(line -> line.contains(" name=" + name + " "))
                .count());
    }

    /**
     * Whether {@code replica} is this master's replica as both see it: its link to this master is
     * up, and this master lists it online, as its {@code ROLE} and {@code WAIT} count replicas. The
     * replica says its link is up a moment before the master lists it.
     */
    public boolean hasOnlineReplica(RedisServer replica) {
        try (Jedis theReplica = replica.connect(TestTime.scaled(COMMAND_TIMEOUT));
                Jedis theMaster = connect(TestTime.scaled(COMMAND_TIMEOUT))) {
            return theReplica.info("replication").contains("master_link_status:up")
                    && theMaster.info("replication").contains("port=" + replica.port() + ",state=online");
        } catch (redis.clients.jedis.exceptions.JedisException e) {
            return false;
        }
    }

    /**
     * Waits until this node has been up longer than {@code ttl} (by its {@code uptime_in_seconds},
     * whole seconds), as the restart guard of a lock with that TTL wants before the node votes.
     *
     * @throws AssertionError if it is not within {@code ttl} plus 10 s, scaled
     */
    public void awaitUpLongerThan(Duration ttl) {
        TestTime.await(
                ttl.plusSeconds(10),
                () -> uptimeSeconds() > ttl.toSeconds() + 1,
                this + " to be up longer than " + ttl.toMillis() + " ms, for the restart guard");
    }

    private long uptimeSeconds() {
        try (Jedis jedis = connect(Duration.ofSeconds(1))) {
            return jedis.info("server")
                    .lines()
                    .filter(line -> line.startsWith("uptime_in_seconds:"))
                    .mapToLong(line -> Long.parseLong(
                            line.substring("uptime_in_seconds:".length()).trim()))
                    .findFirst()
                    .orElseThrow();
        }
    }

    /**
     * Opens a new connection to this node, for tests that look at or change its data directly.
     * The caller closes it.
     *
     * @param timeout the connect and socket timeout, not scaled
     * @return a Jedis connection (RESP2, sends nothing until the first command)
     */
    public Jedis connect(Duration timeout) {
        int millis = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
        DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
                .timeoutMillis(millis)
                .autoNegotiateProtocol(false)
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
        if (tls != null) {
            // No name check: the kit reaches its own node, whatever names its certificate carries.
            config.ssl(true)
                    .sslSocketFactory(tls.clientContext().getSocketFactory())
                    .sslParameters(new javax.net.ssl.SSLParameters());
        }
        return new Jedis(HOST, port, config.build());
    }

    private static String infoField(String info, String name) {
        return info.lines()
                .filter(line -> line.startsWith(name + ":"))
                .map(line -> line.substring(name.length() + 1).trim())
                .findFirst()
                .orElse(null);
    }

    /** What the node wrote to its log and to stdout/stderr since it was last launched. */
    private String launchOutput() {
        return "--- " + logFile() + " (end) ---\n" + Processes.tail(logFile(), logMark, LOG_TAIL_LINES) + "\n--- "
                + outFile() + " (end) ---\n" + Processes.tail(outFile(), outMark, LOG_TAIL_LINES);
    }

    private Path logFile() {
        return dir.resolve("redis.log");
    }

    private Path outFile() {
        return dir.resolve("redis.out");
    }

    private void deleteAppendOnlyFiles() {
        for (String name : List.of("appendonly.aof", "appendonlydir", "dump.rdb")) {
            Processes.deleteTree(dir.resolve(name));
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("Redis node " + uri() + " was closed");
        }
    }

    private void requireRunning() {
        requireOpen();
        if (!isRunning()) {
            throw new IllegalStateException("Redis node " + uri() + " is not running");
        }
    }
}
