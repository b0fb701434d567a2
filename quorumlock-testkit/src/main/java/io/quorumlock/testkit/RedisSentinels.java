package io.quorumlock.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;

/**
 * A master with one replica and the sentinels that watch them, on 127.0.0.1, without
 * persistence: the Redis most teams lock on. {@link #uri()} names the master as the lock takes it.
 *
 * <pre>{@code
 * try (RedisSentinels redis = RedisSentinels.start()) {
 *     DistributedLock<Lease> lock = Redlock.builder().node(redis.uri()).build();
 *     RedisServer promoted = redis.killMaster(); // SIGKILL, then the sentinels promote the replica
 * }
 * }</pre>
 *
 * <p>The sentinels count the master down after {@link #DOWN_AFTER} of silence and fail it over
 * within a few seconds of that. Every wait is bounded and scaled by {@link TestTime#scale()}.
 */
public final class RedisSentinels implements AutoCloseable {

    /** The master's name in the sentinels' configuration. */
    public static final String MASTER_NAME = "mymaster";
    /** How long a master may be silent before a sentinel counts it down. */
    public static final Duration DOWN_AFTER = Duration.ofSeconds(1);

    private static final Duration SETTLE = Duration.ofSeconds(30);
    private static final Duration PROBE = Duration.ofSeconds(2);

    private final List<RedisServer> servers;
    private final List<RedisServer> sentinels;
    private final boolean tls;

    private RedisSentinels(List<RedisServer> servers, List<RedisServer> sentinels, boolean tls) {
        this.servers = List.copyOf(servers);
        this.sentinels = List.copyOf(sentinels);
        this.tls = tls;
    }

    /** Starts a master, its replica and three sentinels (quorum 2), and waits until they all know each other. */
    public static RedisSentinels start() {
        return start(null);
    }

    /**
     * As {@link #start()}, every server and sentinel speaking TLS only, with {@code tls}'s server
     * certificate (client certificates not required), replication and the sentinels' own links
     * over TLS too: {@link #uri()} is then {@code rediss-sentinel://...}.
     *
     * @param tls the certificates, such as {@link TlsMaterial#generate()}; they stay the caller's to close
     */
    public static RedisSentinels startTls(TlsMaterial tls) {
        return start(java.util.Objects.requireNonNull(tls, "tls"));
    }

    private static RedisSentinels start(TlsMaterial tls) {
        List<RedisServer> servers = new ArrayList<>();
        List<RedisServer> sentinels = new ArrayList<>();
        try {
            RedisServer master = tls == null ? RedisServer.start() : RedisServer.startTls(tls, false);
            servers.add(master);
            RedisServer replica = tls == null ? RedisServer.start() : RedisServer.startTls(tls, false);
            servers.add(replica);
            for (RedisServer server : servers) {
                // A master waits 5 s by default for more replicas before it sends one its data.
                try (Jedis jedis = server.connect(TestTime.scaled(PROBE))) {
                    jedis.configSet("repl-diskless-sync-delay", "0");
                    if (tls != null) {
                        jedis.configSet("tls-replication", "yes");
                    }
                }
            }
            try (Jedis jedis = replica.connect(TestTime.scaled(PROBE))) {
                jedis.replicaof(master.host(), master.port());
            }
            TestTime.await(
                    SETTLE,
                    () -> master.hasOnlineReplica(replica),
                    "the replica " + replica.uri() + " to sync with its master");
            for (int i = 0; i < 3; i++) {
                sentinels.add(RedisServer.startSentinel(MASTER_NAME, master.port(), 2, DOWN_AFTER, null, tls));
            }
            RedisSentinels group = new RedisSentinels(servers, sentinels, tls != null);
            TestTime.await(SETTLE, group::settled, "every sentinel to know the replica and the other sentinels");
            return group;
        } catch (RuntimeException | Error e) {
            sentinels.forEach(RedisServer::close);
            servers.forEach(RedisServer::close);
            throw e;
        }
    }

    /** {@code redis-sentinel://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3#mymaster}, {@code rediss-sentinel://} for TLS. */
    public String uri() {
        return (tls ? "rediss-sentinel://" : "redis-sentinel://")
                + sentinels.stream().map(s -> s.host() + ":" + s.port()).collect(Collectors.joining(","))
                + "#" + MASTER_NAME;
    }

    /** The master and the replica, in the order they were started (the first was the master then). */
    public List<RedisServer> servers() {
        return servers;
    }

    /** The sentinels. */
    public List<RedisServer> sentinels() {
        return sentinels;
    }

