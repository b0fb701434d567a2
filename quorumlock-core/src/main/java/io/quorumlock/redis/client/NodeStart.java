package io.quorumlock.redis.client;

/**
 * What the client knows of a node's last start: the latest time at which it may have lost keys
 * ({@code nanos}, on the client's ticker); whether that time is when the client saw its {@code
 * run_id} change (a restart, or a failover to another server); and whether the server fsyncs every
 * write ({@code appendonly yes}, {@code appendfsync always}), so that its own start lost nothing.
 */
public record NodeStart(long nanos, boolean runIdChanged, boolean fsyncs) {

    /** A start learnt from the uptime, or assumed, of a node not known to fsync. */
    public static NodeStart at(long nanos) {
        return new NodeStart(nanos, false, false);
    }
}
