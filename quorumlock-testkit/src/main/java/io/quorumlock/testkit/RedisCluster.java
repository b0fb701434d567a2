package io.quorumlock.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;

/**
 * A Redis Cluster on 127.0.0.1 from {@code redis-server} nodes with {@code cluster-enabled yes},
 * without persistence: masters that share the 16384 hash slots in even ranges, each with its
 * replicas. Every wait is bounded and scaled by {@link TestTime#scale()}.
 *
 * <pre>{@code
 * try (RedisCluster cluster = RedisCluster.start(3, 1)) {
 *     RedisServer master = cluster.masterOf("lock:sku:42");
 * }
 * }</pre>
 */
public final class RedisCluster implements AutoCloseable {

    /** How long a node may be silent before the others count it failing, and its replica takes over. */
    public static final Duration NODE_TIMEOUT = Duration.ofSeconds(1);

    private static final Duration SETTLE = Duration.ofSeconds(30);
    private static final Duration PROBE = Duration.ofSeconds(2);
    private static final int SLOTS = 16384;

    private final List<RedisServer> masters;
    private final List<RedisServer> replicas;

    private RedisCluster(List<RedisServer> masters, List<RedisServer> replicas) {
        this.masters = List.copyOf(masters);
        this.replicas = List.copyOf(replicas);
    }

    /**
     * Starts {@code masters} masters with {@code replicasEach} replicas each, and waits until every
     * node sees the cluster whole ({@code cluster_state:ok}) and every replica has synced.
     *
     * @throws IllegalArgumentException for fewer than 1 master or a negative number of replicas
     * @throws IllegalStateException if a node does not come up, or the cluster does not form in time
     */
    public static RedisCluster start(int masters, int replicasEach) {
        if (masters < 1 || replicasEach < 0) {
            throw new IllegalArgumentException("a cluster needs at least 1 master and 0 or more replicas each, was "
                    + masters + " and " + replicasEach);
        }
        List<RedisServer> started = new ArrayList<>();
        try {
            List<RedisServer> first = new ArrayList<>();
            for (int i = 0; i < masters; i++) {
                first.add(started(started));
            }
            List<RedisServer> second = new ArrayList<>();
            for (int i = 0; i < masters * replicasEach; i++) {
                second.add(started(started));
            }
            for (int i = 0; i < masters; i++) {
                int from = i * SLOTS / masters;
                int to = (i + 1) * SLOTS / masters - 1;
                try (Jedis jedis = first.get(i).connect(TestTime.scaled(PROBE))) {
                    jedis.sendCommand(
                            redis.clients.jedis.Protocol.Command.CLUSTER,
                            "ADDSLOTSRANGE",
                            Integer.toString(from),
                            Integer.toString(to));
                }
            }
            RedisServer seed = first.get(0);
            for (RedisServer node : started.subList(1, started.size())) {
                try (Jedis jedis = node.connect(TestTime.scaled(PROBE))) {
                    // The bus port named: it is not the port plus 10000 here.
                    jedis.sendCommand(
                            redis.clients.jedis.Protocol.Command.CLUSTER,
                            "MEET",
                            seed.host(),
                            Integer.toString(seed.port()),
                            Integer.toString(seed.clusterBusPort()));
                }
            }
            TestTime.await(
                    SETTLE,
                    () -> started.stream().allMatch(n -> knows(n, started.size())),
                    "every node to know the others");
            for (int i = 0; i < second.size(); i++) {
                String masterId = id(first.get(i % masters));
                try (Jedis jedis = second.get(i).connect(TestTime.scaled(PROBE))) {
                    jedis.clusterReplicate(masterId);
                }
            }
            RedisCluster cluster = new RedisCluster(first, second);
            TestTime.await(SETTLE, cluster::settled, "the cluster to be whole, its replicas synced");
            return cluster;
        } catch (RuntimeException | Error e) {
            started.forEach(RedisServer::close);
            throw e;
        }
    }

    private static RedisServer started(List<RedisServer> started) {
        RedisServer node = RedisServer.startClusterNode(NODE_TIMEOUT);
        started.add(node);
        return node;
    }

    /** {@code redis://127.0.0.1:P} of every master, comma-separated: what a client is given as seeds. */
    public String seeds() {
        return masters.stream().map(RedisServer::uri).collect(Collectors.joining(","));
    }

