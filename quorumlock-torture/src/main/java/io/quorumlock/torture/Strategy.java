package io.quorumlock.torture;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/** A way to protect the shared record, compared with the others under the same faults. */
public enum Strategy {
    /** One Redis node, {@code SET NX PX} and compare-and-delete: an efficiency lock. */
    REDIS("redis", "single Redis node", Servers.REDIS, 1, false, false),
    /** Redlock over 5 nodes, restart guard off: the algorithm as published. */
    REDLOCK("redlock", "Redlock, 5 nodes", Servers.REDIS, 5, false, false),
    /** Redlock over 5 nodes with the client-side restart guard (the default). */
    REDLOCK_GUARDED("redlock-guarded", "Redlock + restart guard", Servers.REDIS, 5, false, false),
    /** ZooKeeper lock, its czxid as fencing token, checked by {@code JdbcFence}. */
    ZOOKEEPER("zookeeper", "ZooKeeper + JdbcFence", Servers.ZOOKEEPER, 3, true, true),
    /** etcd lock, its create revision as fencing token, checked by {@code JdbcFence}. */
    ETCD("etcd", "etcd + JdbcFence", Servers.ETCD, 3, true, true),
    /** The database lock on PostgreSQL, its sequence's value as fencing token, checked by {@code JdbcFence}. */
    POSTGRES("postgres", "PostgreSQL lock + JdbcFence", Servers.POSTGRES, 1, true, true),
    /** The database lock on MariaDB, its sequence's value as fencing token, checked by {@code JdbcFence}. */
    MARIADB("mariadb", "MariaDB lock + JdbcFence", Servers.MARIADB, 1, true, true),
    /**
     * Leader election over the ZooKeeper lock: the leader writes while it leads, with its term's
     * fencing token, checked by {@code JdbcFence}.
     */
    ZOOKEEPER_LEADER("zookeeper-leader", "ZooKeeper leader + JdbcFence", Servers.ZOOKEEPER, 3, true, true),
    /** Leader election over the etcd lock, the leader's writes fenced by its term's token. */
    ETCD_LEADER("etcd-leader", "etcd leader + JdbcFence", Servers.ETCD, 3, true, true),
    /** Leader election over the database lock on PostgreSQL, the leader's writes fenced by its term's token. */
    POSTGRES_LEADER("postgres-leader", "PostgreSQL leader + JdbcFence", Servers.POSTGRES, 1, true, true),
    /** The same on MariaDB, whose waiting candidates poll rather than hear the release. */
    MARIADB_LEADER("mariadb-leader", "MariaDB leader + JdbcFence", Servers.MARIADB, 1, true, true),
    /**
     * The same database lock on PostgreSQL, its record written plainly as the Redis locks write it:
     * its tokens go unchecked, so it promises no more than a TTL lock.
     */
    POSTGRES_UNFENCED("postgres-unfenced", "PostgreSQL lock, no fence", Servers.POSTGRES, 1, false, false),
    /**
     * Leader election over the single-node lock on a master that Sentinel manages, without {@code
     * WAIT}: the leader writes while it leads. A failover may promote a replica that lacks the
     * leader's latest renewal or grant.
     */
    SENTINEL_LEADER("sentinel-leader", "Sentinel leader, no WAIT", Servers.SENTINEL, 2, false, false),
    /** The same with {@code WAIT 1}: a grant or renewal counts once the replica has it. */
    SENTINEL_WAIT_LEADER("sentinel-wait-leader", "Sentinel leader + WAIT 1", Servers.SENTINEL, 2, false, false),
    /**
     * Leader election over Redlock on 5 independent nodes with the restart guard (the default),
     * beside the Sentinel leaders: a node that fails over to an empty server sits out a TTL, so
     * that wiped nodes one after another cannot add up to a second quorum.
     */
    REDLOCK_LEADER("redlock-leader", "Redlock leader + restart guard", Servers.REDIS, 5, false, false),
    /**
     * A semaphore of 2 permits over the ZooKeeper lock: each holder writes the record of its permit
     * with the permit's fencing token, checked by {@code JdbcFence}; at most 2 writers at once.
     */
    ZOOKEEPER_SEMAPHORE(
            "zookeeper-semaphore", "ZooKeeper semaphore of 2 + JdbcFence", Servers.ZOOKEEPER, 3, true, true, 2),
    /** The same over the database lock on PostgreSQL. */
    POSTGRES_SEMAPHORE(
            "postgres-semaphore", "PostgreSQL semaphore of 2 + JdbcFence", Servers.POSTGRES, 1, true, true, 2),
    /** The same over the etcd lock. */
    ETCD_SEMAPHORE("etcd-semaphore", "etcd semaphore of 2 + JdbcFence", Servers.ETCD, 3, true, true, 2),
    /** The same over the database lock on MariaDB. */
    MARIADB_SEMAPHORE("mariadb-semaphore", "MariaDB semaphore of 2 + JdbcFence", Servers.MARIADB, 1, true, true, 2),
    /**
     * A semaphore of 2 permits over the single-node Redis lock, each holder writing its permit's
     * record plainly: an efficiency semaphore, which claims no more than the lock.
     */
    REDIS_SEMAPHORE("redis-semaphore", "Redis semaphore of 2", Servers.REDIS, 1, false, false, 2),
    /**
     * A read-write lock over the ZooKeeper lock: each client reads (the record twice, under a read
     * lease) or writes (behind {@code JdbcFence}, with the writer's token), as it draws.
     */
    ZOOKEEPER_READ_WRITE("zookeeper-rw", "ZooKeeper read-write lock + JdbcFence", Servers.ZOOKEEPER, 3, true, true),
    /** The same over the database lock on PostgreSQL. */
    POSTGRES_READ_WRITE("postgres-rw", "PostgreSQL read-write lock + JdbcFence", Servers.POSTGRES, 1, true, true),
    /** The same over the etcd lock. */
    ETCD_READ_WRITE("etcd-rw", "etcd read-write lock + JdbcFence", Servers.ETCD, 3, true, true),
    /** The same over the database lock on MariaDB. */
    MARIADB_READ_WRITE("mariadb-rw", "MariaDB read-write lock + JdbcFence", Servers.MARIADB, 1, true, true),
    /** A read-write lock over the single-node Redis lock, writes and reads plain: an efficiency lock. */
    REDIS_READ_WRITE("redis-rw", "Redis read-write lock", Servers.REDIS, 1, false, false),
    /** No lock: a version column makes the database refuse a write based on a stale read. */
    OPTIMISTIC("optimistic", "database, version column", Servers.NONE, 0, true, false);

