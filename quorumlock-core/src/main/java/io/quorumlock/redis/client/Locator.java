package io.quorumlock.redis.client;

import java.net.InetSocketAddress;

/**
 * Where one node is now: its host name looked up ({@link Resolver}), or the master that the
 * sentinels name ({@link SentinelLocator}).
 */
interface Locator {

    /**
     * An address, or why there is none.
     *
     * @param address the socket address, or null
     * @param host the host name to verify a TLS certificate against
     * @param failure why there is no address, or null
     * @param kind what the failure is: {@link Reply.Kind#MISCONFIGURED} for a mistake in the
     *     configuration (such as a CA that did not issue the sentinels' certificates), which
     *     waiting does not mend
     */
    record Result(InetSocketAddress address, String host, String failure, Reply.Kind kind) {

        /** An address, or a failure that may pass ({@link Reply.Kind#NOT_SENT}). */
        Result(InetSocketAddress address, String host, String failure) {
            this(address, host, failure, Reply.Kind.NOT_SENT);
        }
    }

    /** The address, waiting for a first answer until {@code deadlineNanos} (on the lock's ticker). */
    Result address(long deadlineNanos);

    /**
     * Whether the node has moved away from {@code connectedTo}, the address a connection was
     * opened to: that connection must be dropped. Never waits.
     */
    default boolean moved(Result connectedTo) {
        return false;
    }

    /** Whether the node may move (a failover): a replica's refusal of a write then means it did. */
    default boolean followsFailovers() {
        return false;
    }

    /** A connection to the node failed, or found a replica: look again, in the background. */
    default void recheck() {}

    /** Where the node was found, if its address does not say: the master and who named it. */
    default java.util.Optional<String> describe() {
        return java.util.Optional.empty();
    }

    /**
     * How many replicas of the node are up and linked to it, as far as is known: 0 where they are
     * not counted, -1 while they are but no answer has counted them yet.
     */
    default int replicasUp() {
        return 0;
    }

    /** Whether the node's replicas are counted from its own {@code ROLE}, asked on each new connection. */
    default boolean countsReplicas() {
        return false;
    }

    /**
     * The node answered {@code command}, a {@code ROLE} or a {@code WAIT}, with {@code reply}, for
     * a locator that learns from the answers; true if it asks for the node's {@code ROLE} before
     * the next request.
     */
    default boolean replied(Command command, Reply reply) {
        return false;
    }

    /** Stops what runs in the background. */
    default void close() {}
}