    /** The data node that the first sentinel that answers names as the master now. */
    public RedisServer master() {
        int port = namedMasterPort();
        return servers.stream()
                .filter(s -> s.port() == port)
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("the sentinels name port " + port + ", not one of ours"));
    }

    /**
     * Cuts the replica off the master, as a slow link or a busy replica would: it is paused
     * (SIGSTOP), and the master drops its replication link, so that the writes from now on reach
     * the master alone and the replica cannot link again until it is resumed.
     *
     * @return the replica, paused: {@link RedisServer#resume()} it
     */
    public RedisServer cutOffReplica() {
        RedisServer master = master();
        RedisServer replica = servers.get(servers.get(0) == master ? 1 : 0);
        replica.pause();
        try (Jedis jedis = master.connect(TestTime.scaled(PROBE))) {
            jedis.sendCommand(redis.clients.jedis.Protocol.Command.CLIENT, "KILL", "TYPE", "replica");
        } catch (JedisException e) {
            replica.resume();
            throw e;
        }
        return replica;
    }

    /**
     * Waits until {@code server}, a former master started again, follows the new master as its
     * replica (the sentinels reconfigure it) and has synced with it.
     */
    public void awaitReplica(RedisServer server) {
        TestTime.await(SETTLE, () -> linkUp(server), server.uri() + " to follow the new master as its replica");
    }

    /**
     * Starts {@code server}, a former master that was stopped, again as the replica of the master
     * the sentinels name now, and waits until it has synced. It is made the replica at once, as an
     * operator would, rather than when a sentinel next looks at it (every 10 s); the sentinels
     * then find it so.
     */
    public void rejoin(RedisServer server) {
        RedisServer master = master();
        server.startAgain();
        try (Jedis jedis = server.connect(TestTime.scaled(PROBE))) {
            // Lost with the restart: without it, this server, once promoted, keeps its replica
            // waiting 5 s for its data.
            jedis.configSet("repl-diskless-sync-delay", "0");
            if (tls) {
                jedis.configSet("tls-replication", "yes");
            }
            jedis.replicaof(master.host(), master.port());
        }
        awaitReplica(server);
    }

    /**
     * Kills the master (SIGKILL) and waits until the sentinels name the replica as the master and
     * it accepts writes.
     *
     * @return the new master
     */
    public RedisServer killMaster() {
        RedisServer old = master();
        RedisServer next = servers.get(servers.get(0) == old ? 1 : 0);
        old.stop();
        return awaitNamedMaster(next);
    }

    /**
     * Asks the sentinels for a failover while the master runs ({@code SENTINEL FAILOVER}): the
     * replica is promoted and the old master becomes its replica. Waits until the sentinels name
     * the new master and it accepts writes.
     *
     * @return the new master
     */
    public RedisServer failOver() {
        RedisServer old = master();
        RedisServer next = servers.get(servers.get(0) == old ? 1 : 0);
        TestTime.await(
                SETTLE,
                () -> {
                    try (Jedis jedis = sentinels.get(0).connect(TestTime.scaled(PROBE))) {
                        return "OK".equals(jedis.sentinelFailover(MASTER_NAME));
                    } catch (JedisException e) {
                        return false; // a failover still under way refuses another: ask again
                    }
                },
                "a sentinel to accept SENTINEL FAILOVER");
        return awaitNamedMaster(next);
    }

    /**
     * Waits until the sentinels name {@code next} as the master and it accepts writes, as after a
     * failover a test brought about itself.
     *
     * @return {@code next}
     */
    public RedisServer awaitNamedMaster(RedisServer next) {
        TestTime.await(
                SETTLE,
                () -> {
                    try {
                        return namedMasterPort() == next.port() && isMaster(next);
                    } catch (RuntimeException e) {
                        return false;
                    }
                },
                "the sentinels to name " + next.uri() + " as the master");
        return next;
    }

    @Override
    public void close() {
        sentinels.forEach(RedisServer::close);
        servers.forEach(RedisServer::close);
    }

    private int namedMasterPort() {
        RuntimeException last = null;
        for (RedisServer sentinel : sentinels) {
            if (!sentinel.isRunning() || sentinel.isPaused()) {
                continue;
            }
            try (Jedis jedis = sentinel.connect(TestTime.scaled(PROBE))) {
                List<String> address = jedis.sentinelGetMasterAddrByName(MASTER_NAME);
                return Integer.parseInt(address.get(1));
            } catch (JedisException e) {
                last = e;
            }
        }
        throw new IllegalStateException("no sentinel named the master", last);
    }

    private boolean settled() {
        for (RedisServer sentinel : sentinels) {
            try (Jedis jedis = sentinel.connect(TestTime.scaled(PROBE))) {
                Map<String, String> master = jedis.sentinelMaster(MASTER_NAME);
                if (!String.valueOf(sentinels.size() - 1).equals(master.get("num-other-sentinels"))
                        || !"1".equals(master.get("num-slaves"))) {
                    return false;
                }
            } catch (JedisException e) {
                return false;
            }
        }
        return true;
    }

    private static boolean isMaster(RedisServer server) {
        try (Jedis jedis = server.connect(TestTime.scaled(PROBE))) {
            return jedis.info("replication").contains("role:master");
        } catch (JedisException e) {
            return false;
        }
    }

    private static boolean linkUp(RedisServer replica) {
        try (Jedis jedis = replica.connect(TestTime.scaled(PROBE))) {
            return jedis.info("replication").contains("master_link_status:up");
        } catch (JedisException e) {
            return false;
        }
    }
}