    /** {@code redis-cluster://127.0.0.1:P} of the first master: the cluster as a client names it, by one seed. */
    public String uri() {
        return "redis-cluster://" + masters.get(0).host() + ":" + masters.get(0).port();
    }

    /** The masters, in the order of the slot ranges they were given. */
    public List<RedisServer> masters() {
        return masters;
    }

    /** The replicas: replica {@code i} was made the replica of master {@code i % masters}. */
    public List<RedisServer> replicas() {
        return replicas;
    }

    /** The hash slot of {@code key}, as a node computes it ({@code CLUSTER KEYSLOT}). */
    public int slotOf(String key) {
        try (Jedis jedis = masters.get(0).connect(TestTime.scaled(PROBE))) {
            return (int) jedis.clusterKeySlot(key);
        }
    }

    /** The data node that serves {@code key}'s slot now, as the first master that answers sees it. */
    public RedisServer masterOf(String key) {
        int slot = slotOf(key);
        for (RedisServer node : all()) {
            if (!node.isRunning() || node.isPaused()) {
                continue;
            }
            try (Jedis jedis = node.connect(TestTime.scaled(PROBE))) {
                for (Object range : jedis.clusterSlots()) {
                    List<?> entry = (List<?>) range;
                    long from = (Long) entry.get(0);
                    long to = (Long) entry.get(1);
                    if (slot >= from && slot <= to) {
                        int port = ((Long) ((List<?>) entry.get(2)).get(1)).intValue();
                        return all().stream()
                                .filter(s -> s.port() == port)
                                .findFirst()
                                .orElseThrow(() -> new IllegalStateException(
                                        "slot " + slot + " is on port " + port + ", not one of this cluster's nodes"));
                    }
                }
            } catch (JedisException e) {
                // ask the next node
            }
        }
        throw new IllegalStateException("no node of the cluster says who serves slot " + slot);
    }

    /**
     * Starts moving {@code slot} from master {@code from} to master {@code to}: {@code to} imports
     * it, {@code from} migrates it, and neither has moved a key yet. A key of the slot that is
     * not on {@code from} is asked for on {@code to} ({@code ASK}).
     */
    public void beginMigration(int slot, RedisServer from, RedisServer to) {
        setSlot(to, slot, "IMPORTING", id(from));
        setSlot(from, slot, "MIGRATING", id(to));
    }

    /**
     * Ends a migration begun with {@link #beginMigration}: moves the slot's keys left on {@code
     * from} to {@code to} ({@code MIGRATE}, TTLs kept) and gives the slot to {@code to} on every
     * master, so that the others answer {@code MOVED}.
     */
    public void endMigration(int slot, RedisServer from, RedisServer to) {
        try (Jedis jedis = from.connect(TestTime.scaled(PROBE))) {
            List<String> keys = jedis.clusterGetKeysInSlot(slot, 1000);
            if (!keys.isEmpty()) {
                List<String> words = new ArrayList<>(List.of(
                        to.host(),
                        Integer.toString(to.port()),
                        "",
                        "0",
                        Long.toString(TestTime.scaled(PROBE).toMillis()),
                        "KEYS"));
                words.addAll(keys);
                jedis.sendCommand(redis.clients.jedis.Protocol.Command.MIGRATE, words.toArray(String[]::new));
            }
        }
        String owner = id(to);
        setSlot(to, slot, "NODE", owner);
        setSlot(from, slot, "NODE", owner);
        for (RedisServer master : masters) {
            if (master != from && master != to && master.isRunning()) {
                setSlot(master, slot, "NODE", owner);
            }
        }
    }

    /** Moves {@code slot} from master {@code from} to master {@code to}, with its keys. */
    public void migrate(int slot, RedisServer from, RedisServer to) {
        beginMigration(slot, from, to);
        endMigration(slot, from, to);
    }

    /**
     * Promotes {@code replica} in its master's place as an operator does ({@code CLUSTER
     * FAILOVER}: the master stops taking writes until the replica has them all), and waits until
     * every running node sees it serving the slots.
     */
    public void failOver(RedisServer replica) {
        try (Jedis jedis = replica.connect(TestTime.scaled(PROBE))) {
            jedis.clusterFailover();
        }
        TestTime.await(SETTLE, () -> isMaster(replica), "the replica " + replica + " to be a master");
        TestTime.await(SETTLE, this::settled, "the cluster to be whole again");
        TestTime.await(SETTLE, () -> everyNodeSees(replica), "every node to see " + replica + " serve slots");
    }

