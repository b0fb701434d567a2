package io.quorumlock.redis;

import io.quorumlock.ServerAnswer;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import io.quorumlock.redis.client.Transport;
import java.util.function.BooleanSupplier;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;

/**
 * One round of {@link Rounds}: a lane borrowed for it on a resource (or none), or on the lane of
 * the grant it follows up, given back when closed; the ballot its replies are counted in, each
 * read as a vote; the commands that follow up a grant; and the wait for the nodes' replies, each
 * node waited for while it answers. The round is itself the handler of its replies, what its
 * wait asks whether it is done, and its deadline: one object, however many nodes. A grant's
 * round goes with its lease: each node's answer to the grant decides how a later round reaches
 * it ({@link #followUp}).
 */
final class Round implements AutoCloseable, Transport.ReplyHandler, BooleanSupplier, LongSupplier {
    /** The rounds it is one of: their transport, clock and timeouts. */
    private final Rounds rounds;

    final Transport.Lane lane;
    /** The resource it was borrowed for; null if it follows up a grant. */
    private final String resource;
    /** Whether it borrowed its lane, and gives it back when closed. */
    private final boolean borrowed;

    /** Where its replies are counted: set before its first command goes out, read by whoever reads a reply. */
    private volatile Ballot ballot;
    /** Whether its replies say how many listeners a release told ({@link Scripts#RELEASE}). */
    private volatile boolean countsListeners;
    /** The largest number of listeners a node reported. Guarded by this. */
    private long listeners;

    // The wait under way, set by the round's thread before it waits.
    /** Null: the ballot says when the round is done ({@link #settles}). */
    private BooleanSupplier done;

    private boolean settles;
    /** Null: the nodes the ballot has no reply from. */
    private IntPredicate missing;

    private long start;
    private boolean forConnecting;
    private long limitNanos;
    private long deadline;

    Round(Rounds rounds, String resource, Round follows) {
        this.rounds = rounds;
        this.lane = rounds.transport.borrow(resource, follows == null ? null : follows.lane);
        this.resource = follows == null ? resource : null;
        this.borrowed = true;
    }

    /** A round on the lane of {@code under}, a round still under way, which gives the lane back. */
    Round(Round under) {
        this.rounds = under.rounds;
        this.lane = under.lane;
        this.resource = null;
        this.borrowed = false;
    }

    /** Counts the replies in {@code ballot}; with {@code listeners}, a release's replies also count its listeners. */
    void counts(Ballot ballot, boolean listeners) {
        this.countsListeners = listeners;
        this.ballot = ballot;
    }

    Ballot ballot() {
        return ballot;
    }

    /** The largest number of listeners a node reported to the release. */
    synchronized long listeners() {
        return listeners;
    }

    @Override
    public void onReply(Command command, Reply reply, Transport.Link link) {
        if (countsListeners && reply instanceof Reply.Int deleted && deleted.value() > 1) {
            synchronized (this) {
                listeners = Math.max(listeners, deleted.value() - 1);
            }
            reply = Reply.Int.ONE;
        }
        Ballot counted = ballot;
        int node = link.index();
        counted.record(node, counted.vote(node, command, reply));
    }

