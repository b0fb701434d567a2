package io.quorumlock.redis;

import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import io.quorumlock.redis.client.Transport;

/**
 * How many replicas must acknowledge a grant or an extension ({@code WAIT replicas millis}, sent
 * right behind it on the same connection) before it counts, and how long they are waited for.
 * {@link #NONE}: not waited for; {@link #up}: as many as are up and linked to the master when the
 * write is sent, as its sentinels count them.
 */
record ReplicaSync(int replicas, long millis) {

    static final ReplicaSync NONE = new ReplicaSync(0, 0);

    /** As many replicas as are up when the write is sent. */
    static ReplicaSync up(long millis) {
        return new ReplicaSync(-1, millis);
    }

    boolean on() {
        return replicas > 0;
    }

    /** This, or for {@link #up}, the replicas {@code up} now ({@link #NONE} if none is). */
    ReplicaSync now(int up) {
        return replicas >= 0 ? this : up > 0 ? new ReplicaSync(up, millis) : NONE;
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
    Transport.ReplyHandler handler(Transport.ReplyHandler round) {
        return new Synced(round);
    }

    private final class Synced implements Transport.ReplyHandler {
        private final Transport.ReplyHandler round;
        /** The write that took effect, waiting for the WAIT's answer; null otherwise. */
        private Command written;

        private Reply answer;
        private boolean handedOn;

        Synced(Transport.ReplyHandler round) {
            this.round = round;
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
            handedOn = true;
            Reply synced;
            if (reply instanceof Reply.Int acknowledged) {
                synced = acknowledged.value() >= replicas
                        ? answer
                        : new Reply.Error("NOREPLICAS " + acknowledged.value() + " of " + replicas
                                + " replica(s) acknowledged the write within " + millis
                                + " ms: a failover now could lose it");
            } else {
                synced = reply; // WAIT refused (an ACL), or no answer: the write's effect stays unknown
            }
            round.onReply(written, synced, link);
        }
    }
}