    /**
     * Kills the master that serves {@code key}'s slot (SIGKILL, as a crash), and waits until its
     * replica is promoted and every running node sees the cluster ok; returns the promoted replica.
     */
    public RedisServer killMasterOf(String key) {
        RedisServer master = masterOf(key);
        master.stop();
        TestTime.await(
                SETTLE,
                () -> {
                    try {
                        return masterOf(key) != master;
                    } catch (IllegalStateException e) {
                        return false;
                    }
                },
                "a replica of " + master + " to take over its slots");
        // Each node updates its own view: until every running one says the cluster is ok, a write
        // sent to one that has not seen the promotion yet is refused with CLUSTERDOWN.
        TestTime.await(SETTLE, this::settled, "every running node to see the cluster ok again");
        return masterOf(key);
    }

    /** Whether every running node's CLUSTER SLOTS names {@code master} as the master of some slots. */
    private boolean everyNodeSees(RedisServer master) {
        for (RedisServer node : all()) {
            if (!node.isRunning()) {
                continue;
            }
            try (Jedis jedis = node.connect(TestTime.scaled(PROBE))) {
                boolean seen = false;
                for (Object range : jedis.clusterSlots()) {
                    List<?> entry = (List<?>) range;
                    seen |= ((Long) ((List<?>) entry.get(2)).get(1)).intValue() == master.port();
                }
                if (!seen) {
                    return false;
                }
            } catch (JedisException e) {
                return false;
            }
        }
        return true;
    }

    private static boolean isMaster(RedisServer node) {
        try (Jedis jedis = node.connect(TestTime.scaled(PROBE))) {
            return jedis.info("replication").contains("role:master");
        } catch (JedisException e) {
            return false;
        }
    }

    private static void setSlot(RedisServer node, int slot, String state, String id) {
        try (Jedis jedis = node.connect(TestTime.scaled(PROBE))) {
            jedis.sendCommand(
                    redis.clients.jedis.Protocol.Command.CLUSTER, "SETSLOT", Integer.toString(slot), state, id);
        }
    }

    /** The first of {@code prefix} followed by 0, 1, 2, ... whose slot {@code master} serves now. */
    public String keyServedBy(RedisServer master, String prefix) {
        for (int i = 0; i < 100_000; i++) {
            if (masterOf(prefix + i) == master) {
                return prefix + i;
            }
        }
        throw new IllegalStateException(master + " serves none of the first 100,000 keys " + prefix + "N");
    }

    /** Every node, masters first. */
    public List<RedisServer> all() {
        List<RedisServer> all = new ArrayList<>(masters);
        all.addAll(replicas);
        return all;
    }

    @Override
    public void close() {
        all().forEach(RedisServer::close);
    }

    private boolean settled() {
        for (RedisServer node : all()) {
            if (!node.isRunning()) {
                continue;
            }
            try (Jedis jedis = node.connect(TestTime.scaled(PROBE))) {
                if (!jedis.clusterInfo().contains("cluster_state:ok")) {
                    return false;
                }
            } catch (JedisException e) {
                return false;
            }
        }
        for (RedisServer replica : replicas) {
            if (!replica.isRunning() || isMaster(replica)) {
                continue;
            }
            try (Jedis jedis = replica.connect(TestTime.scaled(PROBE))) {
                if (!jedis.info("replication").contains("master_link_status:up")) {
                    return false;
                }
            } catch (JedisException e) {
                return false;
            }
        }
        return true;
    }

    private static boolean knows(RedisServer node, int count) {
        try (Jedis jedis = node.connect(TestTime.scaled(PROBE))) {
            Map<String, String> info = jedis.clusterInfo()
                    .lines()
                    .filter(line -> line.contains(":"))
                    .collect(Collectors.toMap(
                            line -> line.substring(0, line.indexOf(':')),
                            line -> line.substring(line.indexOf(':') + 1).trim(),
                            (a, b) -> b));
            return Integer.toString(count).equals(info.get("cluster_known_nodes"));
        } catch (JedisException e) {
            return false;
        }
    }

    private static String id(RedisServer node) {
        try (Jedis jedis = node.connect(TestTime.scaled(PROBE))) {
            return jedis.clusterMyId();
        }
    }
}
