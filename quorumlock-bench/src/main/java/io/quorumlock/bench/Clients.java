package io.quorumlock.bench;

import io.quorumlock.redis.Redlock;
import io.quorumlock.redis.RedlockBuilder;
import java.net.URI;
import java.util.List;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.ClusterServersConfig;
import org.redisson.config.Config;
import org.redisson.config.SentinelServersConfig;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;

/** How each benchmark and the contention run build the clients they compare, in one place. */
@SuppressWarnings("deprecation") // JedisPool and JedisPoolConfig, as the article uses them
final class Clients {

    /** The article's node timeout, also quorumlock's default. */
    static final int NODE_TIMEOUT_MILLIS = 50;

    private Clients() {}

    static HostAndPort hostAndPort(String uri) {
        URI parsed = URI.create(uri);
        return new HostAndPort(parsed.getHost(), parsed.getPort());
    }

    /** Plain RESP2 Jedis settings, as the library uses: no protocol negotiation, no CLIENT SETINFO. */
    static JedisClientConfig jedisConfig(int timeoutMillis) {
        return DefaultJedisClientConfig.builder()
                .timeoutMillis(timeoutMillis)
                .autoNegotiateProtocol(false)
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED)
                .build();
    }

    /** One Jedis connection, for the raw single-node loop. */
    static Jedis jedis(String uri) {
        return new Jedis(hostAndPort(uri), jedisConfig(1_000));
    }

    /** The article's sequential Redlock: one default {@link JedisPoolConfig} pool per node, 50 ms timeout. */
    static SequentialRedlock sequentialRedlock(List<String> uris, List<JedisPool> pools) {
        for (String uri : uris) {
            GenericObjectPoolConfig<Jedis> poolConfig = new JedisPoolConfig();
            pools.add(new JedisPool(poolConfig, hostAndPort(uri), jedisConfig(NODE_TIMEOUT_MILLIS)));
        }
        return new SequentialRedlock(List.copyOf(pools));
    }

    /** quorumlock with its defaults (50 ms node timeout, 8 connections per node at most). */
    static Redlock quorumlock(List<String> uris) {
        return quorumlockBuilder(uris).build();
    }

    /**
     * The builder of {@link #quorumlock}, without the restart guard: the bench starts its nodes for
     * the run, less than {@link Trial#TTL} before the first lock, and the guard would refuse every
     * grant until they have been up that long. None of the references has such a guard; once the
     * nodes are up for a TTL, it costs a comparison per vote.
     */
    static RedlockBuilder quorumlockBuilder(List<String> uris) {
        return Redlock.builder().nodes(uris).restartGuard(false);
    }

    /**
     * A Redisson client for one node, with Redisson's defaults: among them the 3 s response
     * timeout that decides how long it waits for a frozen node.
     */
    static RedissonClient redisson(String uri) {
        Config config = new Config();
        if (uri.startsWith("redis-sentinel://")) {
            // The master behind Sentinel, as Redisson takes it: the sentinels and the master's name.
            int hash = uri.indexOf('#');
            SentinelServersConfig sentinel = config.useSentinelServers().setMasterName(uri.substring(hash + 1));
            for (String node : uri.substring("redis-sentinel://".length(), hash).split(",")) {
                sentinel.addSentinelAddress("redis://" + node);
            }
            sentinel.setCheckSentinelsList(false);
        } else if (uri.startsWith("redis-cluster://")) {
            // The cluster, as Redisson takes it: its seeds.
            ClusterServersConfig cluster = config.useClusterServers();
            for (String node : uri.substring("redis-cluster://".length()).split(",")) {
                cluster.addNodeAddress("redis://" + node);
            }
        } else {
            config.useSingleServer().setAddress(uri);
        }
        return Redisson.create(config);
    }
}
