package io.quorumlock.redis;

import io.quorumlock.NodeOutcome;
import java.util.Optional;

/**
 * One Redis node as the algorithm sees it: three conditional verbs and two reads for checks.
 * Calls block for at most the node timeout and fail with {@link NodeFailure}, whose vote says
 * whether the request may have reached the node.
 */
interface RedisNode extends AutoCloseable {

    /** {@code SET key token NX PX ttl}: true if set, false if the key exists. */
    boolean setIfAbsent(String key, String token, long ttlMillis);

    /** Deletes the key if it holds the token: true if deleted, false if absent or another token. */
    boolean deleteIfEquals(String key, String token);

    /** Sets the key's TTL if it holds the token: true if extended, false if absent or another token. */
    boolean extendIfEquals(String key, String token, long ttlMillis);

    /** The text of {@code INFO section}. */
    String info(String section);

    /** A configuration value, or empty where {@code CONFIG} is renamed or denied. */
    Optional<String> config(String name);

    @Override
    void close();

    /** A failed call, with what it means for the vote. */
    final class NodeFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final NodeOutcome.Vote vote;

        NodeFailure(NodeOutcome.Vote vote, String message) {
            super(message, null, false, false);
            this.vote = vote;
        }

        NodeOutcome.Vote vote() {
            return vote;
        }
    }
}
