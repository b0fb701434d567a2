package io.quorumlock.torture;

import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.EtcdServer;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.ZooKeeperServers;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

/**
 * The servers one strategy runs on, and what each kind of fault does to them. A fault that does
 * not apply to a strategy's servers (a clock jump on ZooKeeper, say) is skipped: {@link #start}
 * returns empty. Pauses and session expiry are the clients' business, not the servers'.
 */
abstract class Target implements AutoCloseable {

    /** The connect string the clients use, empty for the strategy without servers. */
    abstract String endpoints();

    /** Starts the fault on the servers; returns its label (such as "kill redis-2"), or empty if it does not apply. */
    abstract Optional<String> start(Fault fault);

    /** Heals the fault started by {@link #start}: thaws, starts again, sets the clock back. */
    abstract void heal(Fault fault);

    @Override
    public abstract void close();

    /** Starts the servers of {@code strategy}, with their files under {@code dir}. */
    static Target start(Strategy strategy, Path dir) throws Exception {
        return switch (strategy.servers()) {
            case REDIS -> new Redis(RedisServers.start(strategy.nodes()));
            case ZOOKEEPER -> new ZooKeeper(ZooKeeperServers.cluster(dir, strategy.nodes()));
            case ETCD -> new Etcd(EtcdCluster.start(strategy.nodes()));
            case NONE -> new None();
        };
    }

    /** "redis-1,3" for nodes 0 and 2. */
    static String label(String kind, String system, int[] nodes) {
        return kind + " " + system + "-"
                + Arrays.stream(nodes).mapToObj(i -> Integer.toString(i + 1)).collect(Collectors.joining(","));
    }

    private static final class Redis extends Target {
        private final RedisServers servers;

        Redis(RedisServers servers) {
            this.servers = servers;
        }

        @Override
        String endpoints() {
            return String.join(",", servers.uris());
        }

        @Override
        Optional<String> start(Fault fault) {
            int[] nodes =
                    fault.nodes(servers.size(), fault.kind() == FaultKind.RESTART || fault.kind() == FaultKind.CLOCK);
            switch (fault.kind()) {
                case KILL -> each(nodes, RedisServer::stop);
                case FREEZE -> each(nodes, RedisServer::pause);
                case RESTART -> each(nodes, s -> s.restart(false));
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
        void heal(Fault fault) {
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
        public void close() {
            servers.close();
        }
    }

    private static final class ZooKeeper extends Target {
        private final TestingCluster cluster;
        private final List<InstanceSpec> instances;

        ZooKeeper(TestingCluster cluster) {
            this.cluster = cluster;
            this.instances = new ArrayList<>(cluster.getInstances());
        }

        @Override
        String endpoints() {
            return cluster.getConnectString();
        }

        @Override
        Optional<String> start(Fault fault) {
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
        void heal(Fault fault) {
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
        public void close() {
            try {
                cluster.close();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    private static final class Etcd extends Target {
        private final EtcdCluster cluster;

        Etcd(EtcdCluster cluster) {
            this.cluster = cluster;
        }

        @Override
        String endpoints() {
            return String.join(",", cluster.endpoints());
        }

        @Override
        Optional<String> start(Fault fault) {
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
        void heal(Fault fault) {
            EtcdServer member = cluster.get(fault.nodes(cluster.size(), false)[0]);
            switch (fault.kind()) {
                case KILL -> member.startAgain();
                case FREEZE -> member.resume();
                default -> {}
            }
        }

        @Override
        public void close() {
            cluster.close();
        }
    }

    private static final class None extends Target {
        @Override
        String endpoints() {
            return "";
        }

        @Override
        Optional<String> start(Fault fault) {
            return Optional.empty();
        }

        @Override
        void heal(Fault fault) {}

        @Override
        public void close() {}
    }
}
