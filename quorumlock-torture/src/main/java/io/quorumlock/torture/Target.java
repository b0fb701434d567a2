package io.quorumlock.torture;

import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.EtcdServer;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.MariaDbServer;
import io.quorumlock.testkit.PostgresServer;
import io.quorumlock.testkit.RedisSentinels;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.ZooKeeperServers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

/**
 * The servers one strategy runs on, the network between them and each client, and what each kind
 * of fault does to them. A fault that does not apply to a strategy's servers (a clock jump on
 * ZooKeeper, say) is skipped: {@link #start} returns empty. Pauses and session expiry are the
 * clients' business, not the servers'.
 *
 * <p>Each client reaches the servers through proxies of its own ({@link FaultProxies}, one set
 * per client, in front of every server): so one client can be cut off while the others still
 * reach the same live servers, and a slow node is slow for every client. The servers talk to each
 * other directly.
 */
abstract class Target implements AutoCloseable {

    /** Each client's proxies, in client order; empty for the strategy without servers. */
    private final List<FaultProxies> links;

    private final String system;

    Target(List<FaultProxies> links, String system) {
        this.links = List.copyOf(links);
        this.system = system;
    }

    /** The connect string client {@code client} (from 1) uses, through its own proxies; empty without servers. */
    String endpoints(int client) {
        return links.isEmpty() ? "" : endpoints(links.get(client - 1));
    }

    /** The connect string of a client that goes through {@code proxies}. */
    abstract String endpoints(FaultProxies proxies);

    /**
     * The servers a partition cuts its client off from: enough that the client can no longer take
     * (or keep) the lock. For a consensus ensemble every server, as the client's connect string
     * lists them all: cut off from some only, the client moves its session to another and goes on.
     * (Giving each client one server instead would make a kill or a freeze of that server a
     * partition of its clients too, and take from them the failover the ensemble is there for.)
     */
    int[] cutOff(Fault fault, int servers) {
        return IntStream.range(0, servers).toArray();
    }

    /**
     * Starts the fault on the servers or the network; returns its label (such as "kill redis-2"),
     * or empty if it does not apply.
     */
    final Optional<String> start(Fault fault) {
        if (fault.kind() != FaultKind.PARTITION && fault.kind() != FaultKind.SLOW) {
            return startOnServers(fault);
        }
        if (links.isEmpty()) {
            return Optional.empty();
        }
        int servers = links.get(0).size();
        if (fault.kind() == FaultKind.PARTITION) {
            int client = fault.client(links.size());
            int[] nodes = cutOff(fault, servers);
            links.get(client).partition(nodes);
            return Optional.of(label("partition client-" + (client + 1) + " from", system, nodes));
        }
        int[] nodes = fault.nodes(servers, false);
        // Half the latency each way, so that a request and its reply take latencyMillis more, give or
        // take a fifth of it.
        Duration oneWay = Duration.ofMillis(fault.latencyMillis()).dividedBy(2);
        for (FaultProxies proxies : links) {
            for (int node : nodes) {
                proxies.get(node).latency(FaultProxy.Direction.BOTH, oneWay, oneWay.dividedBy(5));
            }
        }
        return Optional.of(label("slow +" + fault.latencyMillis() + "ms", system, nodes));
    }

    /** Heals the fault started by {@link #start}: thaws, starts again, sets the clock back, heals the network. */
    final void heal(Fault fault) {
        switch (fault.kind()) {
            case PARTITION -> links.get(fault.client(links.size())).heal();
            case SLOW -> {
                for (FaultProxies proxies : links) {
                    for (int node : fault.nodes(proxies.size(), false)) {
                        proxies.get(node).clearLatency();
                    }
                }
            }
            default -> healOnServers(fault);
        }
    }

    /** Starts a fault on the servers themselves; returns its label, or empty if it does not apply. */
    abstract Optional<String> startOnServers(Fault fault);

    /** Heals a fault started by {@link #startOnServers}. */
    abstract void healOnServers(Fault fault);

    /** Stops the servers. */
    abstract void closeServers();

    /** Closes the clients' proxies, then stops the servers. */
    @Override
    public final void close() {
        try {
            links.forEach(FaultProxies::close);
        } finally {
            closeServers();
        }
    }

