package io.quorumlock.bench;

import java.util.List;
import java.util.Optional;
import java.util.UUID;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.params.SetParams;

/**
 * The reference the bench compares against: the Redlock of the article (section 4.2), written from
 * its description. It visits the nodes one after the other, each through a Jedis pool whose
 * connect and socket timeout is 50 ms: {@code SET key token NX PX ttl} on every node in turn, then
 * the quorum and validity check, and on failure an unlock on every node in turn; unlock is a Lua
 * compare-and-delete sent with {@code EVAL} on every node in turn.
 *
 * <p>Benchmark-only code: never part of the library.
 */
@SuppressWarnings("deprecation") // JedisPool, as the article uses it; Jedis 8 deprecates it
final class SequentialRedlock {

    /** The article's compare-and-delete: delete the key only if it still holds our token. */
    static final String UNLOCK_SCRIPT = """
            if redis.call('get', KEYS[1]) == ARGV[1] then
                return redis.call('del', KEYS[1])
            else
                return 0
            end
            """;

    private static final double CLOCK_DRIFT_FACTOR = 0.01;

    private final List<JedisPool> nodes;
    private final int quorum;

    SequentialRedlock(List<JedisPool> nodes) {
        this.nodes = nodes;
        this.quorum = nodes.size() / 2 + 1;
    }

    Optional<LockHandle> tryLock(String resource, long ttlMillis) {
        String token = UUID.randomUUID().toString();
        long start = System.nanoTime();
        int acquired = 0;
        for (JedisPool pool : nodes) {
            if (lockInstance(pool, resource, token, ttlMillis)) {
                acquired++;
            }
        }
        long elapsed = (System.nanoTime() - start) / 1_000_000;
        long drift = (long) (ttlMillis * CLOCK_DRIFT_FACTOR) + 2;
        long validity = ttlMillis - elapsed - drift;
        if (acquired >= quorum && validity > 0) {
            return Optional.of(new LockHandle(resource, token, validity));
        }
        unlockAll(resource, token);
        return Optional.empty();
    }

    void unlock(LockHandle handle) {
        unlockAll(handle.resource(), handle.token());
    }

    private static boolean lockInstance(JedisPool pool, String resource, String token, long ttl) {
        try (Jedis jedis = pool.getResource()) {
            return "OK"
                    .equals(jedis.set(
                            resource, token, SetParams.setParams().nx().px(ttl)));
        } catch (JedisException e) {
            return false; // the node is down or timed out: no vote
        }
    }

    private void unlockAll(String resource, String token) {
        for (JedisPool pool : nodes) {
            try (Jedis jedis = pool.getResource()) {
                jedis.eval(UNLOCK_SCRIPT, List.of(resource), List.of(token));
            } catch (JedisException ignored) {
                // a node that does not answer lets the key expire with its TTL
            }
        }
    }

    record LockHandle(String resource, String token, long validityMillis) {}
}
