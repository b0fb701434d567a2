package io.quorumlock.redis;

import io.quorumlock.ServerAnswer;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import io.quorumlock.redis.client.Transport;

/**
 * One node's answer to a grant, which may come after the round was decided, and the link it was
 * sent on. A later request for a node whose answer is still owed goes behind the grant on that
 * same link, so that a delete never overtakes the SET it undoes, even on a frozen node.
 */
final class Grant implements Transport.ReplyHandler {

    private final Ballot ballot;
    private final int node;
    private final Transport.Lane lane;
    private final Transport.Link link;
    private volatile ServerAnswer outcome;

    Grant(Ballot ballot, int node, Transport.Lane lane) {
        this.ballot = ballot;
        this.node = node;
        this.lane = lane;
        this.link = lane.link(node);
    }

    /** The lane the grant was sent on: its follow-ups' rounds wait there. */
    Transport.Lane lane() {
        return lane;
    }

    @Override
    public void onReply(Command command, Reply reply, Transport.Link from) {
        ServerAnswer answer = Ballot.vote(command, from.node(), reply);
        outcome = answer;
        ballot.record(node, answer);
    }

    /**
     * Sends a follow-up command for this node: on {@code current} if the grant was answered (or
     * records the node as never having held the key, without a command), else right behind the
     * grant on its own link. A {@code cleanUp} (a delete) is sent also to a node that is silent for
     * now, behind what it owes: a key is never left behind for want of a command.
     */
    void followUp(
            Command command, Transport.Link current, Transport.ReplyHandler handler, Ballot round, boolean cleanUp) {
        ServerAnswer answered = outcome;
        if (answered == null) {
            link.sendBehind(command, handler);
        } else if (answered.kind() == ServerAnswer.Kind.HELD_BY_OTHER
                || answered.kind() == ServerAnswer.Kind.UNREACHABLE
                || answered.kind() == ServerAnswer.Kind.MISCONFIGURED) {
            round.record(node, new ServerAnswer(answered.server(), answered.kind(), "never held the key"));
        } else if (cleanUp) {
            current.sendBehind(command, handler);
        } else {
            current.send(command, handler);
        }
    }
}