    /**
     * Handles replies until the ballot is decided, or with {@code settles} settled (see {@link
     * #awaitReplies}), expiring the ballot if the wait ended without it; false if interrupted.
     */
    boolean await(boolean settles, long start, boolean forConnecting, long limitNanos) {
        this.settles = settles;
        try {
            if (!awaitReplies(null, null, start, forConnecting, limitNanos)) {
                ballot.expire();
            }
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    /**
     * Handles replies until {@code done} (null: the ballot's); or until every node still {@code
     * missing} (null: not answered in the ballot) has owed a reply without answering anything for
     * the node timeout, or {@code limitNanos} has passed. A node that answers, also to other
     * callers, is waited for: only its silence counts, so neither a connection's set-up nor a deep
     * pipeline makes it look frozen. With {@code forConnecting}, a node whose connection is still
     * being opened (by this round or another sharing it) gets up to the connect timeout from the
     * round's start. Returns whether done.
     */
    boolean awaitReplies(BooleanSupplier done, IntPredicate missing, long start, boolean forConnecting, long limitNanos)
            throws InterruptedException {
        this.done = done;
        this.missing = missing;
        this.start = start;
        this.forConnecting = forConnecting;
        this.limitNanos = limitNanos;
        this.deadline = Math.min(start + rounds.nodeTimeoutNanos, limitNanos);
        return lane.await(this, this);
    }

    /** Whether the wait is done; asked by whoever reads the lane's replies. */
    @Override
    public boolean getAsBoolean() {
        if (done != null) {
            return done.getAsBoolean();
        }
        return settles ? ballot.settled() : ballot.decided();
    }

    /** The wait's deadline, moved on while the nodes waited for answer; asked on the round's thread. */
    @Override
    public long getAsLong() {
        if (rounds.ticker.nanos() < deadline) {
            return deadline;
        }
        long latest = Long.MIN_VALUE;
        for (int i = 0; i < rounds.names.size(); i++) {
            if (missing != null ? missing.test(i) : !ballot.answered(i)) {
                latest = Math.max(latest, waitsFor(i));
            }
        }
        deadline = Math.min(latest, limitNanos);
        return deadline;
    }

    /** Until when the round waits for {@code node}: the node timeout from the start of its silence. */
    private long waitsFor(int node) {
        Transport.Link link = lane.link(node);
        long silentSince = link.silentSince();
        long until = (silentSince == Long.MAX_VALUE ? start : silentSince) + rounds.nodeTimeoutNanos;
        return forConnecting && link.connecting() ? Math.max(until, start + rounds.connectTimeoutNanos) : until;
    }

    private static boolean neverHeld(ServerAnswer answered) {
        return answered.kind() == ServerAnswer.Kind.HELD_BY_OTHER
                || answered.kind() == ServerAnswer.Kind.UNREACHABLE
                || answered.kind() == ServerAnswer.Kind.MISCONFIGURED;
    }

    /**
     * Sends {@code command} for {@code round}, a round that follows up this grant, to each node
     * that may hold the key (see {@link #followUp}), and {@code toTheOthers}, if not null, to each
     * node that answered that it did not take it.
     */
    void followUps(Command command, Round round, boolean cleanUp, Command toTheOthers) {
        followUps(command, round, cleanUp, toTheOthers, ReplicaSync.NONE);
    }

    /**
     * As {@link #followUps(Command, Round, boolean, Command)}, each {@code command} followed on its
     * connection by {@code sync}'s WAIT, and counted once that answers.
     */
    void followUps(Command command, Round round, boolean cleanUp, Command toTheOthers, ReplicaSync sync) {
        try (Transport.Sends sends = round.lane.sends()) {
            for (int i = 0; i < rounds.names.size(); i++) {
                followUp(i, command, round, cleanUp, toTheOthers, sync);
            }
        }
    }

    /**
     * Sends a follow-up command of {@code round} to {@code node}, after this grant round: on the
     * round's link if the grant was answered (or records the node as never having held the key,
     * and sends it {@code toTheOthers} if any, not waited for), else right behind the grant on its
     * own link, so that it never overtakes the grant. A {@code cleanUp} (a delete) is sent also to a node that is silent for now,
     * behind what it owes: a key is never left behind for want of a command.
     */
    private void followUp(
            int node, Command command, Round round, boolean cleanUp, Command toTheOthers, ReplicaSync sync) {
        ServerAnswer answered = ballot.answer(node);
        Transport.Lane sentOn = answered == null ? lane : round.lane;
        Transport.ReplyHandler handler =
                sync.on() ? sync.handler(round, rounds.ticker, () -> sentOn.replicasUp(node)) : round;
        if (answered == null) {
            lane.link(node).sendBehind(command, handler);
            if (sync.upfront()) {
                lane.link(node).sendBehind(sync.command(), handler);
            }
        } else if (neverHeld(answered)) {
            round.ballot.record(node, new ServerAnswer(answered.server(), answered.kind(), "never held the key"));
            if (toTheOthers != null) {
                round.lane.link(node).send(toTheOthers, Rounds.IGNORED);
            }
        } else if (cleanUp) {
            round.lane.link(node).sendBehind(command, round);
        } else {
            round.lane.link(node).send(command, handler);
            if (sync.upfront()) {
                round.lane.link(node).send(sync.command(), handler);
            }
        }
    }

    @Override
    public void close() {
        if (borrowed) {
            rounds.transport.giveBack(lane, resource);
        }
    }
}
