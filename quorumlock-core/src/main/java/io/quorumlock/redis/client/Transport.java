package io.quorumlock.redis.client;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * How the lock reaches its nodes: lanes of connections, one connection per node in each lane. A
 * caller borrows a lane for one round, sends a command to each node, and waits on the lane until
 * it has the replies it needs. Commands on one link are answered in the order they were sent, so
 * a delete sent behind a pending SET on the same link always runs after that SET.
 */
public interface Transport extends AutoCloseable {

    /**
     * A lane for one round on {@code resource} (null for a round on no resource), at once: lanes
     * are shared by several callers' rounds, and the rounds on one resource under way at once go
     * to one lane, also while lanes are being added. A round that follows up a grant (an
     * extension, a release) gives the grant's lane as {@code follows} and gets that lane: the
     * grant's replies still owed are read where the round waits.
     */
    Lane borrow(String resource, Lane follows);

    /** Ends a round: {@code resource} is what it was borrowed for, or null if it followed a grant. */
    void giveBack(Lane lane, String resource);

    /**
     * What is known of the node's last start, as learnt on the connections to it. A node not heard
     * from yet counts as started now.
     */
    NodeStart nodeStart(int node);

    /**
     * Where node {@code node} was found, if something other than its address names it: the master
     * and the sentinel that named it, for a master that Sentinel manages.
     */
    default java.util.Optional<String> whereIs(int node) {
        return java.util.Optional.empty();
    }

    /** Whether entries {@code a} and {@code b} have answered with the same run_id: one server listed twice. */
    default boolean sameServer(int a, int b) {
        return false;
    }

    /**
     * Channels to listen to on every node, on connections of their own, each message handed to
     * {@code listener}; closed with the transport. Empty if this transport cannot subscribe.
     */
    default java.util.Optional<Subscriptions> subscriptions(Subscriptions.Listener listener) {
        return java.util.Optional.empty();
    }

    @Override
    void close();

    /**
     * One connection per node. Several threads may send on it and wait on it at once; a reply is
     * handed to its handler on whichever thread reads it.
     */
    interface Lane {
        Link link(int node);

        /**
         * Holds this lane's sending for the calling thread until the result is closed: the requests
         * a round sends to its nodes meanwhile are not interleaved with another round's on this
         * lane, so every node gets the rounds of the lane in one order, and two callers contending
         * for a resource on one client do not split its vote.
         */
        Sends sends();

        /**
         * Sends what was queued and handles replies until {@code done} is true or the deadline (on
         * the lock's ticker) passes; returns whether {@code done} became true. The deadline is
         * asked again whenever the one it gave has passed, after what arrived meanwhile was read:
         * it may move on while nodes answer.
         *
         * @throws InterruptedException if the thread is interrupted while waiting
         */
        boolean await(BooleanSupplier done, LongSupplier deadlineNanos) throws InterruptedException;

        /**
         * How many replicas of node {@code node}, as this lane reaches it, are known to be up and
         * linked to it; 0 where none are counted, -1 while they are counted but not yet (no
         * connection has read them).
         */
        default int replicasUp(int node) {
            return 0;
        }
    }

    /** Ends a round's sending: see {@link Lane#sends}. */
    interface Sends extends AutoCloseable {
        @Override
        void close();
    }

    /** A connection to one node. */
    interface Link {
        String node();

        /** The node's place in the configured order: {@code lane.link(index())} is this node's link. */
        int index();

        /**
         * Sends {@code command}, or answers it at once as not sent if the node has owed a reply
         * and answered nothing for the node timeout. {@code handler} gets exactly one reply,
         * possibly later and on another thread.
         */
        void send(Command command, ReplyHandler handler);

        /**
         * Sends {@code command} even to a node that is silent for now, behind what it owes: a
         * command that must follow one already sent here, or a delete that must reach the node
         * whenever it answers again.
         */
        void sendBehind(Command command, ReplyHandler handler);

        /** An id of the connection this link's requests go on now; another once it is replaced. */
        default long connection() {
            return 0;
        }

        /**
         * Sends {@code command} behind what the node owes, on connection {@code connection} only
         * (as {@link #connection} named it): if that connection was closed or replaced since, it
         * is answered at once as not sent. A {@code WAIT} counts the replicas that acknowledged
         * its own connection's writes: on a new connection it would count the replicas of none.
         */
        default void sendOn(long connection, Command command, ReplyHandler handler) {
            sendBehind(command, handler);
        }

        /** True while the connection is being opened: TCP connect, TLS handshake, AUTH or SELECT. */
        default boolean connecting() {
            return false;
        }

        /**
         * Since when (on the lock's ticker) the node has owed a reply on this connection without
         * answering anything: the later of its last reply and the oldest request still owed.
         * {@link Long#MAX_VALUE} if it owes nothing. A node is judged frozen by this silence, not
         * by how long one reply takes behind others.
         */
        long silentSince();
    }

    /** Receives one reply: a RESP value, or a {@link Reply.Failure} when there is none. */
    @FunctionalInterface
    interface ReplyHandler {
        void onReply(Command command, Reply reply, Link link);
    }
}
