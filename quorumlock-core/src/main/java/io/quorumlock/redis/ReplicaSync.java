package io.quorumlock.redis;

import io.quorumlock.internal.Ticker;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import io.quorumlock.redis.client.Transport;
import java.util.function.IntSupplier;

/**
 * How many replicas must acknowledge a grant or an extension ({@code WAIT replicas millis}, sent
 * right behind it on the same connection) before it counts, and how long they are waited for: a
 * {@code WAIT} that finds too few is sent again until {@code patienceMillis} have passed since the
 * write was sent, so that a replica that acknowledges late (a busy host) costs time, not the
 * grant. {@link #NONE}: not waited for; {@link #up}: as many as are up and linked to the master
 * when the write is sent, as its sentinels, its cluster or its {@code ROLE} count them; where they
 * are not counted yet (a lock just built, its first connection not made), as many as are counted
 * once the write is answered, behind the connection's {@code ROLE} or the cluster's layout, so that
 * a count not known is never taken for none.
 *
 * @param millis the timeout of one {@code WAIT}: shorter than the node timeout, so that the node
 *     is not judged silent while it waits
 * @param patienceMillis how long after the write the replicas are waited for in all
 */
record ReplicaSync(int replicas, long millis, long patienceMillis) {

    static final ReplicaSync NONE = new ReplicaSync(0, 0, 0);

    /** {@link #replicas} of a sync whose count is read when the write is answered. */
    private static final int WHEN_WRITTEN = -2;

    /** How long replicas are waited for by default, at least: time for a busy host to answer. */
    static final long DEFAULT_PATIENCE_MILLIS = 250;

    /** As many replicas as are up when the write is sent, each WAIT {@code millis} long, by default. */
    static ReplicaSync up(long millis) {
        return new ReplicaSync(-1, millis, Math.max(millis, DEFAULT_PATIENCE_MILLIS));
    }

    /** {@code replicas}, within {@code millis} in all: one WAIT. */
    static ReplicaSync fixed(int replicas, long millis) {
        return new ReplicaSync(replicas, millis, millis);
    }

    boolean on() {
        return replicas > 0 || replicas == WHEN_WRITTEN;
    }

    /** Whether the WAIT is sent right behind the write: how many replicas to wait for is known. */
    boolean upfront() {
        return replicas > 0;
    }

    /**
     * This, or for {@link #up}, the replicas {@code up} now ({@link #NONE} if none is; counted when
     * the write is answered if {@code up} is negative, not known yet).
     */
    ReplicaSync now(int up) {
        if (replicas >= 0) {
            return this;
        }
        if (up < 0) {
            return new ReplicaSync(WHEN_WRITTEN, millis, patienceMillis);
        }
        return up > 0 ? new ReplicaSync(up, millis, patienceMillis) : NONE;
    }

    /** The WAIT sent behind a write, if {@link #upfront}. */
    Command command() {
        return Command.waitForReplicas(replicas, millis);
    }

    /**
     * The handler of a write and of the WAIT behind it, for {@code round}: a refusal or a failure of
     * the write is handed on at once; a write that took effect is handed on once the WAIT answers,
     * as it was if enough replicas acknowledged it, else as an error that names how many did. A
     * write so refused still holds the key on the node: the round's follow-ups delete it there.
     * Where the count is not known yet, the WAIT is sent once the write took effect, for the
     * replicas {@code up} counts then, or if it still cannot tell, those a {@code ROLE} asked on
     * the write's connection lists. Whatever counts the replicas of the write goes on the
     * connection that carried it ({@link Transport.Link#sendOn}): one dropped since fails the
     * write's count, and the grant with it.
     */
    Transport.ReplyHandler handler(Transport.ReplyHandler round, Ticker ticker, IntSupplier up) {
        return new Synced(round, ticker, up);
    }

    private final class Synced implements Transport.ReplyHandler {
        private final Transport.ReplyHandler round;
        private final Ticker ticker;
        private final IntSupplier up;
        /** When the write was sent, or a moment before. */
        private final long sentNanos;
        /** How many replicas must acknowledge the write: {@link #WHEN_WRITTEN} until counted. */
        private int wanted;
        /** The connection that carried the write: what counts its replicas goes on it only. */
        private long connection;
        /** The write that took effect, waiting for the WAIT's answer; null otherwise. */
        private Command written;

        private Reply answer;
        private boolean handedOn;

        Synced(Transport.ReplyHandler round, Ticker ticker, IntSupplier up) {
            this.round = round;
            this.ticker = ticker;
            this.up = up;
            this.sentNanos = ticker.nanos();
            this.wanted = replicas;
        }

        @Override
        public void onReply(Command command, Reply reply, Transport.Link link) {
            if (command.kind() == Command.Kind.ROLE) {
                // asked behind the write, its count unknown when it was answered
                if (handedOn || written == null) {
                    return;
                }
                if (reply instanceof Reply.Failure || (reply instanceof Reply.Array && !Command.saysMaster(reply))) {
                    // no answer (the connection dropped), or the node is no master now: the
                    // write's replicas cannot be counted, and its effect stays unknown
                    handedOn = true;
                    round.onReply(
                            written,
                            reply instanceof Reply.Failure
                                    ? reply
                                    : new Reply.Error("READONLY the node answers ROLE as a replica now:"
                                            + " the write's replicas cannot be counted"),
                            link);
                    return;
                }
                wanted = Command.replicasListed(reply); // a refusal (an ACL without ROLE) counts none
                waitFor(link);
                return;
            }
            if (command.kind() != Command.Kind.WAIT) {
                if (reply.equals(Reply.Simple.OK) || reply.equals(Reply.Int.ONE)) {
                    written = command;
                    answer = reply;
                    connection = link.connection();
                    if (wanted == WHEN_WRITTEN) {
                        // the connection's ROLE, or the cluster's layout, was most likely read by now
                        wanted = up.getAsInt();
                        if (wanted < 0) {
                            link.sendOn(connection, Command.role(), this);
                        } else {
                            waitFor(link);
                        }
                    }
                } else {
                    handedOn = true;
                    round.onReply(command, reply, link);
                }
                return;
            }
            if (handedOn || written == null) {
                return;
            }
            if (reply instanceof Reply.Int acknowledged
                    && acknowledged.value() < wanted
                    && ticker.nanos() - sentNanos < patienceMillis * 1_000_000) {
                link.sendOn(connection, command, this); // a replica may acknowledge late: asked again
                return;
            }
            handedOn = true;
            Reply synced;
            if (reply instanceof Reply.Int acknowledged) {
                synced = acknowledged.value() >= wanted
                        ? answer
                        : new Reply.Error("NOREPLICAS " + acknowledged.value() + " of " + wanted
                                + " replica(s) acknowledged the write within " + patienceMillis
                                + " ms: a failover now could lose it");
            } else {
                synced = reply; // WAIT refused (an ACL), or no answer: the write's effect stays unknown
            }
            round.onReply(written, synced, link);
        }

        /** Once the replicas to wait for are counted: the WAIT, or the write's answer if there are none. */
        private void waitFor(Transport.Link link) {
            if (wanted <= 0) {
                handedOn = true;
                round.onReply(written, answer, link);
            } else {
                link.sendOn(connection, Command.waitForReplicas(wanted, millis), this);
            }
        }
    }
}
