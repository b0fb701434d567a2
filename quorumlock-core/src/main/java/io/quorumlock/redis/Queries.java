package io.quorumlock.redis;

import io.quorumlock.LockHolder;
import io.quorumlock.QuorumlockException;
import io.quorumlock.internal.Ticker;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import io.quorumlock.redis.client.Transport;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntPredicate;

/**
 * The queries of a Redlock's {@link Rounds}: one command to some or every node in one round, its
 * replies read as they are rather than as votes. Who holds a resource, whether one owner holds it,
 * when its keys run out; and the commands of the waiters' line and of the node checks.
 */
final class Queries {

    private final Rounds rounds;
    private final Transport transport;
    private final List<String> names;
    private final Ticker ticker;

    Queries(Rounds rounds) {
        this.rounds = rounds;
        this.transport = rounds.transport;
        this.names = rounds.names;
        this.ticker = rounds.ticker;
    }

    /**
     * One command about {@code resource} to every node, not waited for: its replies are read and
     * dropped later. It goes on the lane of the resource's rounds, to the master of its slot on a
     * Redis Cluster.
     */
    void tell(String resource, Command command) {
        try (Round round = new Round(rounds, resource, null)) {
            for (int i = 0; i < names.size(); i++) {
                round.lane.link(i).send(command, (sent, reply, link) -> {});
            }
        }
    }

    /** One command to each of {@code nodes} at once; each reply, or its failure within the node timeout. */
    Reply[] query(int[] nodes, Command command) {
        return query(null, nodes, command);
    }

    /**
     * As {@link #query(int[], Command)}, for a command about {@code resource}: on the lane of the
     * resource's rounds, to the master of its slot on a Redis Cluster (not redirected there).
     */
    Reply[] query(String resource, int[] nodes, Command command) {
        try (Round round = new Round(rounds, resource, null)) {
            long start = ticker.nanos();
            AtomicReferenceArray<Reply> replies = new AtomicReferenceArray<>(names.size());
            AtomicInteger answered = new AtomicInteger();
            boolean[] asked = new boolean[names.size()];
            for (int node : nodes) {
                asked[node] = true;
                round.lane.link(node).send(command, (sent, value, link) -> {
                    replies.set(node, value);
                    answered.incrementAndGet();
                });
            }
            IntPredicate missing = node -> asked[node] && replies.get(node) == null;
            try {
                round.awaitReplies(() -> answered.get() == nodes.length, missing, start, true, Long.MAX_VALUE);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Reply[] result = new Reply[nodes.length];
            for (int i = 0; i < nodes.length; i++) {
                Reply reply = replies.get(nodes[i]);
                result[i] = reply != null
                        ? reply
                        : new Reply.Failure(Reply.Kind.TIMED_OUT, "no reply within the node timeout");
            }
            return result;
        }
    }

    /**
     * Whether one owner holds {@code resource} on a quorum of nodes now ({@code GET} on every
     * node): after a refusal in which some nodes said yes, it tells a holder, whose release will
     * come, from clients that split the vote, which nobody will release.
     */
    boolean heldByOne(String resource) {
        Reply[] replies = query(
                resource, java.util.stream.IntStream.range(0, names.size()).toArray(), Command.get(resource));
        java.util.Map<String, Integer> keys = new java.util.HashMap<>();
        for (Reply reply : replies) {
            if (reply instanceof Reply.Bulk token
                    && keys.merge(token.text(), 1, Integer::sum) >= QuorumMath.quorum(names.size())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Who holds {@code resource} now ({@code GET} on every node in one round): the owner whose key
     * (token and holder name) is on a quorum of nodes, or empty if no owner has one and the nodes
     * that did not answer could not give one a quorum. An entry that is {@linkplain
     * Transport#sameServer the same server} as another counts once.
     *
     * @throws QuorumlockException if the nodes that did not answer could make or break a quorum
     */
    Optional<LockHolder> holder(String resource) {
        Command get = Command.get(resource);
        Reply[] replies = query(
                resource, java.util.stream.IntStream.range(0, names.size()).toArray(), get);
        java.util.Map<String, Integer> keys = new java.util.HashMap<>();
        int unknown = 0;
        int otherType = 0;
        String best = null;
        int bestCount = 0;
        for (int i = 0; i < replies.length; i++) {
            if (Holder.otherType(replies[i])) {
                // another library's key, such as a hash: held, by no holder quorumlock can name
                otherType += sameServerBefore(replies, i) ? 0 : 1;
            } else if (replies[i] instanceof Reply.Bulk key) {
                if (!sameServerBefore(replies, i)) {
                    int count = keys.merge(key.text(), 1, Integer::sum);
                    if (count > bestCount) {
                        best = key.text();
                        bestCount = count;
                    }
                }
            } else if (replies[i] != Reply.Nil.NIL) {
                unknown++;
            }
        }
        int quorum = QuorumMath.quorum(names.size());
        if (bestCount >= quorum) {
            String name = Holder.of(new Reply.Bulk(best));
            return Optional.of(new LockHolder(name == null ? "" : name, OptionalLong.empty()));
        }
        if (otherType >= quorum) {
            return Optional.of(new LockHolder("", OptionalLong.empty()));
        }
        if (Math.max(bestCount, otherType) + unknown < quorum) {
            return Optional.empty();
        }
        List<String> answers = new java.util.ArrayList<>(replies.length);
        for (int i = 0; i < replies.length; i++) {
            answers.add(answer(get, i, replies[i]));
        }
        throw new QuorumlockException(String.format(
                "could not tell who holds '%s': %d of %d nodes did not answer, enough to make or break a quorum of"
                        + " %d for an owner; %s. Bring the nodes back or try again",
                resource, unknown, names.size(), quorum, String.join("; ", answers)));
    }

    /** Whether an entry before {@code node} is the same server and gave the same key. */
    private boolean sameServerBefore(Reply[] replies, int node) {
        for (int other = 0; other < node; other++) {
            if (replies[other].equals(replies[node]) && transport.sameServer(other, node)) {
                return true;
            }
        }
        return false;
    }

    /** What a node's reply to a read of the key says, for messages: never the token. */
    private String answer(Command get, int node, Reply reply) {
        if (reply == Reply.Nil.NIL) {
            return names.get(node) + ": free";
        }
        if (Holder.otherType(reply)) {
            return names.get(node) + ": held by another library (a key of another type than quorumlock's string)";
        }
        if (reply instanceof Reply.Bulk) {
            String name = Holder.of(reply);
            return names.get(node) + ": "
                    + (name == null ? "held by a key not written by quorumlock" : "holder " + name);
        }
        return Ballot.vote(get, names.get(node), reply).toString();
    }

    /**
     * How long until the keys of {@code resource} are gone from a quorum of nodes by their TTLs
     * ({@code PTTL} on every node): when a waiter tries again if no release is heard. {@link
     * Long#MAX_VALUE} if a quorum did not answer with a TTL.
     */
    long quorumFreeInNanos(String resource) {
        Reply[] replies = query(
                resource, java.util.stream.IntStream.range(0, names.size()).toArray(), Command.pttl(resource));
        long[] pttl = new long[replies.length];
        for (int i = 0; i < pttl.length; i++) {
            pttl[i] = replies[i] instanceof Reply.Int ttl ? ttl.value() : -1;
        }
        return QuorumMath.quorumFreeInNanos(pttl);
    }
}
