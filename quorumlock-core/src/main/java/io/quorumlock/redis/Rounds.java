package io.quorumlock.redis;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.LeaseTimes;
import io.quorumlock.internal.LocalLine;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.internal.ReleaseGate;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Transport;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Predicate;

/**
 * The algorithm of one Redlock, and the context of the leases it grants. A grant, an extension or a
 * release is one {@link Round}: one command to every node at once over one borrowed lane, each
 * reply read as a vote ({@link Ballot#vote}) and counted in a {@link Ballot} until the outcome is
 * certain. Validity = start + TTL - drift, every time read from the one {@link Ticker}; the
 * arithmetic is {@link QuorumMath}'s, the votes kept out are the {@link RestartGuard}'s, the bytes
 * are the client's. Reads that are not votes are {@link Queries}.
 */
final class Rounds {

    private static final Predicate<ServerAnswer.Kind> GRANTED = v -> v == ServerAnswer.Kind.GRANTED;
    /** On release, a node where the key is gone or is another owner's is as free as one that deleted it. */
    private static final Predicate<ServerAnswer.Kind> SETTLED =
            v -> v == ServerAnswer.Kind.GRANTED || v == ServerAnswer.Kind.HELD_BY_OTHER;

    final Transport transport;
    final List<String> names;
    /** The nodes as every ballot counts them. */
    private final Ballot.Nodes voters;
    /** Which entries are one server, as the transport has learnt. */
    private final Ballot.SameServer sameServer;
    /** What every TTL must be longer than: {@link QuorumMath#ttlFloor} of the node timeout. */
    private final Duration ttlFloor;

    final long nodeTimeoutNanos;
    final long connectTimeoutNanos;
    private final double driftFactor;
    final Ticker ticker;
    /** Which nodes' yes votes do not count for now; its findings for {@link Redlock#checkNodes()}. */
    final RestartGuard restartGuard;

    private final LockEvents events;
    /** The threads of the leases' keep-alives. */
    private final Timers timers;
    /** The leases kept alive and not yet released nor lost, which {@link Redlock#close()} loses. */
    final Set<RedlockLease> keptAlive = ConcurrentHashMap.newKeySet();
    /** The releases under way, which {@link Redlock#close()} lets go out first. */
    final ReleaseGate releases;
    /** Each node's configuration error, logged once rather than on every retry. */
    private final Misconfigurations misconfigurations;
    /** The replicas that must acknowledge a grant or an extension before it counts. */
    final ReplicaSync replicaSync;

    private volatile boolean closed;

