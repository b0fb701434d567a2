package io.quorumlock.redis;

import io.quorumlock.internal.Ticker;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import io.quorumlock.redis.client.Transport;

/**
 * How many replicas must acknowledge a grant or an extension ({@code WAIT replicas millis}, sent
 * right behind it on the same connection) before it counts, and how long they are waited for: a
 * {@code WAIT} that finds too few is sent again until {@code patienceMillis} have passed since the
 * write was sent, so that a replica that acknowledges late (a busy host) costs time, not the
 * grant. {@link #NONE}: not waited for; {@link #up}: as many as are up and linked to the master
 * when the write is sent, as its sentinels, its cluster or its {@code ROLE} count them.
 *
 * @param millis the timeout of one {@code WAIT}: shorter than the node timeout, so that the node
 *     is not judged silent while it waits
 * @param patienceMillis how long after the write the replicas are waited for in all
 */
record ReplicaSync(int replicas, long millis, long patienceMillis) {

    static final ReplicaSync NONE = new ReplicaSync(0, 0, 0);

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
        return replicas > 0;
    }

    /** This, or for {@link #up}, the replicas {@code up} now ({@link #NONE} if none is). */
    ReplicaSync now(int up) {
        return replicas >= 0 ? this : up > 0 ? new ReplicaSync(up, millis, patienceMillis) : NONE;
    }

    /** The WAIT sent behind a write. */
    Command command() {
        return Command.waitForReplicas(replicas, millis);
    }

    /**
     * The handler of a write and of the WAIT behind it, for {@code round}: a refusal or a failure of
     * the write is handed on at once; a write that took effect is handed on once the WAIT answers,
     * as it was if enough replicas acknowledged it, else as an error that names how many did. A
     * write so refused still holds the key on the node: the round's follow-ups delete it there.
     */
    Transport.ReplyHandler handler(Transport.ReplyHandler round, Ticker ticker) {
        return new Synced(round, ticker);
    }

    private final class Synced implements Transport.ReplyHandler {
        private final Transport.ReplyHandler round;
        private final Ticker ticker;
        /** When the write was sent, or a moment before. */
        private final long sentNanos;
        /** The write that took effect, waiting for the WAIT's answer; null otherwise. */
        private Command written;

        private Reply answer;
        private boolean handedOn;

        Synced(Transport.ReplyHandler round, Ticker ticker) {
            this.round = round;
            this.ticker = ticker;
            this.sentNanos = ticker.nanos();
        }

        @Override
        public void onReply(Command command, Reply reply, Transport.Link link) {
            if (command.kind() != Command.Kind.WAIT) {
                if (reply.equals(Reply.Simple.OK) || reply.equals(Reply.Int.ONE)) {
                    written = command;
                    answer = reply;
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
                    && acknowledged.value() < replicas
                    && ticker.nanos() - sentNanos < patienceMillis * 1_000_000) {
                link.sendBehind(command, this); // a replica may acknowledge late: asked again
                return;
            }
            handedOn = true;
            Reply synced;
            if (reply instanceof Reply.Int acknowledged) {
                synced = acknowledged.value() >= replicas
                        ? answer
                        : new Reply.Error("NOREPLICAS " + acknowledged.value() + " of " + replicas
                                + " replica(s) acknowledged the write within " + patienceMillis
                                + " ms: a failover now could lose it");
            } else {
                synced = reply; // WAIT refused (an ACL), or no answer: the write's effect stays unknown
            }
            round.onReply(written, synced, link);
        }
    }
}
