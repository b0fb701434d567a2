package io.quorumlock.redis;

import io.quorumlock.NodeOutcome.Vote;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.params.SetParams;

/** The Jedis transport: a small connection pool per node, every timeout set to the node timeout. */
final class JedisNode implements RedisNode {

    private final JedisPool pool;

    JedisNode(NodeAddress address, Duration timeout, int maxConnections) {
        int millis = (int) Math.max(1, timeout.toMillis());
        DefaultJedisClientConfig.Builder client = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(millis)
                .socketTimeoutMillis(millis)
                .database(address.database())
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED) // no CLIENT SETINFO round trips on connect
                .autoNegotiateProtocol(false); // RESP2 without HELLO: one round trip less, no warning
        address.user().ifPresent(client::user);
        address.password().ifPresent(client::password);
        JedisPoolConfig poolConfig = new JedisPoolConfig();
        poolConfig.setMaxTotal(maxConnections);
        poolConfig.setMaxIdle(maxConnections);
        poolConfig.setMinIdle(0);
        poolConfig.setBlockWhenExhausted(true);
        poolConfig.setMaxWait(timeout);
        poolConfig.setTestOnBorrow(false);
        poolConfig.setTestWhileIdle(false);
        poolConfig.setJmxEnabled(false);
        this.pool = new JedisPool(poolConfig, new HostAndPort(address.host(), address.port()), client.build());
    }

    @Override
    public boolean setIfAbsent(String key, String token, long ttlMillis) {
        return call(
                j -> "OK".equals(j.set(key, token, SetParams.setParams().nx().px(ttlMillis))));
    }

    @Override
    public boolean deleteIfEquals(String key, String token) {
        return call(j ->
                ONE.equals(script(j, Scripts.DELETE_IF_EQUALS_SHA, Scripts.DELETE_IF_EQUALS, key, List.of(token))));
    }

    @Override
    public boolean extendIfEquals(String key, String token, long ttlMillis) {
        return call(j -> ONE.equals(script(
                j,
                Scripts.EXTEND_IF_EQUALS_SHA,
                Scripts.EXTEND_IF_EQUALS,
                key,
                List.of(token, Long.toString(ttlMillis)))));
    }

    @Override
    public String info(String section) {
        return call(j -> j.info(section));
    }

    @Override
    public Optional<String> config(String name) {
        return call(j -> {
            try {
                Map<String, String> values = j.configGet(name);
                return Optional.ofNullable(values.get(name));
            } catch (JedisDataException e) { // CONFIG renamed away or denied by an ACL
                return Optional.empty();
            }
        });
    }

    @Override
    public void close() {
        pool.close();
    }

    private static final Long ONE = 1L;

    /** EVALSHA, and EVAL when the node does not know the script yet (after a restart or SCRIPT FLUSH). */
    private static Object script(Jedis jedis, String sha, String script, String key, List<String> args) {
        try {
            return jedis.evalsha(sha, List.of(key), args);
        } catch (JedisNoScriptException e) {
            return jedis.eval(script, List.of(key), args);
        }
    }

    private <T> T call(Function<Jedis, T> command) {
        Jedis jedis;
        try {
            jedis = pool.getResource();
        } catch (JedisException e) {
            throw new NodeFailure(Vote.UNREACHABLE, "could not connect: " + rootMessage(e));
        }
        try (jedis) {
            return command.apply(jedis);
        } catch (JedisConnectionException e) {
            if (hasCause(e, SocketTimeoutException.class)) {
                throw new NodeFailure(Vote.TIMED_OUT, "no reply within the node timeout");
            }
            throw new NodeFailure(Vote.ERROR, "connection lost: " + rootMessage(e));
        } catch (JedisException e) {
            throw new NodeFailure(Vote.ERROR, rootMessage(e));
        }
    }

    private static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
        return findCause(e, type) != null;
    }

    /** The first throwable of {@code type} among the causes and suppressed exceptions of {@code e}. */
    private static Throwable findCause(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return t;
            }
            for (Throwable suppressed : t.getSuppressed()) {
                Throwable found = findCause(suppressed, type);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    private static String rootMessage(Throwable e) {
        if (hasCause(e, ConnectException.class)) {
            return "connection refused";
        }
        if (hasCause(e, SocketTimeoutException.class)) {
            return "timed out";
        }
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    }
}