    /** What a strategy runs on. */
    public enum Servers {
        REDIS,
        /** A master, its replica and three sentinels. */
        SENTINEL,
        ZOOKEEPER,
        ETCD,
        POSTGRES,
        MARIADB,
        NONE
    }

    private final String option;
    private final String label;
    private final Servers servers;
    private final int nodes;
    private final boolean claimsCorrectness;
    private final boolean fenced;
    private final int permits;

    Strategy(String option, String label, Servers servers, int nodes, boolean claimsCorrectness, boolean fenced) {
        this(option, label, servers, nodes, claimsCorrectness, fenced, 0);
    }

    Strategy(
            String option,
            String label,
            Servers servers,
            int nodes,
            boolean claimsCorrectness,
            boolean fenced,
            int permits) {
        this.option = option;
        this.label = label;
        this.servers = servers;
        this.nodes = nodes;
        this.claimsCorrectness = claimsCorrectness;
        this.fenced = fenced;
        this.permits = permits;
    }

    /**
     * The permits of a semaphore strategy, whose clients each hold one of them and write its own
     * record ({@link #records}); 0 for a lock.
     */
    public int permits() {
        return permits;
    }

    /** The shared records the clients write: the strategy's one, or a semaphore's one per permit. */
    public java.util.List<String> records() {
        if (permits == 0) {
            return java.util.List.of(option);
        }
        java.util.List<String> records = new java.util.ArrayList<>();
        for (int permit = 1; permit <= permits; permit++) {
            records.add(option + "#" + permit);
        }
        return records;
    }

    /** The name used on the command line and for the run's files, such as {@code "redlock"}. */
    public String option() {
        return option;
    }

    /** The name shown in tables and the report. */
    public String label() {
        return label;
    }

    public Servers servers() {
        return servers;
    }

    /** How many nodes or members the strategy runs on. */
    public int nodes() {
        return nodes;
    }

    /**
     * True for the strategies that promise correctness (no lost update, no stale write accepted)
     * under every fault; a violation there fails the run. The Redis locks promise efficiency only.
     */
    public boolean claimsCorrectness() {
        return claimsCorrectness;
    }

    /** True if grants carry fencing tokens that the storage checks. */
    public boolean fenced() {
        return fenced;
    }

    /**
     * True if the clients run a {@code LeaderElection} over the lock instead of acquiring and
     * releasing it: a grant is a term, and the leader writes until its term ends.
     */
    public boolean leader() {
        return this == ZOOKEEPER_LEADER
                || this == ETCD_LEADER
                || this == POSTGRES_LEADER
                || this == MARIADB_LEADER
                || this == SENTINEL_LEADER
                || this == SENTINEL_WAIT_LEADER
                || this == REDLOCK_LEADER;
    }

    /** True if the clients read and write under a {@code DistributedReadWriteLock} over the lock. */
    public boolean readWrite() {
        return option.endsWith("-rw");
    }

    /**
     * True if the lock's grants carry fencing tokens, checked or not: a lock with a session, a
     * lease or a row that the harness can expire under its holder.
     */
    public boolean tokens() {
        return servers == Servers.ZOOKEEPER
                || servers == Servers.ETCD
                || servers == Servers.POSTGRES
                || servers == Servers.MARIADB;
    }

    /**
     * Parses a comma-separated list such as {@code "redlock,zookeeper"}, or {@code "all"}.
     *
     * @throws IllegalArgumentException naming the unknown strategy and the known ones
     */
    public static Set<Strategy> parse(String list) {
        if (list.isBlank() || list.trim().equalsIgnoreCase("all")) {
            return EnumSet.allOf(Strategy.class);
        }
        Set<Strategy> strategies = EnumSet.noneOf(Strategy.class);
        for (String name : list.split(",")) {
            strategies.add(byOption(name));
        }
        return strategies;
    }

    /** The strategy named {@code name} on the command line. */
    public static Strategy byOption(String name) {
        String wanted = name.trim().toLowerCase(Locale.ROOT);
        return Arrays.stream(values())
                .filter(s -> s.option.equals(wanted))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("--strategies: unknown strategy '" + name.trim()
                        + "'; use all or a comma-separated list of "
                        + Arrays.stream(values()).map(Strategy::option).collect(Collectors.joining(", "))));
    }
}
