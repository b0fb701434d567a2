package io.quorumlock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.util.ServiceUtils;

/**
 * Real ZooKeeper servers from curator-test, in this JVM, on loopback only: the client port is
 * bound to 127.0.0.1 ({@code clientPortAddress}) and the quorum ports use 127.0.0.1 as hostname.
 * The tick is 100 ms, so sessions may be as short as 200 ms and expire promptly; sessions of up
 * to 30 s are allowed.
 *
 * <p>curator-test is an optional dependency of the kit: add {@code
 * org.apache.curator:curator-test} (test scope) in the version of the Curator that
 * quorumlock-zookeeper uses; without it, {@link #server} and {@link #cluster} fail with a message
 * that names it.
 */
public final class ZooKeeperServers {

    /** The servers' tick: sessions may be as short as two ticks. */
    public static final int TICK_MILLIS = 100;

    /** How long a server of an ensemble may take to join it, before scaling. */
    private static final Duration JOIN_TIMEOUT = Duration.ofSeconds(20);

    /** curator-test's waits for a server's start: 10 s times this property, read once. */
    private static final String CURATOR_TIMING = "timing-multiple";

    private ZooKeeperServers() {}

    /** A standalone server with its data in {@code dir}; started. */
    public static TestingServer server(Path dir) throws Exception {
        requireCuratorTest(); // before anything else of the kit: without curator-test, say so first
        return server(dir, Processes.freePort("127.0.0.1"));
    }

    /**
     * A standalone server with its data in {@code dir}, listening on {@code clientPort}; started.
     *
     * @throws PortInUseException if another process holds the port
     */
    public static TestingServer server(Path dir, int clientPort) throws Exception {
        requireCuratorTest();
        requireFree(clientPort);
        scaleCuratorWaits();
        return new TestingServer(spec(dir.resolve("zk-standalone"), 1, clientPort), true);
    }

    /**
     * An ensemble of {@code size} servers with their data under {@code dir}; started, and every
     * server serving as the leader or a follower.
     */
    public static TestingCluster cluster(Path dir, int size) throws Exception {
        return cluster(dir, size, 0);
    }

