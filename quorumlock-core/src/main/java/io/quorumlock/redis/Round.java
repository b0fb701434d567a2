package io.quorumlock.redis;

import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import io.quorumlock.redis.client.Transport;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.function.BooleanSupplier;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;

/**
 * One round of {@link Rounds}: a lane borrowed for it on a resource (or none), or on the lane of
 * the grants it follows up, given back when closed; the commands that follow up the grants; and
 * the wait for the nodes' replies, each node waited for while it answers.
 */
final class Round implements AutoCloseable {
    /** The rounds it is one of: their transport, clock and timeouts. */
    private final Rounds rounds;

    final Transport.Lane lane;
    /** The resource it was borrowed for; null if it follows up grants. */
    private final String resource;

    Round(Rounds rounds, String resource, Grant[] follows) {
        this.rounds = rounds;
        this.lane = rounds.transport.borrow(resource, follows == null ? null : follows[0].lane());
        this.resource = follows == null ? resource : null;
    }

    /**
     * Handles replies until {@code done} (see {@link #awaitReplies}), expiring the ballot if
     * the wait ended without it; false if interrupted.
     */
    boolean await(Ballot ballot, BooleanSupplier done, long start, boolean forConnecting, long limitNanos) {
        try {
            if (!awaitReplies(done, node -> !ballot.answered(node), start, forConnecting, limitNanos)) {
                ballot.expire();
            }
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    /**
     * Handles replies until {@code done}; or until every node still {@code missing} has owed a
     * reply without answering anything for the node timeout, or {@code limitNanos} has passed.
     * A node that answers, also to other callers, is waited for: only its silence counts, so
     * neither a connection's set-up nor a deep pipeline makes it look frozen. With {@code
     * forConnecting}, a node whose connection is still being opened (by this round or another
     * sharing it) gets up to the connect timeout from the round's start. Returns whether done.
     */
    boolean awaitReplies(BooleanSupplier done, IntPredicate missing, long start, boolean forConnecting, long limitNanos)
            throws InterruptedException {
        LongSupplier deadline = new LongSupplier() {
            private long current = Math.min(start + rounds.nodeTimeoutNanos, limitNanos);

            @Override
            public long getAsLong() {
                if (rounds.ticker.nanos() < current) {
                    return current;
                }
                long latest = Long.MIN_VALUE;
                for (int i = 0; i < rounds.names.size(); i++) {
                    if (missing.test(i)) {
                        latest = Math.max(latest, waitsFor(i, start, forConnecting));
                    }
                }
                current = Math.min(latest, limitNanos);
                return current;
            }
        };
        return lane.await(done, deadline);
    }

    /** Until when the round waits for {@code node}: the node timeout from the start of its silence. */
    private long waitsFor(int node, long start, boolean forConnecting) {
        Transport.Link link = lane.link(node);
        long silentSince = link.silentSince();
        long until = (silentSince == Long.MAX_VALUE ? start : silentSince) + rounds.nodeTimeoutNanos;
        return forConnecting && link.connecting() ? Math.max(until, start + rounds.connectTimeoutNanos) : until;
    }

    /** Sends {@code command} to each node that may hold the key (see {@link Grant#followUp}). */
    void afterGrants(Grant[] grants, Command command, Ballot ballot, boolean cleanUp) {
        afterGrants(grants, command, ballot, cleanUp, null);
    }

    /**
     * As {@link #afterGrants(Grant[], Command, Ballot, boolean)}, for {@link Scripts#RELEASE}:
     * the largest number of listeners a node reported goes to {@code listeners}.
     */
    void afterGrants(Grant[] grants, Command command, Ballot ballot, boolean cleanUp, LongAccumulator listeners) {
        try (Transport.Sends sends = lane.sends()) {
            for (int i = 0; i < grants.length; i++) {
                int node = i;
                grants[i].followUp(
                        command,
                        lane.link(i),
                        (sent, reply, link) -> {
                            if (listeners != null && reply instanceof Reply.Int deleted && deleted.value() > 1) {
                                listeners.accumulate(deleted.value() - 1);
                                reply = Reply.Int.ONE;
                            }
                            ballot.record(node, Ballot.vote(sent, link.node(), reply));
                        },
                        ballot,
                        cleanUp);
            }
        }
    }

    @Override
    public void close() {
        rounds.transport.giveBack(lane, resource);
    }
}