    /**
     * Starts the servers of {@code strategy}, with their files under {@code dir}, and a set of
     * proxies in front of them for each of {@code clients} clients whose leases last {@code lease}.
     */
    static Target start(Strategy strategy, Path dir, int clients, Duration lease) throws Exception {
        return switch (strategy.servers()) {
            case SENTINEL -> new Sentinel(RedisSentinels.start(), lease.plusSeconds(1));
            case REDIS -> {
                RedisServers servers = RedisServers.start(strategy.nodes());
                yield new Redis(servers, links(clients, () -> FaultProxies.inFrontOf(servers), servers::close));
            }
            case ZOOKEEPER -> {
                TestingCluster cluster = ZooKeeperServers.cluster(dir, strategy.nodes());
                yield new ZooKeeper(
                        cluster, links(clients, () -> ZooKeeperServers.proxies(cluster), () -> stop(cluster)));
            }
            case ETCD -> {
                EtcdCluster cluster = EtcdCluster.start(strategy.nodes());
                yield new Etcd(cluster, links(clients, () -> FaultProxies.inFrontOf(cluster), cluster::close));
            }
            case POSTGRES -> {
                PostgresServer server = PostgresServer.start();
                createLockTable(strategy, server.jdbcUrl(), server::close);
                yield new Database(
                        "pg",
                        new DatabaseServer(
                                server::stop, server::startAgain, server::pause, server::resume, server::close),
                        port -> "jdbc:postgresql://127.0.0.1:" + port + "/" + server.database(),
                        links(clients, () -> FaultProxies.inFrontOf(server), server::close));
            }
            case MARIADB -> {
                MariaDbServer server = MariaDbServer.start();
                createLockTable(strategy, server.jdbcUrl(), server::close);
                yield new Database(
                        "mariadb",
                        new DatabaseServer(
                                server::stop, server::startAgain, server::pause, server::resume, server::close),
                        port -> "jdbc:mariadb://127.0.0.1:" + port + "/" + server.database(),
                        links(clients, () -> FaultProxies.inFrontOf(server), server::close));
            }
            case NONE -> new None();
        };
    }

    /** Creates the database lock's table; stops the server if that fails. */
    private static void createLockTable(Strategy strategy, String url, Runnable stopServer) {
        try (JdbcLock setup = ClientLock.jdbcLock(strategy, url)) {
            setup.createTable();
        } catch (RuntimeException e) {
            stopServer.run();
            throw e;
        }
    }

