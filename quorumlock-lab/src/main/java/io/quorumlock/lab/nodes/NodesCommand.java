package io.quorumlock.lab.nodes;

import io.quorumlock.cli.Text;
import io.quorumlock.cli.Verbosity;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.MariaDbServer;
import io.quorumlock.testkit.PortInUseException;
import io.quorumlock.testkit.PostgresServer;
import io.quorumlock.testkit.Processes;
import io.quorumlock.testkit.RedisCluster;
import io.quorumlock.testkit.RedisSentinels;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.ZooKeeperServers;
import java.io.Closeable;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code quorumlock nodes}: local servers for development, from the test kit, in the foreground
 * until Ctrl-C or SIGTERM: Redis nodes, a ZooKeeper ensemble, an etcd cluster, a PostgreSQL server, a
 * MariaDB server.
 * Prints each server's address, then the options to paste into another command, then {@code
 * stopped ...} once they are gone.
 */
@Command(
        name = "nodes",
        sortOptions = false,
        description = {
            "Starts local Redis nodes (or ZooKeeper, etcd, PostgreSQL, MariaDB servers) for development and runs until"
                    + " Ctrl-C (or SIGTERM), then stops them.",
            "",
            "Each server listens on 127.0.0.1 only and keeps its data in a temporary directory deleted when it"
                    + " stops. Redis: independent masters on free ports (or --port and the following ones);"
                    + " redis-server from QUORUMLOCK_REDIS_SERVER, else the PATH, else the binary shipped with"
                    + " quorumlock (Linux x86-64). The nodes are fresh: a Redlock's restart guard does not count"
                    + " their votes until they have been up for the longest TTL it asks for, unless they run with"
                    + " --persistent and so fsync every write. ZooKeeper: an ensemble in this JVM (curator-test)"
                    + " that grants sessions of 200 ms to 30 s, on client ports 2181, 2182, ... when free (else"
                    + " free ports, or --zookeeper-port). etcd: the etcd binary"
                    + " from QUORUMLOCK_ETCD_BIN, else the PATH (Debian package etcd-server). PostgreSQL: initdb and"
                    + " postgres from QUORUMLOCK_PG_BIN, else /usr/lib/postgresql/*/bin (Debian package"
                    + " postgresql); superuser postgres, no password; on port 5432 when free (else a free port, or"
                    + " --postgres-port). So the README's fenced example runs as pasted against --zookeeper 1"
                    + " --postgres. MariaDB: mariadbd from QUORUMLOCK_MARIADB_BIN, else the PATH, else /usr/sbin"
                    + " (Debian package mariadb-server); database and user quorumlock, password quorumlock"
                    + " (give it to run as QUORUMLOCK_JDBC_PASSWORD); on port 3306 when free (else a free port, or"
                    + " --mariadb-port).",
            "",
            "Prints each server's address, then the options to paste into another command (--redis, --zookeeper,"
                    + " --etcd, a JDBC URL). Redis nodes start when --count is given or no other server is asked"
                    + " for.",
            "",
            "Exit code 0 once the servers are stopped, 1 if they cannot be started, 2 for a usage error.",
            ""
        })
public final class NodesCommand implements Callable<Integer> {

    /** The most Redis nodes: Redlock wants 3 or 5; more than 15 is no development setup. */
    static final int MAX_COUNT = 15;
    /** The Redis nodes started when no other server is asked for. */
    static final int DEFAULT_COUNT = 5;
    /** The most ZooKeeper servers or etcd members. */
    static final int MAX_MEMBERS = 7;
    /** ZooKeeper's standard client port: the first server's, when it is free (the README's fenced example names it). */
    static final int ZOOKEEPER_PORT = 2181;
    /** PostgreSQL's standard port, taken when it is free (the README's fenced example names it). */
    static final int POSTGRES_PORT = 5432;

    /** MariaDB's standard port, taken when it is free. */
    static final int MARIADB_PORT = 3306;

    @Spec
    private CommandSpec spec;

    @Mixin
    private Verbosity verbosity;

    private Integer count;
    private Integer port;
    private int zooKeeper;
    private int etcd;
    private Integer zooKeeperPort;
    private Integer postgresPort;
    private Integer mariaDbPort;

    @Option(
            names = "--persistent",
            order = 3,
            description = "Run the Redis nodes with appendonly yes and appendfsync always (default: no persistence).")
    private boolean persistent;

    @Option(names = "--postgres", order = 6, description = "Start a PostgreSQL server, and print its JDBC URL.")
    private boolean postgres;

