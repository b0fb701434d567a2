package io.quorumlock.redis;

import io.quorumlock.ServerAnswer;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.NodeErrors;
import io.quorumlock.redis.client.Reply;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Counts the replies of one round (grant, extension or release) as they arrive, each read as a
 * vote ({@link #vote}); {@link QuorumMath#tally} says when the outcome is certain. A yes that the round's {@link Exclusion}
 * rules out is recorded as {@link ServerAnswer.Kind#EXCLUDED} and counts as a no, and so is a yes of an entry
 * that is {@linkplain SameServer the same server} as an entry whose yes was counted: a server listed
 * twice votes once. Replies may be recorded from other threads, also after the round was decided.
 */
final class Ballot {

    /** Why a node's yes does not count in this round, or null if it counts. */
    @FunctionalInterface
    interface Exclusion {
        Exclusion NONE = node -> null;

        String why(int node);
    }

    /** Whether two entries are one server (they answered with the same run_id). */
    @FunctionalInterface
    interface SameServer {
        SameServer NONE = (a, b) -> false;

        boolean test(int a, int b);
    }

    /**
     * The nodes that vote, by name, and the answers every round of a lock shares: a yes, a "held
     * by another owner", and those of a node that did not answer, so that counting them allocates
     * nothing.
     */
    static final class Nodes {
        private final List<String> names;
        private final ServerAnswer[] granted;
        private final ServerAnswer[] held;
        private final ServerAnswer[] pending;
        private final ServerAnswer[] timedOut;
        private final ServerAnswer[] lateAfterWait;
        private final ServerAnswer[] lateAfterOutcome;

        Nodes(List<String> names) {
            this.names = List.copyOf(names);
            granted = each(ServerAnswer.Kind.GRANTED, "");
            held = each(ServerAnswer.Kind.HELD_BY_OTHER, "");
            pending = each(ServerAnswer.Kind.PENDING, "");
            timedOut = each(ServerAnswer.Kind.TIMED_OUT, "no reply within the node timeout");
            lateAfterWait = each(
                    ServerAnswer.Kind.TIMED_OUT, "granted after the wait for replies had ended, too late to count");
            lateAfterOutcome = each(
                    ServerAnswer.Kind.PENDING, "granted, too late to count: the outcome was decided before its reply");
        }

        /** The answer of each node with {@code kind} and {@code detail}. */
        private ServerAnswer[] each(ServerAnswer.Kind kind, String detail) {
            ServerAnswer[] each = new ServerAnswer[names.size()];
            for (int i = 0; i < each.length; i++) {
                each[i] = new ServerAnswer(names.get(i), kind, detail);
            }
            return each;
        }

        int size() {
            return names.size();
        }
    }

    private final Nodes nodes;
    private final Predicate<ServerAnswer.Kind> counts;
    private final Exclusion exclusion;
    private final SameServer sameServer;
    /** Where configuration errors are logged; null where they are not. */
    private final Misconfigurations misconfigurations;

    private final ServerAnswer[] answers;
    private int yes;
    private int no;
    private boolean expired;
    /** Decided: later replies are shown, not counted. */
    private boolean closed;

    private boolean misconfigured;

    /** {@code counts} says which votes count toward the quorum. */
    Ballot(List<String> nodes, Predicate<ServerAnswer.Kind> counts) {
        this(new Nodes(nodes), counts);
    }

    /** {@code counts} says which votes count toward the quorum. */
    Ballot(Nodes nodes, Predicate<ServerAnswer.Kind> counts) {
        this(nodes, counts, Exclusion.NONE, SameServer.NONE, null);
    }

    /**
     * {@code counts} says which votes count toward the quorum, {@code exclusion} which yes votes do
     * not, {@code sameServer} which entries are one server; configuration errors go to {@code
     * misconfigurations}, late ones included.
     */
    Ballot(
            Nodes nodes,
            Predicate<ServerAnswer.Kind> counts,
            Exclusion exclusion,
            SameServer sameServer,
            Misconfigurations misconfigurations) {
        this.nodes = nodes;
        this.counts = counts;
        this.exclusion = exclusion;
        this.sameServer = sameServer;
        this.misconfigurations = misconfigurations;
        this.answers = new ServerAnswer[nodes.size()];
    }

    void record(int node, ServerAnswer outcome) {
        if (outcome.kind() == ServerAnswer.Kind.MISCONFIGURED && misconfigurations != null) {
            misconfigurations.seen(node, outcome);
        }
        String excluded = outcome.kind() == ServerAnswer.Kind.GRANTED ? exclusion.why(node) : null;
        count(
                node,
                excluded == null ? outcome : new ServerAnswer(outcome.server(), ServerAnswer.Kind.EXCLUDED, excluded));
    }

    private synchronized void count(int node, ServerAnswer outcome) {
        if (answers[node] != null) {
            return;
        }
        if (closed) {
            // Shown in the evidence, never counted: a late yes is not a grant (a failed grant releases it).
            answers[node] = outcome.kind() == ServerAnswer.Kind.GRANTED ? lateYes(node) : outcome;
            misconfigured |= outcome.kind() == ServerAnswer.Kind.MISCONFIGURED;
            return;
        }
        if (outcome.kind() == ServerAnswer.Kind.GRANTED) {
            for (int other = 0; other < answers.length; other++) {
                if (answers[other] != null
                        && answers[other].kind() == ServerAnswer.Kind.GRANTED
                        && sameServer.test(node, other)) {
                    outcome = new ServerAnswer(
                            outcome.server(),
                            ServerAnswer.Kind.EXCLUDED,
                            "the same server as " + nodes.names.get(other)
                                    + " (the same run_id): its vote counts once");
                    break;
                }
            }
        }
        answers[node] = outcome;
        misconfigured |= outcome.kind() == ServerAnswer.Kind.MISCONFIGURED;
        if (counts.test(outcome.kind())) {
            yes++;
        } else {
            no++;
        }
    }

    /**
     * A yes that came after the count was closed: past the wait for replies, it timed out; else the
     * outcome was certain before it came, without it (the other nodes had refused, or were down).
     */
    private ServerAnswer lateYes(int node) {
        return expired ? nodes.lateAfterWait[node] : nodes.lateAfterOutcome[node];
    }

    /** A majority counted, or too few nodes left to reach one. */
    synchronized boolean decided() {
        return tally() != QuorumMath.Tally.OPEN;
    }

    /** A majority counted, or every node answered: clean-up may stop waiting. */
    synchronized boolean settled() {
        return tally() == QuorumMath.Tally.QUORUM || yes + no == answers.length;
    }

    /** The wait for this round ran into its deadline: nodes that have not answered timed out. */
    synchronized void expire() {
        expired = true;
    }

    /**
     * Ends the counting and returns the yes votes: a reply recorded later shows in {@link
     * #answers()}, a yes there as {@link ServerAnswer.Kind#PENDING} (or {@link
     * ServerAnswer.Kind#TIMED_OUT} once the wait had expired) that says it was granted too late to
     * count, and changes no count.
     */
    synchronized int close() {
        closed = true;
        return yes;
    }

    /**
     * Whether the evidence still lacks a holder: no node has named one, and some node has not
     * answered (its late answer may name one).
     */
    synchronized boolean holderUnknown() {
        boolean pending = false;
        for (ServerAnswer answer : answers) {
            if (answer == null) {
                pending = true;
            } else if (answer.kind() == ServerAnswer.Kind.HELD_BY_OTHER) {
                return false;
            }
        }
        return pending;
    }

    /** Whether {@code node}'s reply has been counted. */
    synchronized boolean answered(int node) {
        return answers[node] != null;
    }

    /** {@code node}'s answer as recorded, or null if it has not answered. */
    synchronized ServerAnswer answer(int node) {
        return answers[node];
    }

    /** Some node refused with a configuration error. */
    synchronized boolean misconfigured() {
        return misconfigured;
    }

    synchronized int yes() {
        return yes;
    }

    synchronized QuorumMath.Tally tally() {
        return QuorumMath.tally(yes, no, answers.length);
    }

    /**
     * Every node's outcome so far. A node that has not answered is {@link ServerAnswer.Kind#TIMED_OUT} if the
     * wait ran into its deadline, else {@link ServerAnswer.Kind#PENDING}: the outcome was certain without it.
     */
    synchronized List<ServerAnswer> answers() {
        List<ServerAnswer> list = new ArrayList<>(answers.length);
        for (int i = 0; i < answers.length; i++) {
            list.add(answers[i] != null ? answers[i] : expired ? nodes.timedOut[i] : nodes.pending[i]);
        }
        return list;
    }

    /**
     * The vote a reply means: {@code +OK} to SET, or 1 to a script, is yes; nil to SET, or 0 to a
     * script, is "held by another owner"; an error reply is an error or a configuration error; a
     * reply of any other shape is no answer to the command, so an error too.
     */
    static ServerAnswer vote(Command command, String node, Reply reply) {
        ServerAnswer.Kind plain = plainVote(command, reply);
        if (plain != null) {
            return new ServerAnswer(node, plain, "");
        }
        if (reply instanceof Reply.Failure failure) {
            return new ServerAnswer(node, vote(failure.kind()), failure.detail());
        }
        if (reply instanceof Reply.Error error) {
            String misconfiguration = NodeErrors.misconfiguration(error.message());
            return misconfiguration != null
                    ? new ServerAnswer(node, ServerAnswer.Kind.MISCONFIGURED, misconfiguration)
                    : new ServerAnswer(node, ServerAnswer.Kind.ERROR, NodeErrors.shortened(error.message()));
        }
        return new ServerAnswer(
                node,
                ServerAnswer.Kind.ERROR,
                "protocol error: " + Reply.shape(reply) + " is no reply to " + command.name());
    }

    /** As {@link #vote(Command, String, Reply)} by {@code node}, a yes or a "held" as the nodes share them. */
    ServerAnswer vote(int node, Command command, Reply reply) {
        ServerAnswer.Kind plain = plainVote(command, reply);
        if (plain == ServerAnswer.Kind.GRANTED) {
            return nodes.granted[node];
        }
        if (plain == ServerAnswer.Kind.HELD_BY_OTHER) {
            return nodes.held[node];
        }
        return vote(command, nodes.names.get(node), reply);
    }

    /** A yes ({@code +OK} to SET, 1 to a script) or a "held" (nil to SET, 0 to a script); null for any other reply. */
    private static ServerAnswer.Kind plainVote(Command command, Reply reply) {
        boolean set = command.kind() == Command.Kind.SET_IF_ABSENT;
        if (set ? reply.equals(Reply.Simple.OK) : reply.equals(Reply.Int.ONE)) {
            return ServerAnswer.Kind.GRANTED;
        }
        if (set ? reply == Reply.Nil.NIL : reply.equals(Reply.Int.ZERO)) {
            return ServerAnswer.Kind.HELD_BY_OTHER;
        }
        return null;
    }

    /**
     * The vote of each kind of failure. A map built with the class rather than a switch, whose
     * lookup class is loaded at the first failure: a virtual thread that waits for another one
     * loading it pins its carrier, in the middle of a round.
     */
    private static final Map<Reply.Kind, ServerAnswer.Kind> FAILURE_VOTES = new EnumMap<>(Map.of(
            Reply.Kind.NOT_SENT, ServerAnswer.Kind.UNREACHABLE,
            Reply.Kind.TIMED_OUT, ServerAnswer.Kind.TIMED_OUT,
            Reply.Kind.BROKEN, ServerAnswer.Kind.ERROR,
            Reply.Kind.PROTOCOL, ServerAnswer.Kind.ERROR,
            Reply.Kind.MISCONFIGURED, ServerAnswer.Kind.MISCONFIGURED));

    static ServerAnswer.Kind vote(Reply.Kind kind) {
        return FAILURE_VOTES.get(kind);
    }
}
