package io.quorumlock.redis;

import io.quorumlock.redis.client.NodeStart;

/**
 * Redlock's restart guard as pure arithmetic. A node that restarted without fsync'd persistence
 * has lost keys that may still be valid on other nodes, so its yes could grant a lock that another
 * client holds. It can only be sure to have lost nothing still valid once it has been up for the
 * longest TTL that anyone was granted: until then its yes does not count. Every time is in
 * nanoseconds on the client's ticker; a node's start is the latest at which it may have started.
 */
final class RestartGuard {

    private RestartGuard() {}

    /** How long after {@code nowNanos} a node that started at {@code startNanos} may vote: zero if it may now. */
    static long waitNanos(long startNanos, long nowNanos, long longestTtlNanos) {
        return Math.max(0, longestTtlNanos - (nowNanos - startNanos));
    }

    /**
     * How long after {@code nowNanos} the node may vote: zero at once if its server fsyncs every
     * write and the client saw no change of its run_id (a change may be a failover to a server
     * that never had the keys, fsync or not), else the rest of the longest TTL from its start.
     */
    static long waitNanos(NodeStart start, long nowNanos, long longestTtlNanos) {
        return start.fsyncs() && !start.runIdChanged() ? 0 : waitNanos(start.nanos(), nowNanos, longestTtlNanos);
    }

    /**
     * Null when the node may vote at {@code nowNanos}, else why not, such as {@code restart guard:
     * up 3 s, votes in 27 s}.
     */
    static String exclusion(long startNanos, long nowNanos, long longestTtlNanos) {
        return exclusion(NodeStart.at(startNanos), nowNanos, longestTtlNanos);
    }

    /**
     * Null when the node may vote at {@code nowNanos}, else why not, such as {@code restart guard:
     * up 3 s, votes in 27 s} or {@code restart guard: run_id changed 3 s ago (a restart or a
     * failover), votes in 27 s}.
     */
    static String exclusion(NodeStart start, long nowNanos, long longestTtlNanos) {
        long wait = waitNanos(start, nowNanos, longestTtlNanos);
        if (wait == 0) {
            return null;
        }
        long up = Math.max(0, nowNanos - start.nanos());
        return start.runIdChanged()
                ? "restart guard: run_id changed " + seconds(up, false) + " ago (a restart or a failover), votes in "
                        + seconds(wait, true)
                : "restart guard: up " + seconds(up, false) + ", votes in " + seconds(wait, true);
    }

    /** Whole seconds from 10 s on, else tenths; rounded up or down. */
    static String seconds(long nanos, boolean roundUp) {
        long tenths = nanos / 100_000_000 + (roundUp && nanos % 100_000_000 != 0 ? 1 : 0);
        if (tenths < 100) {
            return tenths / 10 + (tenths % 10 == 0 ? "" : "." + tenths % 10) + " s";
        }
        return (roundUp ? (tenths + 9) / 10 : tenths / 10) + " s";
    }
}