    @Option(names = "--mariadb", order = 8, description = "Start a MariaDB server, and print its JDBC URL.")
    private boolean mariaDb;

    @Option(
            names = "--sentinel",
            order = 10,
            description = "Start a Redis master, its replica and three sentinels (quorum 2, a master silent for 1 s"
                    + " is failed over), and print the redis-sentinel:// address of the master for --redis.")
    private boolean sentinel;

    @Option(
            names = "--cluster",
            description = "Start a Redis Cluster of three masters with a replica each (a master silent for 1 s is"
                    + " failed over), and print the redis-cluster:// address of its seeds for --redis.")
    private boolean cluster;

    @Option(
            names = "--count",
            paramLabel = "N",
            order = 1,
            description = "How many Redis nodes, 1 to " + MAX_COUNT + " (default: " + DEFAULT_COUNT
                    + " when no other server is asked for, else none).")
    void setCount(int count) {
        this.count = inRange("--count", count, MAX_COUNT);
    }

    @Option(
            names = "--port",
            paramLabel = "P",
            order = 2,
            description = "The Redis nodes listen on P, P+1, ... (default: free ports).")
    void setPort(int port) {
        this.port = inRange("--port", port, 65535);
    }

    @Option(
            names = "--zookeeper",
            paramLabel = "N",
            order = 4,
            description = "Start a ZooKeeper ensemble of N servers, 1 to " + MAX_MEMBERS + ", in this JVM.")
    void setZooKeeper(int servers) {
        this.zooKeeper = inRange("--zookeeper", servers, MAX_MEMBERS);
    }

    @Option(
            names = "--zookeeper-port",
            paramLabel = "P",
            order = 5,
            description = "The ZooKeeper servers' client ports are P, P+1, ... (default: " + ZOOKEEPER_PORT
                    + " and the following ones when free, else free ports).")
    void setZooKeeperPort(int port) {
        this.zooKeeperPort = inRange("--zookeeper-port", port, 65535);
    }

    @Option(
            names = "--postgres-port",
            paramLabel = "P",
            order = 7,
            description = "PostgreSQL listens on P (default: " + POSTGRES_PORT + " when free, else a free port).")
    void setPostgresPort(int port) {
        this.postgresPort = inRange("--postgres-port", port, 65535);
    }

    @Option(
            names = "--mariadb-port",
            paramLabel = "P",
            order = 9,
            description = "MariaDB listens on P (default: " + MARIADB_PORT + " when free, else a free port).")
    void setMariaDbPort(int port) {
        this.mariaDbPort = inRange("--mariadb-port", port, 65535);
    }

    @Option(
            names = "--etcd",
            paramLabel = "N",
            order = 5,
            description = "Start an etcd cluster of N members, 1 to " + MAX_MEMBERS + ".")
    void setEtcd(int members) {
        this.etcd = inRange("--etcd", members, MAX_MEMBERS);
    }

    /**
     * Started servers of one kind: what to print, and how to stop them.
     *
     * @param note a line after the addresses (a standard port that was taken), or null
     */
    private record Local(
            String started, List<String> addresses, String note, String paste, String stopped, Closeable server) {

        Local(String started, List<String> addresses, String paste, String stopped, Closeable server) {
            this(started, addresses, null, paste, stopped, server);
        }
    }

