package io.quorumlock.redis;

import io.quorumlock.internal.Ticker;
import io.quorumlock.redis.client.Transport;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Redlock's restart guard, as a lock's rounds apply it: the longest TTL asked for so far, and the
 * nodes that may have started less than that before a round, whose yes votes then do not count.
 */
final class RestartGuard {

    private final boolean enabled;
    private final Transport transport;
    private final Ticker ticker;
    /** The longest TTL asked for so far. */
    private final AtomicLong longestTtlNanos = new AtomicLong();

    RestartGuard(boolean enabled, Transport transport, Ticker ticker) {
        this.enabled = enabled;
        this.transport = transport;
        this.ticker = ticker;
    }

    /**
     * Which yes votes of a grant or extension round that starts at {@code roundStart} do not count:
     * with the restart guard on, those of nodes that may have started less than the longest TTL
     * asked for (this round's included) before the round.
     */
    Ballot.Exclusion exclusion(long roundStart, long ttlMillis) {
        if (!enabled) {
            return Ballot.Exclusion.NONE;
        }
        long longest = longestTtlNanos.accumulateAndGet(ttlMillis * 1_000_000, Math::max);
        return node -> QuorumMath.restartExclusion(transport.nodeStart(node), roundStart, longest);
    }

    /** For checkNodes(): why the restart guard keeps the node out of the vote now, or null. */
    String finding(int node) {
        long longest = longestTtlNanos.get();
        String why = enabled ? QuorumMath.restartExclusion(transport.nodeStart(node), ticker.nanos(), longest) : null;
        return why == null
                ? null
                : why + ": a node up for less than the longest TTL asked for (" + QuorumMath.seconds(longest, true)
                        + ") may have lost keys in a restart that are still valid elsewhere";
    }
}