    /**
     * A set of proxies for each client, made by {@code start}; if one cannot start, those already
     * started are closed and so are the servers, with {@code stopServers}.
     */
    private static List<FaultProxies> links(int clients, Supplier<FaultProxies> start, Runnable stopServers) {
        List<FaultProxies> links = new ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) {
                links.add(start.get());
            }
            return links;
        } catch (RuntimeException e) {
            try {
                links.forEach(FaultProxies::close);
            } finally {
                stopServers.run();
            }
            throw e;
        }
    }

    private static void stop(TestingCluster cluster) {
        try {
            cluster.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** "redis-1,3" for nodes 0 and 2. */
    static String label(String kind, String system, int[] nodes) {
        return kind + " " + system + "-"
                + Arrays.stream(nodes).mapToObj(i -> Integer.toString(i + 1)).collect(Collectors.joining(","));
    }

    private static final class Redis extends Target {
        private final RedisServers servers;

        Redis(RedisServers servers, List<FaultProxies> links) {
            super(links, "redis");
            this.servers = servers;
        }

        @Override
        String endpoints(FaultProxies proxies) {
            return String.join(",", proxies.uris());
        }

        /** A majority: with the rest alone the client reaches no quorum (the single node: that node). */
        @Override
        int[] cutOff(Fault fault, int servers) {
            return fault.nodes(servers, true);
        }

        @Override
        Optional<String> startOnServers(Fault fault) {
            int[] nodes =
                    fault.nodes(servers.size(), fault.kind() == FaultKind.RESTART || fault.kind() == FaultKind.CLOCK);
            switch (fault.kind()) {
                case KILL -> each(nodes, RedisServer::stop);
                case FREEZE -> each(nodes, RedisServer::pause);
                // What a failover to a replica that lacks the latest writes does to one node.
                case RESTART, FAILOVER -> each(nodes, s -> s.restart(false));
                case CLOCK -> {
                    if (!RedisServer.clockControlAvailable()) {
                        return Optional.empty();
                    }
                    each(nodes, s -> s.jumpClock(Duration.ofHours(1)));
                }
                default -> {
                    return Optional.empty();
                }
            }
            return Optional.of(label(
                    fault.kind() == FaultKind.CLOCK ? "clock +1h" : fault.kind().option(), "redis", nodes));
        }

        @Override
        void healOnServers(Fault fault) {
            int[] nodes =
                    fault.nodes(servers.size(), fault.kind() == FaultKind.RESTART || fault.kind() == FaultKind.CLOCK);
            switch (fault.kind()) {
                case KILL -> each(nodes, RedisServer::startAgain);
                case FREEZE -> each(nodes, RedisServer::resume);
                case CLOCK -> each(nodes, RedisServer::resetClock);
                default -> {}
            }
        }

        /** Acts on the nodes at once, as a fleet-wide restart or clock step would. */
        private void each(int[] nodes, java.util.function.Consumer<RedisServer> action) {
            Arrays.stream(nodes).parallel().mapToObj(servers::get).forEach(action);
        }

        @Override
        void closeServers() {
            servers.close();
        }
    }

    /**
     * A master, its replica and three sentinels. The clients ask the sentinels directly: the
     * sentinels name the master's own address, which no proxy stands in front of, so partitions
     * and latency do not apply here. A failover cuts the replica off for longer than the lease
     * ({@link RedisSentinels#cutOffReplica()}), kills the master, thaws the replica and waits for
     * the sentinels to promote it; a kill fails over with the replica in sync. The heal starts
     * the old master again as the new one's replica ({@link RedisSentinels#rejoin}).
     */
    private static final class Sentinel extends Target {
        private final RedisSentinels redis;
        private final Duration cutOff;
        /** The master a fault took down, for the heal. */
        private RedisServer down;

        Sentinel(RedisSentinels redis, Duration cutOff) {
            super(List.of(), "redis");
            this.redis = redis;
            this.cutOff = cutOff;
        }

        @Override
        String endpoints(int client) {
            return redis.uri();
        }

        @Override
        String endpoints(FaultProxies proxies) {
            return redis.uri();
        }

        @Override
        Optional<String> startOnServers(Fault fault) {
            if (fault.kind() != FaultKind.FAILOVER && fault.kind() != FaultKind.KILL) {
                return Optional.empty();
            }
            RedisServer master = redis.master();
            int[] node = {redis.servers().indexOf(master)};
            if (fault.kind() == FaultKind.KILL) {
                down = master;
                redis.killMaster();
            } else {
                RedisServer replica = redis.cutOffReplica();
                try {
                    Thread.sleep(cutOff.toMillis()); // the writes from now on reach the master alone
                } catch (InterruptedException e) {
                    replica.resume(); // the run is being stopped: no failover
                    Thread.currentThread().interrupt();
                    return Optional.empty();
                }
                master.stop();
                down = master;
                replica.resume();
                redis.awaitNamedMaster(replica);
            }
            return Optional.of(label(fault.kind().option(), "redis", node));
        }

        @Override
        void healOnServers(Fault fault) {
            if (down != null) {
                RedisServer old = down;
                down = null;
                redis.rejoin(old);
            }
        }

        @Override
        void closeServers() {
            redis.close();
        }
    }

    private static final class ZooKeeper extends Target {
        private final TestingCluster cluster;
        private final List<InstanceSpec> instances;

        ZooKeeper(TestingCluster cluster, List<FaultProxies> links) {
            super(links, "zk");
            this.cluster = cluster;
            this.instances = new ArrayList<>(cluster.getInstances());
        }

        @Override
        String endpoints(FaultProxies proxies) {
            return proxies.connectString();
        }

        @Override
        Optional<String> startOnServers(Fault fault) {
            int[] node = fault.nodes(instances.size(), false);
            InstanceSpec spec = instances.get(node[0]);
            try {
                switch (fault.kind()) {
                    case KILL -> cluster.killServer(spec);
                    case RESTART -> {
                        cluster.killServer(spec);
                        ZooKeeperServers.restart(cluster, spec);
                    }
                    default -> {
                        return Optional.empty();
                    }
                }
            } catch (Exception e) {
                throw new IllegalStateException(fault.kind().option() + " of ZooKeeper server " + spec + " failed", e);
            }
            return Optional.of(label(fault.kind().option(), "zk", node));
        }

        @Override
        void healOnServers(Fault fault) {
            if (fault.kind() == FaultKind.KILL) {
                InstanceSpec spec = instances.get(fault.nodes(instances.size(), false)[0]);
                try {
                    ZooKeeperServers.restart(cluster, spec);
                } catch (Exception e) {
                    throw new IllegalStateException("restart of ZooKeeper server " + spec + " failed", e);
                }
            }
        }

        @Override
        void closeServers() {
            stop(cluster);
        }
    }

    private static final class Etcd extends Target {
        private final EtcdCluster cluster;

        Etcd(EtcdCluster cluster, List<FaultProxies> links) {
            super(links, "etcd");
            this.cluster = cluster;
        }

        @Override
        String endpoints(FaultProxies proxies) {
            return String.join(",", proxies.uris());
        }

        @Override
        Optional<String> startOnServers(Fault fault) {
            int[] node = fault.nodes(cluster.size(), false);
            EtcdServer member = cluster.get(node[0]);
            switch (fault.kind()) {
                case KILL -> member.stop();
                case FREEZE -> member.pause();
                case RESTART -> {
                    member.stop();
                    member.startAgain();
                }
                default -> {
                    return Optional.empty();
                }
            }
            return Optional.of(label(fault.kind().option(), "etcd", node));
        }

        @Override
        void healOnServers(Fault fault) {
            EtcdServer member = cluster.get(fault.nodes(cluster.size(), false)[0]);
            switch (fault.kind()) {
                case KILL -> member.startAgain();
                case FREEZE -> member.resume();
                default -> {}
            }
        }

        @Override
        void closeServers() {
            cluster.close();
        }
    }

    /** What the database targets do to their server: a test kit's PostgresServer or MariaDbServer. */
    private record DatabaseServer(
            Runnable stop, Runnable startAgain, Runnable pause, Runnable resume, Runnable close) {}

    /**
     * One database server holding the lock's table (the shared record and the fence's table are in
     * the harness's database, as for every strategy): a kill, a restart or a freeze stops the whole
     * lock service.
     */
    private static final class Database extends Target {
        private final String system;
        private final DatabaseServer server;
        /** The JDBC URL through the proxy on a port. */
        private final IntFunction<String> url;

        Database(String system, DatabaseServer server, IntFunction<String> url, List<FaultProxies> links) {
            super(links, system);
            this.system = system;
            this.server = server;
            this.url = url;
        }

        @Override
        String endpoints(FaultProxies proxies) {
            return url.apply(proxies.get(0).port());
        }

        @Override
        Optional<String> startOnServers(Fault fault) {
            switch (fault.kind()) {
                case KILL -> server.stop().run();
                case FREEZE -> server.pause().run();
                case RESTART -> {
                    server.stop().run();
                    server.startAgain().run();
                }
                default -> {
                    return Optional.empty();
                }
            }
            return Optional.of(label(fault.kind().option(), system, new int[] {0}));
        }

        @Override
        void healOnServers(Fault fault) {
            switch (fault.kind()) {
                case KILL -> server.startAgain().run();
                case FREEZE -> server.resume().run();
                default -> {}
            }
        }

        @Override
        void closeServers() {
            server.close().run();
        }
    }

    private static final class None extends Target {
        None() {
            super(List.of(), "none");
        }

        @Override
        String endpoints(FaultProxies proxies) {
            return "";
        }

        @Override
        Optional<String> startOnServers(Fault fault) {
            return Optional.empty();
        }

        @Override
        void healOnServers(Fault fault) {}

        @Override
        void closeServers() {}
    }
}