    @Override
    public Integer call() throws Exception {
        int redis = count != null
                ? count
                : zooKeeper == 0 && etcd == 0 && !postgres && !mariaDb && !sentinel && !cluster ? DEFAULT_COUNT : 0;
        if (redis == 0 && (port != null || persistent)) {
            throw usage((port != null ? "--port" : "--persistent") + " is for Redis nodes: add --count N");
        }
        if (zooKeeper == 0 && zooKeeperPort != null) {
            throw usage("--zookeeper-port is for a ZooKeeper ensemble: add --zookeeper N");
        }
        if (!postgres && postgresPort != null) {
            throw usage("--postgres-port is for PostgreSQL: add --postgres");
        }
        if (!mariaDb && mariaDbPort != null) {
            throw usage("--mariadb-port is for MariaDB: add --mariadb");
        }
        if (zooKeeperPort != null && zooKeeperPort + zooKeeper - 1 > 65535) {
            throw usage("--zookeeper-port " + zooKeeperPort + " leaves no room for " + zooKeeper
                    + " servers: the last port would be " + (zooKeeperPort + zooKeeper - 1) + ", past 65535");
        }
        // Before anything starts, so that a chosen port that is taken leaves nothing running.
        if (zooKeeperPort != null) {
            for (int p = zooKeeperPort; p < zooKeeperPort + zooKeeper; p++) {
                requireFree("--zookeeper-port", zooKeeperPort, p);
            }
        }
        if (postgresPort != null) {
            requireFree("--postgres-port", postgresPort, postgresPort);
        }
        if (mariaDbPort != null) {
            requireFree("--mariadb-port", mariaDbPort, mariaDbPort);
        }
        if (port != null && port + redis - 1 > 65535) {
            throw usage("--port " + port + " leaves no room for " + redis + " nodes: the last port would be "
                    + (port + redis - 1) + ", past 65535");
        }
        // Before anything starts, so that a missing binary leaves nothing running.
        if (etcd > 0 && EtcdCluster.unavailableReason().isPresent()) {
            throw new IllegalStateException(EtcdCluster.unavailableReason().get());
        }
        if (postgres && PostgresServer.unavailableReason().isPresent()) {
            throw new IllegalStateException(PostgresServer.unavailableReason().get());
        }
        if (mariaDb && MariaDbServer.unavailableReason().isPresent()) {
            throw new IllegalStateException(MariaDbServer.unavailableReason().get());
        }
        PrintWriter out = spec.commandLine().getOut();
        // Taken over before the servers start, so that a Ctrl-C during the start stops them as well.
        try (StopSignals signals = StopSignals.install()) {
            List<Local> started = new ArrayList<>();
            try {
                if (redis > 0) {
                    started.add(redis(redis));
                }
                if (cluster) {
                    started.add(cluster());
                }
                if (sentinel) {
                    started.add(sentinels());
                }
                if (zooKeeper > 0) {
                    started.add(zooKeeper());
                }
                if (etcd > 0) {
                    started.add(etcd());
                }
                if (postgres) {
                    started.add(postgres());
                }
                if (mariaDb) {
                    started.add(mariaDb());
                }
                announce(out, started, redis);
                signals.await();
                if (System.console() != null) {
                    out.println(); // past the ^C the terminal echoed
                }
            } finally {
                stop(started);
            }
            out.println(
                    "stopped " + inWords(started.stream().map(Local::stopped).toList()));
            out.flush();
        }
        return 0;
    }

    private Local redis(int nodes) {
        RedisServers servers;
        try {
            servers =
                    port == null ? RedisServers.start(nodes, persistent) : RedisServers.start(nodes, persistent, port);
        } catch (PortInUseException e) {
            throw new IllegalStateException(
                    "--port " + port + ": " + e.getMessage()
                            + "; choose another --port, or leave it out for free ports",
                    e);
        }
        String persistence =
                persistent ? "appendonly yes, appendfsync always" : "no persistence: keys are lost on a restart";
        List<String> uris = servers.uris();
        return new Local(
                "Started " + plural(nodes, "Redis node") + " (redis-server "
                        + servers.get(0).version() + ", " + persistence + "):",
                uris,
                "--redis " + String.join(",", uris),
                plural(nodes, "Redis node"),
                servers::close);
    }

    private Local cluster() {
        RedisCluster group = RedisCluster.start(3, 1);
        List<String> addresses = new ArrayList<>();
        for (int i = 0; i < group.masters().size(); i++) {
            RedisServer master = group.masters().get(i);
            addresses.add(master.uri() + " (master of slots "
                    + i * 16384 / group.masters().size() + "-"
                    + ((i + 1) * 16384 / group.masters().size() - 1) + ")");
        }
        group.replicas().forEach(replica -> addresses.add(replica.uri() + " (replica)"));
        String seeds = group.masters().stream()
                .map(master -> master.host() + ":" + master.port())
                .collect(java.util.stream.Collectors.joining(","));
        return new Local(
                "Started a Redis Cluster of three masters with a replica each (redis-server "
                        + group.masters().get(0).version() + ", no persistence):",
                addresses,
                "--redis redis-cluster://" + seeds,
                "the cluster's three masters and their replicas",
                group::close);
    }

    private Local sentinels() {
        RedisSentinels group = RedisSentinels.start();
        List<String> addresses = new ArrayList<>();
        addresses.add(group.master().uri() + " (master)");
        group.servers().stream()
                .filter(server -> server != group.master())
                .forEach(server -> addresses.add(server.uri() + " (replica)"));
        group.sentinels().forEach(s -> addresses.add(s.host() + ":" + s.port() + " (sentinel)"));
        return new Local(
                "Started a Redis master, its replica and three sentinels (redis-server "
                        + group.master().version() + ", no persistence; the master is named "
                        + RedisSentinels.MASTER_NAME + "):",
                addresses,
                "--redis " + group.uri(),
                "the master, its replica and three sentinels",
                group::close);
    }

