package io.quorumlock.redis;

import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.Ticker;
import io.quorumlock.redis.client.Transport;
import java.util.Arrays;
import java.util.List;
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

    /**
     * Whether the restart guard, rather than a holder or an outage, refused an attempt that got
     * {@code answers} and {@code votes} yes votes of the {@code quorum} needed, and for how long
     * from now: no node named a holder, and the nodes it kept out, with the yes votes and the
     * nodes not waited for, would have made a quorum. Then the time until enough of those nodes
     * may vote (zero if they may now); else -1.
     */
    long refusalNanos(List<ServerAnswer> answers, int votes, int quorum) {
        if (!enabled) {
            return -1;
        }
        long now = ticker.nanos();
        long longest = longestTtlNanos.get();
        long[] waits = new long[answers.size()];
        int kept = 0;
        int pending = 0;
        for (int node = 0; node < answers.size(); node++) {
            ServerAnswer answer = answers.get(node);
            if (answer.kind() == ServerAnswer.Kind.HELD_BY_OTHER) {
                return -1;
            } else if (answer.kind() == ServerAnswer.Kind.PENDING) {
                pending++;
            } else if (answer.kind() == ServerAnswer.Kind.EXCLUDED
                    && answer.detail().startsWith(QuorumMath.RESTART_GUARD)) {
                waits[kept++] = QuorumMath.restartWaitNanos(transport.nodeStart(node), now, longest);
            }
        }
        int needed = Math.max(1, quorum - votes - pending);
        if (kept < needed) {
            return -1;
        }
        long[] sorted = Arrays.copyOf(waits, kept);
        Arrays.sort(sorted);
        return sorted[needed - 1];
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