    /**
     * An ensemble of {@code size} servers with their data under {@code dir}, whose client ports are
     * {@code firstClientPort} and the following ones (0: free ports); started, and every server
     * serving as the leader or a follower.
     *
     * @throws PortInUseException if another process holds one of the client ports
     * @throws IllegalStateException if a server does not join the ensemble in time (the limit is
     *     scaled as {@link ServerWait} says); nothing is left running then
     */
    public static TestingCluster cluster(Path dir, int size, int firstClientPort) throws Exception {
        requireCuratorTest();
        List<InstanceSpec> specs = new ArrayList<>();
        for (int id = 1; id <= size; id++) {
            int clientPort = firstClientPort == 0 ? Processes.freePort("127.0.0.1") : firstClientPort + id - 1;
            if (firstClientPort != 0) {
                requireFree(clientPort);
            }
            specs.add(spec(dir.resolve("zk-" + id), id, clientPort));
        }
        scaleCuratorWaits();
        TestingCluster cluster = new TestingCluster(specs);
        try {
            cluster.start();
            for (InstanceSpec server : cluster.getInstances()) {
                awaitServing(server);
            }
        } catch (Exception e) {
            try {
                cluster.close();
            } catch (IOException | RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
        return cluster;
    }

    /**
     * Starts a server of {@code cluster} again after {@link TestingCluster#killServer}, once its
     * ports are free (a server restarted on a port still held fails to bind), and waits until it has
     * joined the ensemble again. ZooKeeper's request to exit the JVM when a server fails is turned
     * into a log line, so that a failed restart cannot end the process that hosts the ensemble.
     */
    public static void restart(TestingCluster cluster, InstanceSpec server) throws Exception {
        ServiceUtils.setSystemExitProcedure(ServiceUtils.LOG_ONLY);
        long deadline =
                System.nanoTime() + TestTime.scaled(Duration.ofSeconds(10)).toNanos();
        for (int port : new int[] {server.getPort(), server.getQuorumPort(), server.getElectionPort()}) {
            while (!free(port)) {
                if (System.nanoTime() - deadline >= 0) {
                    throw new IllegalStateException("port " + port + " of ZooKeeper server " + server.getServerId()
                            + " is still in use 10 s after the server was killed");
                }
                Processes.pollPause(20, "the ports of ZooKeeper server " + server.getServerId());
            }
        }
        cluster.restartServer(server);
        awaitServing(server);
    }

    /** Waits until {@code server} answers {@code srvr} with its mode: it has joined the ensemble. */
    private static void awaitServing(InstanceSpec server) {
        ServerWait wait = ServerWait.start(
                "ZooKeeper server " + server.getServerId() + " on port " + server.getPort(), "serving", JOIN_TIMEOUT);
        while (!srvr(server).contains("Mode: ")) {
            if (wait.expired()) {
                throw new IllegalStateException(wait.failure());
            }
            wait.pause(20);
        }
        wait.done();
    }

    /** curator-test's own waits for a start, scaled as the kit's unless the property is set already. */
    private static void scaleCuratorWaits() {
        if (System.getProperty(CURATOR_TIMING) == null) {
            System.setProperty(CURATOR_TIMING, Long.toString(Math.max(1, (long) Math.ceil(TestTime.scale()))));
        }
    }

    /**
     * Starts a {@link FaultProxy} in front of each server's client port, in the order of {@link
     * TestingCluster#getInstances()}: a client given {@link FaultProxies#connectString()} goes
     * through the proxies, while one given {@link TestingCluster#getConnectString()} reaches the
     * servers directly. The servers talk to each other directly, so a partition of the proxies cuts
     * clients off from a live ensemble. Close the proxies before the cluster.
     */
    public static FaultProxies proxies(TestingCluster cluster) {
        return FaultProxies.inFrontOf(
                List.copyOf(cluster.getInstances()), spec -> FaultProxy.start("127.0.0.1", spec.getPort()));
    }

    /** Fails with the dependency to add, rather than a NoClassDefFoundError, where curator-test is missing. */
    private static void requireCuratorTest() {
        try {
            Class.forName("org.apache.curator.test.TestingServer", false, ZooKeeperServers.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(
                    "ZooKeeperServers needs curator-test on the class path: add the dependency"
                            + " org.apache.curator:curator-test:" + curatorVersion() + " (test scope);"
                            + " quorumlock-testkit leaves it optional, so that tests of Redis alone do not get a"
                            + " ZooKeeper server",
                    e);
        }
    }

    /** The Curator version the kit was built with. */
    private static String curatorVersion() {
        return KitVersions.of("curator", "(the version of your curator-framework)");
    }

    private static void requireFree(int port) {
        if (!free(port)) {
            throw new PortInUseException("127.0.0.1", port);
        }
    }

    private static boolean free(int port) {
        return Processes.portFree("127.0.0.1", port);
    }

    private static InstanceSpec spec(Path dataDir, int serverId, int clientPort) throws IOException {
        // The server writes its myid file there at start, so the directory must exist.
        Files.createDirectories(dataDir);
        Map<String, Object> properties = new HashMap<>();
        properties.put("clientPortAddress", "127.0.0.1");
        properties.put("maxSessionTimeout", "30000");
        // In ticks: generous limits, so that a loaded machine does not drop a follower.
        properties.put("initLimit", "50");
        properties.put("syncLimit", "20");
        // Ports outside the kernel's range for outgoing ones: a member restarted on its ports finds them free.
        return new InstanceSpec(
                dataDir.toFile(),
                clientPort,
                Processes.freePort("127.0.0.1"),
                Processes.freePort("127.0.0.1"),
                true,
                serverId,
                TICK_MILLIS,
                -1,
                properties,
                "127.0.0.1");
    }

    /**
     * Ends a client's session on the ensemble, as the ensemble does when it stops hearing from the
     * client: a second connection takes the session over (the server drops the first one) and
     * closes it, which deletes the session's ephemeral nodes at once. The client learns of the
     * expiry when it reconnects.
     */
    public static void expireSession(CuratorFramework client, String connectString) throws Exception {
        ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper thief = new ZooKeeper(
                connectString,
                10_000,
                event -> {
                    if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                        connected.countDown();
                    }
                },
                zk.getSessionId(),
                zk.getSessionPasswd());
        try {
            if (!connected.await(TestTime.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(String.format("no second connection to session 0x%x", zk.getSessionId()));
            }
        } finally {
            thief.close();
        }
    }

    /** The server of {@code cluster} that is the leader now, asked with the {@code srvr} command. */
    public static InstanceSpec leader(TestingCluster cluster) {
        for (InstanceSpec spec : cluster.getInstances()) {
            if (srvr(spec).contains("Mode: leader")) {
                return spec;
            }
        }
        throw new AssertionError("no server of the ensemble says it leads");
    }

    /** Waits until some server of {@code cluster} leads. */
    public static InstanceSpec awaitLeader(TestingCluster cluster, Duration timeout) {
        InstanceSpec[] found = new InstanceSpec[1];
        TestTime.await(
                timeout,
                () -> {
                    try {
                        found[0] = leader(cluster);
                        return true;
                    } catch (AssertionError e) {
                        return false;
                    }
                },
                "a leader in the ensemble");
        return found[0];
    }

    private static String srvr(InstanceSpec spec) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", spec.getPort()), 500);
            socket.setSoTimeout(1000);
            OutputStream out = socket.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return "";
        }
    }
}
