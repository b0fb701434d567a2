package io.quorumlock.redis;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.LockHolder;
import io.quorumlock.QuorumlockException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.LeaseTimes;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import io.quorumlock.internal.Waiters;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Reply;
import io.quorumlock.redis.client.Transport;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.function.BooleanSupplier;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The algorithm of one Redlock, and the context of the leases it grants. A grant, an extension, a
 * release or a query is one round: one command to every node at once over one borrowed lane, each
 * reply read as a vote ({@link Ballot#vote}) and counted in a {@link Ballot} until the outcome is
 * certain. Validity = start + TTL - drift, every time read from the one {@link Ticker}; the
 * arithmetic is {@link QuorumMath}'s, the bytes are the client's.
 */
final class Rounds {

    private static final Predicate<ServerAnswer.Kind> GRANTED = v -> v == ServerAnswer.Kind.GRANTED;
    /** On release, a node where the key is gone or is another owner's is as free as one that deleted it. */
    private static final Predicate<ServerAnswer.Kind> SETTLED =
            v -> v == ServerAnswer.Kind.GRANTED || v == ServerAnswer.Kind.HELD_BY_OTHER;

    private final Transport transport;
    private final List<String> names;
    private final Duration nodeTimeout;
    private final long nodeTimeoutNanos;
    private final long connectTimeoutNanos;
    private final double driftFactor;
    private final Ticker ticker;
    private final boolean restartGuard;

    private final LockEvents events;
    /** The threads of the leases' keep-alives. */
    private final Timers timers;
    /** The leases kept alive and not yet released nor lost, which {@link Redlock#close()} loses. */
    final Set<RedlockLease> keptAlive = ConcurrentHashMap.newKeySet();
    /** The longest TTL asked for so far, for the restart guard. */
    private final AtomicLong longestTtlNanos = new AtomicLong();
    /** Each node's configuration error, logged once rather than on every retry. */
    private final Misconfigurations misconfigurations;

    private volatile boolean closed;

    /** The threads waiting in {@link Redlock#acquire}, by resource: a release wakes the first in line. */
    final Waiters waiters = new Waiters();
    /** Releases by other clients, heard on the nodes while threads wait. */
    final Wakeups wakeups;
    /** The line of the waiters of every client on the nodes. */
    final Line line;

    /** A resource this lock released while other clients listened, and until when it leaves it to them. */
    private record Yield(String resource, long untilNanos) {}

    /** The last such release of each resource, by hash: a few bytes each, however many resources. */
    private final AtomicReferenceArray<Yield> yields = new AtomicReferenceArray<>(64);

    Rounds(
            Transport transport,
            List<String> names,
            Duration nodeTimeout,
            Duration connectTimeout,
            double driftFactor,
            Ticker ticker,
            boolean restartGuard,
            LockEvents events,
            Timers timers) {
        this.transport = transport;
        this.timers = timers;
        this.names = List.copyOf(names);
        this.nodeTimeout = nodeTimeout;
        this.nodeTimeoutNanos = nodeTimeout.toNanos();
        this.connectTimeoutNanos = connectTimeout.toNanos();
        this.driftFactor = driftFactor;
        this.ticker = ticker;
        this.restartGuard = restartGuard;
        this.events = events;
        this.misconfigurations = new Misconfigurations(names.size());
        this.wakeups = new Wakeups(transport, waiters, names.size());
        this.line = new Line(this, this.names);
    }

    /**
     * A grant or an extension: whether a quorum said yes with validity left, the validity from the
     * round's start (taken once the lane is borrowed, so waiting for one costs no validity), and
     * the evidence. {@code interrupted} if the thread was interrupted before the outcome was certain.
     */
    record Outcome(
            boolean held,
            int votes,
            long validityNanos,
            long validUntilNanos,
            List<ServerAnswer> answers,
            boolean misconfigured,
            boolean interrupted) {

        /** This outcome as not held, with {@code evidence} for its answers. */
        Outcome notHeld(List<ServerAnswer> evidence, boolean misconfigured) {
            return new Outcome(false, votes, validityNanos, validUntilNanos, evidence, misconfigured, interrupted);
        }
    }

    // ---- grant ---------------------------------------------------------------------------------

    /**
     * Asks every node to {@code SET resource token NX PX ttl}; fills {@code grants} with each node's
     * answer to come. Not held: releases at once wherever the key may have been set, late yes
     * votes included, and the evidence is read after that clean-up, so it is complete.
     */
    Outcome grant(String resource, String token, long ttlMillis, Grant[] grants) {
        try (Round round = new Round(resource, null)) {
            long start = ticker.nanos();
            Ballot ballot = new Ballot(
                    names, GRANTED, restartGuard(start, ttlMillis), transport::sameServer, misconfigurations);
            Command set = Command.setIfAbsent(resource, token, ttlMillis);
            try (Transport.Sends sends = round.lane.sends()) {
                for (int i = 0; i < grants.length; i++) {
                    grants[i] = new Grant(ballot, i, round.lane);
                    round.lane.link(i).send(set, grants[i]);
                }
            }
            boolean interrupted = !round.await(ballot, ballot::decided, start, true, waitLimit(start, ttlMillis));
            Outcome outcome = round.decide(ballot, start, ttlMillis, interrupted);
            if (outcome.held()) {
                return outcome;
            }
            release(round, resource, token, 0, grants, null); // nobody to wake: it was not granted
            return outcome.notHeld(ballot.answers(), ballot.misconfigured());
        }
    }

    // ---- extend --------------------------------------------------------------------------------

    /** One extension round of {@code lease}. */
    Outcome extend(RedlockLease lease, Duration ttl) {
        ensureOpen();
        // Slow nodes are waited for only while the lease keeps its loss notice, so that the work
        // can still be stopped in time if the round fails.
        long waitUntil = lease.validUntilNanos() - LeaseTimes.lossNoticeNanos(ttl.toNanos());
        Outcome outcome = extend(lease.resource(), lease.token(), ttl.toMillis(), lease.grants(), waitUntil);
        if (outcome.interrupted()) {
            Thread.currentThread().interrupt();
        }
        return outcome;
    }

    /**
     * Asks every node that may hold the key to extend it to {@code ttl} if it still holds {@code
     * token}. The round waits for nodes that answer slowly until {@code waitUntilNanos} at most,
     * and never less than the node timeout.
     */
    Outcome extend(String resource, String token, long ttlMillis, Grant[] grants, long waitUntilNanos) {
        try (Round round = new Round(resource, grants)) {
            long start = ticker.nanos();
            Ballot ballot = new Ballot(
                    names, GRANTED, restartGuard(start, ttlMillis), transport::sameServer, misconfigurations);
            Command extend = Command.script(Scripts.EXTEND_IF_EQUALS, resource, token, ttlMillis);
            round.afterGrants(grants, extend, ballot, false);
            long limit = Math.max(start + nodeTimeoutNanos, Math.min(waitUntilNanos, waitLimit(start, ttlMillis)));
            boolean interrupted = !round.await(ballot, ballot::decided, start, true, limit);
            return round.decide(ballot, start, ttlMillis, interrupted);
        }
    }

    /**
     * How long a lease can count on after an extension round to {@code ttl} that starts at {@code
     * startNanos} or later, whether its PEXPIRE reaches a node in time or not: to the start plus
     * the TTL less the drift allowance, as {@link #extend} counts it.
     */
    long extensionEndNanos(long startNanos, Duration ttl) {
        return startNanos + QuorumMath.validityNanos(ttl.toMillis() * 1_000_000, 0, driftFactor);
    }

    /**
     * How long a grant or extension that starts at {@code start} waits at most for nodes that
     * answer slowly: a third of the TTL (or the connect timeout, if longer), so that a grant keeps
     * most of its validity; and never past the end of its validity.
     */
    private long waitLimit(long start, long ttlMillis) {
        long ttlNanos = ttlMillis * 1_000_000;
        long validityEnd = start + QuorumMath.validityNanos(ttlNanos, 0, driftFactor);
        return Math.min(validityEnd, start + Math.max(ttlNanos / 3, connectTimeoutNanos));
    }

    // ---- release -------------------------------------------------------------------------------

    /** Releases {@code lease}; one lost or ended by {@link #close()} is left to its TTL. */
    void release(RedlockLease lease) {
        if (closed && lease.lost().isDone()) {
            return; // ended by close(), or lost before: its keys run out with their TTL
        }
        if (closed) {
            throw new IllegalStateException("the Redlock that granted the lease on '" + lease.resource()
                    + "' is closed: the lease was not released and stays taken until its TTL runs out;"
                    + " release leases before closing their lock");
        }
        boolean released;
        LongAccumulator listeners = new LongAccumulator(Math::max, 0);
        long start = ticker.nanos();
        try (Round round = new Round(null, lease.grants())) {
            // Tells the waiters of other clients, which listen on the nodes.
            released = release(round, lease.resource(), lease.token(), lease.waiter(), lease.grants(), listeners);
        }
        long heard = listeners.get(); // 0 on the usual release, with nobody waiting anywhere
        boolean others = heard > 0 && heard > (wakeups.heardOn(lease.resource()) > 0 ? 1 : 0);
        if (!others || !wakeups.heard(lease.resource())) {
            // The next in line in this process tries at once. Where other clients wait too, and
            // this one hears the release's message, the message says whose turn it is instead.
            wakeups.forgetTurn(lease.resource());
            waiters.wake(lease.resource());
        }
        if (others) {
            yields.set(
                    stripe(lease.resource()),
                    new Yield(lease.resource(), ticker.nanos() + QuorumMath.yieldNanos(ticker.nanos() - start)));
        }
        if (!released) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Deletes the key wherever it may hold the token; where a grant is still unanswered, the delete
     * goes right behind it on its connection, so a late yes is released too. Returns once a
     * majority of nodes is free again, or every node has answered, or the node timeout has passed;
     * stragglers finish later. False if interrupted.
     */
    boolean release(String resource, String token, Grant[] grants) {
        try (Round round = new Round(resource, grants)) {
            return release(round, resource, token, 0, grants, null);
        }
    }

    /**
     * A release round: with {@code listeners}, of a lease, by {@link Scripts#RELEASE}, which tells
     * the waiters and counts them; without, by {@link Scripts#DELETE_IF_EQUALS}, telling no one.
     */
    private boolean release(
            Round round, String resource, String token, long waiter, Grant[] grants, LongAccumulator listeners) {
        Ballot ballot = new Ballot(names, SETTLED);
        Command command = listeners == null
                ? Command.script(Scripts.DELETE_IF_EQUALS, resource, token)
                : waiter == 0
                        ? Command.script(Scripts.RELEASE, resource, token)
                        : Command.script(Scripts.RELEASE, resource, token, waiter);
        round.afterGrants(grants, command, ballot, true, listeners);
        // A release need not wait for a connection being opened: its delete goes behind the SET.
        return round.await(ballot, ballot::settled, ticker.nanos(), false, Long.MAX_VALUE);
    }

    /**
     * How long an acquire of {@code resource} leaves it to other clients before its first attempt:
     * what is left of the time after a release of it by this lock that other clients listened
     * for, at most once per release; 0 if there was none.
     */
    long yieldNanos(String resource) {
        int stripe = stripe(resource);
        Yield yield = yields.get(stripe);
        if (yield == null || !yield.resource().equals(resource) || !yields.compareAndSet(stripe, yield, null)) {
            return 0;
        }
        return Math.max(0, yield.untilNanos() - ticker.nanos());
    }

    private int stripe(String resource) {
        return resource.hashCode() & (yields.length() - 1);
    }

    // ---- query ---------------------------------------------------------------------------------

    /** One command to every node, not waited for: its replies are read and dropped later. */
    void tell(Command command) {
        try (Round round = new Round(null, null)) {
            for (int i = 0; i < names.size(); i++) {
                round.lane.link(i).send(command, (sent, reply, link) -> {});
            }
        }
    }

    /** One command to each of {@code nodes} at once; each reply, or its failure within the node timeout. */
    Reply[] query(int[] nodes, Command command) {
        try (Round round = new Round(null, null)) {
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
        Reply[] replies =
                query(java.util.stream.IntStream.range(0, names.size()).toArray(), Command.get(resource));
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
        Reply[] replies =
                query(java.util.stream.IntStream.range(0, names.size()).toArray(), get);
        java.util.Map<String, Integer> keys = new java.util.HashMap<>();
        int unknown = 0;
        String best = null;
        int bestCount = 0;
        for (int i = 0; i < replies.length; i++) {
            if (replies[i] instanceof Reply.Bulk key) {
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
        if (bestCount + unknown < quorum) {
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
        Reply[] replies =
                query(java.util.stream.IntStream.range(0, names.size()).toArray(), Command.pttl(resource));
        long[] pttl = new long[replies.length];
        for (int i = 0; i < pttl.length; i++) {
            pttl[i] = replies[i] instanceof Reply.Int ttl ? ttl.value() : -1;
        }
        return QuorumMath.quorumFreeInNanos(pttl);
    }

    // ---- the restart guard ---------------------------------------------------------------------

    /**
     * Which yes votes of a grant or extension round that starts at {@code roundStart} do not count:
     * with the restart guard on, those of nodes that may have started less than the longest TTL
     * asked for (this round's included) before the round.
     */
    private Ballot.Exclusion restartGuard(long roundStart, long ttlMillis) {
        if (!restartGuard) {
            return Ballot.Exclusion.NONE;
        }
        long longest = longestTtlNanos.accumulateAndGet(ttlMillis * 1_000_000, Math::max);
        return node -> QuorumMath.restartExclusion(transport.nodeStart(node), roundStart, longest);
    }

    /** For checkNodes(): why the restart guard keeps the node out of the vote now, or null. */
    String restartGuardFinding(int node) {
        long longest = longestTtlNanos.get();
        String why =
                restartGuard ? QuorumMath.restartExclusion(transport.nodeStart(node), ticker.nanos(), longest) : null;
        return why == null
                ? null
                : why + ": a node up for less than the longest TTL asked for (" + QuorumMath.seconds(longest, true)
                        + ") may have lost keys in a restart that are still valid elsewhere";
    }

    // ---- what the lock and its leases share ----------------------------------------------------

    Timers timers() {
        return timers;
    }

    /** The longest an extension round waits for a node: the connect timeout, at least the node timeout. */
    long roundNanos() {
        return connectTimeoutNanos;
    }

    Ticker ticker() {
        return ticker;
    }

    long nowNanos() {
        return ticker.nanos();
    }

    LockEvents events() {
        return events;
    }

    /** The TTL, if it is usable with the node timeout. */
    Duration checkTtl(Duration ttl) {
        String problem = QuorumMath.ttlProblem(ttl, nodeTimeout);
        if (problem != null) {
            throw new IllegalSettingException("ttl", problem);
        }
        return ttl;
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("this Redlock is closed: build a new one to lock again");
        }
    }

    /** Refuses every later call; a lease released after this is left to its TTL if it was ended. */
    void close() {
        closed = true;
    }

    /** How many configuration errors were logged so far: once per node and error. */
    int configurationWarnings() {
        return misconfigurations.warnings();
    }

    // ---- a round, and a node's answer to a grant -----------------------------------------------

    /**
     * A lane borrowed for one round on a resource (or none), or on the lane of the grants it
     * follows up; given back when closed.
     */
    private final class Round implements AutoCloseable {
        final Transport.Lane lane;
        /** The resource it was borrowed for; null if it follows up grants. */
        private final String resource;

        Round(String resource, Grant[] follows) {
            this.lane = transport.borrow(resource, follows == null ? null : follows[0].lane());
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
        boolean awaitReplies(
                BooleanSupplier done, IntPredicate missing, long start, boolean forConnecting, long limitNanos)
                throws InterruptedException {
            LongSupplier deadline = new LongSupplier() {
                private long current = Math.min(start + nodeTimeoutNanos, limitNanos);

                @Override
                public long getAsLong() {
                    if (ticker.nanos() < current) {
                        return current;
                    }
                    long latest = Long.MIN_VALUE;
                    for (int i = 0; i < names.size(); i++) {
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
            long until = (silentSince == Long.MAX_VALUE ? start : silentSince) + nodeTimeoutNanos;
            return forConnecting && link.connecting() ? Math.max(until, start + connectTimeoutNanos) : until;
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

        /**
         * Closes the ballot and counts its yes votes, then reads the clock: every vote counted
         * came before "now", and a yes that comes later is not counted (nor shown as granted).
         */
        Outcome decide(Ballot ballot, long start, long ttlMillis, boolean interrupted) {
            int yes = ballot.close();
            long now = ticker.nanos();
            long validity = QuorumMath.validityNanos(ttlMillis * 1_000_000, now - start, driftFactor);
            boolean held = !interrupted && QuorumMath.isHeld(yes, names.size(), validity);
            return new Outcome(
                    held, yes, validity, now + validity, ballot.answers(), ballot.misconfigured(), interrupted);
        }

        @Override
        public void close() {
            transport.giveBack(lane, resource);
        }
    }

    /**
     * One node's answer to a grant, which may come after the round was decided, and the link it was
     * sent on. A later request for a node whose answer is still owed goes behind the grant on that
     * same link, so that a delete never overtakes the SET it undoes, even on a frozen node.
     */
    static final class Grant implements Transport.ReplyHandler {

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
                Command command,
                Transport.Link current,
                Transport.ReplyHandler handler,
                Ballot round,
                boolean cleanUp) {
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
}