    private Local zooKeeper() throws Exception {
        Path dir = Files.createTempDirectory("quorumlock-zk-");
        try {
            boolean standard = zooKeeperPort == null && allFree(ZOOKEEPER_PORT, zooKeeper);
            int first = zooKeeperPort != null ? zooKeeperPort : standard ? ZOOKEEPER_PORT : 0;
            Closeable servers;
            String connectString;
            try {
                if (zooKeeper == 1) {
                    TestingServer server =
                            first == 0 ? ZooKeeperServers.server(dir) : ZooKeeperServers.server(dir, first);
                    servers = server;
                    connectString = server.getConnectString();
                } else {
                    TestingCluster cluster = ZooKeeperServers.cluster(dir, zooKeeper, first);
                    servers = cluster;
                    connectString = cluster.getConnectString();
                }
            } catch (PortInUseException e) {
                throw portInUse("--zookeeper-port", first, e);
            }
            String note = zooKeeperPort != null || standard
                    ? null
                    : taken(
                            ZOOKEEPER_PORT,
                            zooKeeper,
                            "ZooKeeper",
                            connectString,
                            "127.0.0.1:" + ZOOKEEPER_PORT,
                            "--zookeeper-port");
            return new Local(
                    "Started "
                            + (zooKeeper == 1
                                    ? "a ZooKeeper server"
                                    : "a ZooKeeper ensemble of " + zooKeeper + " servers")
                            + " (in this JVM; sessions, and so run's --ttl, of " + 2 * ZooKeeperServers.TICK_MILLIS
                            + " ms to 30 s):",
                    List.of(connectString.split(",")),
                    note,
                    "--zookeeper " + connectString,
                    plural(zooKeeper, "ZooKeeper server"),
                    () -> {
                        try {
                            servers.close();
                        } finally {
                            Processes.deleteTree(dir);
                        }
                    });
        } catch (Exception e) {
            Processes.deleteTree(dir);
            throw e;
        }
    }

    private Local etcd() {
        EtcdCluster cluster = EtcdCluster.start(etcd);
        return new Local(
                "Started an etcd cluster of " + plural(etcd, "member") + " (etcd " + EtcdCluster.version() + "):",
                cluster.endpoints(),
                "--etcd " + String.join(",", cluster.endpoints()),
                plural(etcd, "etcd member"),
                cluster::close);
    }

    private Local postgres() {
        boolean standard = postgresPort == null && allFree(POSTGRES_PORT, 1);
        int chosen = postgresPort != null ? postgresPort : standard ? POSTGRES_PORT : 0;
        PostgresServer server;
        try {
            server = PostgresServer.start(chosen);
        } catch (PortInUseException e) {
            throw portInUse("--postgres-port", chosen, e);
        }
        String note = postgresPort != null || standard
                ? null
                : taken(
                        POSTGRES_PORT,
                        1,
                        "PostgreSQL",
                        server.host() + ":" + server.port(),
                        "127.0.0.1:" + POSTGRES_PORT,
                        "--postgres-port");
        return new Local(
                "Started PostgreSQL " + server.version() + " (superuser " + server.user()
                        + ", no password; fsync off):",
                List.of(server.host() + ":" + server.port()),
                note,
                "--jdbc " + server.jdbcUrl() + " --jdbc-user " + server.user(),
                "PostgreSQL",
                server::close);
    }

    private Local mariaDb() {
        boolean standard = mariaDbPort == null && allFree(MARIADB_PORT, 1);
        int chosen = mariaDbPort != null ? mariaDbPort : standard ? MARIADB_PORT : 0;
        MariaDbServer server;
        try {
            server = MariaDbServer.start(chosen);
        } catch (PortInUseException e) {
            throw portInUse("--mariadb-port", chosen, e);
        }
        String note = mariaDbPort != null || standard
                ? null
                : taken(
                        MARIADB_PORT,
                        1,
                        "MariaDB",
                        server.host() + ":" + server.port(),
                        "127.0.0.1:" + MARIADB_PORT,
                        "--mariadb-port");
        return new Local(
                "Started MariaDB " + server.version() + " (user " + server.user()
                        + ", a local test server's password: QUORUMLOCK_JDBC_PASSWORD=" + server.password()
                        + "; no fsync):",
                List.of(server.host() + ":" + server.port()),
                note,
                "--jdbc " + server.jdbcUrl() + " --jdbc-user " + server.user(),
                "MariaDB",
                server::close);
    }