    /** The threads waiting in {@link Redlock#acquire}, by resource: a release wakes the first in line. */
    final LocalLine waiters = new LocalLine();
    /** Releases by other clients, heard on the nodes while threads wait. */
    final ReleaseChannels channels;
    /** What is read or told on the nodes outside the votes: holders, TTLs, the line's commands. */
    final Queries queries;
    /** The line of the waiters of every client on the nodes. */
    final NodeLine line;

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
            ReplicaSync replicaSync,
            LockEvents events,
            Timers timers) {
        this.transport = transport;
        this.replicaSync = replicaSync;
        this.timers = timers;
        this.names = List.copyOf(names);
        this.voters = new Ballot.Nodes(this.names);
        this.sameServer = transport::sameServer;
        this.ttlFloor = QuorumMath.ttlFloor(nodeTimeout);
        this.nodeTimeoutNanos = nodeTimeout.toNanos();
        this.connectTimeoutNanos = connectTimeout.toNanos();
        this.driftFactor = driftFactor;
        this.ticker = ticker;
        this.releases = new ReleaseGate(ticker);
        this.restartGuard = new RestartGuard(restartGuard, transport, ticker);
        this.events = events;
        this.misconfigurations = new Misconfigurations(names.size());
        this.channels = new ReleaseChannels(transport, waiters, names.size());
        this.queries = new Queries(this);
        this.line = new NodeLine(queries, this.names);
    }

    /**
     * A grant or an extension: whether a quorum said yes with validity left, the validity from the
     * round's start (taken once the lane is borrowed, so waiting for one costs no validity), and
     * the evidence. {@code interrupted} if the thread was interrupted before the outcome was
     * certain. {@code round} is the round, which a grant's follow-ups need ({@link
     * Round#followUps}); {@code evidence} the answers read when it was decided, null if it held.
     */
    record Outcome(
            boolean held,
            int votes,
            long validityNanos,
            long validUntilNanos,
            Round round,
            List<ServerAnswer> evidence,
            boolean misconfigured,
            boolean interrupted) {

        /** Every node's answer: the evidence, or for an outcome that held, as its ballot has them now. */
        List<ServerAnswer> answers() {
            return evidence != null ? evidence : round.ballot().answers();
        }

        /** This outcome as not held, with {@code evidence} for its answers. */
        Outcome notHeld(List<ServerAnswer> evidence, boolean misconfigured) {
            return new Outcome(
                    false, votes, validityNanos, validUntilNanos, round, evidence, misconfigured, interrupted);
        }
    }

    // ---- grant ---------------------------------------------------------------------------------

    /**
     * Asks every node to {@code SET resource token NX PX ttl}; the outcome's round has each node's
     * answer to come. Not held: releases at once wherever the key may have been set, late yes
     * votes included, and the evidence is read after that clean-up, so it is complete.
     */
    Outcome grant(String resource, String token, long ttlMillis) {
        try (Round round = new Round(this, resource, null)) {
            long start = ticker.nanos();
            Ballot ballot = new Ballot(
                    voters, GRANTED, restartGuard.exclusion(start, ttlMillis), sameServer, misconfigurations);
            round.counts(ballot, false);
            Command set = Command.setIfAbsent(resource, token, ttlMillis);
            ReplicaSync sync = replicaSync.now(round.lane.replicasUp(0)); // a single node when on
            try (Transport.Sends sends = round.lane.sends()) {
                for (int i = 0; i < names.size(); i++) {
                    if (sync.on()) {
                        int node = i;
                        Transport.ReplyHandler synced = sync.handler(round, ticker, () -> round.lane.replicasUp(node));
                        round.lane.link(i).send(set, synced);
                        if (sync.upfront()) {
                            round.lane.link(i).send(sync.command(), synced);
                        }
                    } else {
                        round.lane.link(i).send(set, round);
                    }
                }
            }
            boolean interrupted = !round.await(false, start, true, waitLimit(start, ttlMillis));
            Outcome outcome = decide(round, start, ttlMillis, interrupted);
            if (outcome.held()) {
                return outcome;
            }
            try (Round cleanUp = new Round(round)) { // nobody to wake: it was not granted
                release(cleanUp, Command.script(Scripts.DELETE_IF_EQUALS, resource, token), round, false, null);
            }
            // The clean-up settles on a majority of deletes (nodes the restart guard kept out of the
            // vote, say): a node whose late answer may still name the holder is waited for, within the
            // node timeout of its silence since the grant's start (a silent node is not waited for),
            // so that a refusal by a holder is not told as one by the guard.
            if (!interrupted && ballot.holderUnknown()) {
                try {
                    round.awaitReplies(() -> !ballot.holderUnknown(), null, start, false, Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
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
        Outcome outcome = extend(lease.resource(), lease.token(), ttl.toMillis(), lease.grant(), waitUntil);
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
    Outcome extend(String resource, String token, long ttlMillis, Round grant, long waitUntilNanos) {
        try (Round round = new Round(this, resource, grant)) {
            long start = ticker.nanos();
            round.counts(
                    new Ballot(
                            voters, GRANTED, restartGuard.exclusion(start, ttlMillis), sameServer, misconfigurations),
                    false);
            Command extend = Command.script(Scripts.EXTEND_IF_EQUALS, resource, token, ttlMillis);
            grant.followUps(extend, round, false, null, replicaSync.now(round.lane.replicasUp(0)));
            long limit = Math.max(start + nodeTimeoutNanos, Math.min(waitUntilNanos, waitLimit(start, ttlMillis)));
            boolean interrupted = !round.await(false, start, true, limit);
            return decide(round, start, ttlMillis, interrupted);
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

    /**
     * Closes the ballot and counts its yes votes, then reads the clock: every vote counted
     * came before "now", and a yes that comes later is not counted (nor shown as granted).
     */
    private Outcome decide(Round round, long start, long ttlMillis, boolean interrupted) {
        Ballot ballot = round.ballot();
        int yes = ballot.close();
        long now = ticker.nanos();
        long validity = QuorumMath.validityNanos(ttlMillis * 1_000_000, now - start, driftFactor);
        boolean held = !interrupted && QuorumMath.isHeld(yes, names.size(), validity);
        return new Outcome(
                held,
                yes,
                validity,
                now + validity,
                round,
                held ? null : ballot.answers(),
                ballot.misconfigured(),
                interrupted);
    }

    // ---- release -------------------------------------------------------------------------------

    /**
     * Releases {@code lease}, {@code beforeClose} if its release began before the lock's {@link
     * Redlock#close()}, which waits for it; one released after, if lost or ended by the close, is
     * left to its TTL.
     */
    void release(RedlockLease lease, boolean beforeClose) {
        if (!beforeClose && lease.lost().isDone()) {
            return; // ended by close(), or lost before: its keys run out with their TTL
        }
        if (!beforeClose) {
            throw new IllegalStateException("the Redlock that granted the lease on '" + lease.resource()
                    + "' is closed: the lease was not released and stays taken until its TTL runs out;"
                    + " release leases before closing their lock");
        }
        boolean released;
        long heard; // 0 on the usual release, with nobody waiting anywhere
        long start = ticker.nanos();
        try (Round round = new Round(this, null, lease.grant())) {
            // Tells the waiters of other clients, which listen on the nodes.
            Command command = lease.waiter() == 0
                    ? Command.script(Scripts.RELEASE, lease.resource(), lease.token())
                    : Command.script(Scripts.RELEASE, lease.resource(), lease.token(), lease.waiter());
            // A lease taken by a waiter leaves the line with its release; on the nodes that
            // refused its grant, which the release does not reach, by a leave of its own.
            Command leave = lease.waiter() == 0
                    ? null
                    : Command.script(Scripts.LEAVE, lease.resource(), Long.toString(lease.waiter()));
            released = release(round, command, lease.grant(), true, leave);
            heard = round.listeners();
        }
        boolean others = heard > 0 && heard > (channels.heardOn(lease.resource()) > 0 ? 1 : 0);
        if (!others || !channels.heard(lease.resource())) {
            // The next in line in this process tries at once. Where other clients wait too, and
            // this one hears the release's message, the message says whose turn it is instead.
            channels.forgetTurn(lease.resource());
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

    /** For a request whose reply nobody needs: read and dropped when the lane is next polled. */
    static final Transport.ReplyHandler IGNORED = (command, reply, link) -> {};

    /**
     * Deletes the key wherever it may hold the token; where a grant is still unanswered, the delete
     * goes right behind it on its connection, so a late yes is released too. Returns once a
     * majority of nodes is free again, or every node has answered, or the node timeout has passed;
     * stragglers finish later. False if interrupted.
     */
    boolean release(String resource, String token, Round grant) {
        try (Round round = new Round(this, null, grant)) {
            return release(round, Command.script(Scripts.DELETE_IF_EQUALS, resource, token), grant, false, null);
        }
    }

    /**
     * A release round: with {@code listeners}, of a lease, by {@link Scripts#RELEASE}, which tells
     * the waiters and counts them; without, by {@link Scripts#DELETE_IF_EQUALS}, telling no one.
     */
    private boolean release(Round round, Command command, Round grant, boolean listeners, Command leave) {
        round.counts(new Ballot(voters, SETTLED), listeners);
        grant.followUps(command, round, true, leave);
        // A release need not wait for a connection being opened: its delete goes behind the SET.
        return round.await(true, ticker.nanos(), false, Long.MAX_VALUE);
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
        String problem = QuorumMath.ttlProblemOver(ttl, ttlFloor);
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
}
