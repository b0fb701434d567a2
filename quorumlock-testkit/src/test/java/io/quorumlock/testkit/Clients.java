package io.quorumlock.testkit;

import redis.clients.jedis.Jedis;

/** Plain Jedis connections to test nodes, and process checks. */
final class Clients {

    private Clients() {}

    static Jedis connect(RedisServer node) {
        return connect(node, 2000);
    }

    /** A connection with this connect and socket timeout; it sends nothing until the first command. */
    static Jedis connect(RedisServer node, int timeoutMillis) {
        return node.connect(java.time.Duration.ofMillis(timeoutMillis));
    }

    static boolean processGone(long pid) {
        return ProcessHandle.of(pid).map(handle -> !handle.isAlive()).orElse(true);
    }
}