    private void announce(PrintWriter out, List<Local> started, int redis) {
        for (Local local : started) {
            out.println(local.started());
            local.addresses().forEach(out::println);
            if (local.note() != null) {
                out.println(local.note()); // one line: it holds the address to copy
            }
            out.println();
            if (redis > 0 && local == started.get(0)) {
                String hint = redis == 1
                        ? "One Redis node: a single-node lock, which has no restart guard."
                        : persistent
                                ? "The Redis nodes fsync every write: Redlock's restart guard (on by default with"
                                        + " several nodes) counts their votes at once, since a start loses nothing."
                                : "The Redis nodes are fresh: Redlock's restart guard (on by default with several"
                                        + " nodes) does not count a node's vote until it has been up for the longest TTL"
                                        + " the client asks for, so no lock is granted in the first TTL; in tests, use"
                                        + " Redlock.builder().restartGuard(false).";
                Text.wrap(hint, "", "", Text.WIDTH).forEach(out::println);
                out.println();
            }
        }
        out.println("For another command:");
        started.forEach(local -> out.println(local.paste()));
        out.println("Ctrl-C or SIGTERM stops them.");
        out.flush();
    }

    /** Stops the servers in the reverse order of their start, each even if stopping another failed. */
    private static void stop(List<Local> started) throws IOException {
        IOException failure = null;
        for (int i = started.size() - 1; i >= 0; i--) {
            try {
                started.get(i).server().close();
            } catch (IOException | RuntimeException e) {
                IOException stopFailed = e instanceof IOException io ? io : new IOException(e.getMessage(), e);
                if (failure == null) {
                    failure = stopFailed;
                } else {
                    failure.addSuppressed(stopFailed);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * The line that says a standard port was taken and where the servers listen instead, such as
     * {@code Port 2181 of 127.0.0.1 is in use: ZooKeeper listens on 127.0.0.1:40211 instead. ...}.
     */
    private static String taken(int standard, int count, String server, String served, String named, String option) {
        String ports = count == 1 ? "Port " + standard : "Ports " + standard + "-" + (standard + count - 1);
        return ports + " of 127.0.0.1 " + (count == 1 ? "is in use" : "are not all free") + ": " + server
                + " listens on " + served + " instead. Code that names " + named
                + ", as the fenced example does, must name "
                + served.split(",")[0] + " (or stop what holds port " + standard + ", or choose a port with " + option
                + ").";
    }

    /** Whether ports {@code first} to {@code first + count - 1} of 127.0.0.1 are free now. */
    private static boolean allFree(int first, int count) {
        for (int p = first; p < first + count; p++) {
            if (!free(p)) {
                return false;
            }
        }
        return true;
    }

    private static boolean free(int port) {
        return Processes.portFree("127.0.0.1", port);
    }

    private static void requireFree(String option, int chosen, int port) {
        if (!free(port)) {
            throw portInUse(option, chosen, "port " + port + " of 127.0.0.1 is in use by another process", null);
        }
    }

    private static IllegalStateException portInUse(String option, int chosen, PortInUseException e) {
        return portInUse(option, chosen, e.getMessage(), e);
    }

    /** A chosen port that is taken: one line, naming the option and what to do. */
    private static IllegalStateException portInUse(String option, int chosen, String why, RuntimeException cause) {
        int standard = option.equals("--zookeeper-port") ? ZOOKEEPER_PORT : POSTGRES_PORT;
        return new IllegalStateException(
                option + " " + chosen + ": " + why + "; choose another " + option + ", or leave it out for " + standard
                        + " when free, else a free port",
                cause);
    }

    private int inRange(String option, int value, int max) {
        if (value < 1 || value > max) {
            throw usage(option + " must be between 1 and " + max + ", was " + value);
        }
        return value;
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    private static String plural(int n, String thing) {
        return n + " " + thing + (n == 1 ? "" : "s");
    }

    /** "a", "a and b", "a, b and c". */
    private static String inWords(List<String> items) {
        int last = items.size() - 1;
        return last == 0 ? items.get(0) : String.join(", ", items.subList(0, last)) + " and " + items.get(last);
    }
}
