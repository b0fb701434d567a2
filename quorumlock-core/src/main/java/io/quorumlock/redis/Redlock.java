package io.quorumlock.redis;

import io.quorumlock.DistributedLock;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LeasedSection;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.LockHolder;
import io.quorumlock.LockListener;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.AsyncAcquireLoop;
import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.CriticalSections;
import io.quorumlock.internal.LeaseTimes;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import io.quorumlock.internal.WaitsWithoutThread;
import io.quorumlock.redis.RedlockAttempts.Attempt;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock over one Redis node or a quorum of N independent Redis nodes (Redlock).
 *
 * <p>With one node this is the classic efficiency lock: {@code SET key token NX PX ttl}, released
 * by a compare-and-delete script. With N nodes (3 or 5 are usual) a grant needs a majority,
 * N/2 + 1, and survives the loss of the others. The nodes must be independent masters: not
 * replicas, not members of one Redis Cluster ({@link #checkNodes()} finds such mistakes).
 *
 * <p>What it guarantees: mutual exclusion only while processes do not pause longer than their
 * lease, clocks do not jump, and a node that restarts without fsync'd persistence stays out
 * for a TTL, which the {@linkplain RedlockBuilder#restartGuard(boolean) restart guard} sees to for the
 * TTLs of this client. Use it to avoid duplicate work. Where a second holder would corrupt data, use a
 * fenced lock and let the storage reject stale writes.
 *
 * <pre>{@code
 * try (Redlock redlock = Redlock.builder()
 *         .node("redis://10.0.0.1:6379").node("redis://10.0.0.2:6379").node("redis://10.0.0.3:6379")
 *         .build()) {
 *     try (Lease lease = redlock.acquire("report:daily", Duration.ofSeconds(30), Duration.ofSeconds(5))) {
 *         sendReport();
 *     }
 * }
 * }</pre>
 *
 * <p>Instances are thread-safe; share one per set of nodes and close it on shutdown.
 */
public final class Redlock implements DistributedLock<Lease>, Clocked, WaitsWithoutThread<Lease> {

    private static final Logger log = LoggerFactory.getLogger(Redlock.class);

    /** At most this many extension rounds of kept-alive leases wait on the nodes at once. */
    private static final int KEEP_ALIVE_WORKERS = 4;

    private final Transport transport;
    /** The algorithm, and the context of the leases. */
    private final Rounds rounds;
    /** Each attempt: a token, the grant round, the lease if granted. */
    private final RedlockAttempts attempts;

    private final List<String> names;
    private final Duration nodeTimeout;
    private final RetryPolicy retry;
    /** The longest sleep of a waiter that listens for releases: one that went unheard costs at most this. */
    private final long recheckNanos;

    private final long connectTimeoutNanos;
    private final Ticker ticker;

    private final LockEvents events;
    /** The threads that keep leases alive. */
    private final Timers timers;

    Redlock(
            Transport transport,
            List<String> names,
            Duration nodeTimeout,
            Duration connectTimeout,
            double driftFactor,
            RetryPolicy retry,
            Duration recheck,
            Ticker ticker,
            boolean restartGuard,
            ReplicaSync replicaSync,
            String holder,
            LockListener listener,
            Timers timers) {
        this.recheckNanos = recheck.toNanos();
        this.connectTimeoutNanos = connectTimeout.toNanos();
        this.transport = transport;
        this.events = LockEvents.of("redis", listener);
        this.names = List.copyOf(names);
        this.nodeTimeout = nodeTimeout;
        this.retry = retry;
        this.ticker = ticker;
        this.timers = timers != null ? timers : Timers.threads("redlock", KEEP_ALIVE_WORKERS);
        this.rounds = new Rounds(
                transport,
                this.names,
                nodeTimeout,
                connectTimeout,
                driftFactor,
                ticker,
                restartGuard,
                replicaSync,
                events,
                this.timers);
        this.attempts = new RedlockAttempts(rounds, this.names.size(), holder);
    }

    /** Starts the configuration of a lock. */
    public static RedlockBuilder builder() {
        return new RedlockBuilder();
    }

    /** The lock's clock: every validity and deadline of the lock counts on it. */
    @Override
    public Ticker ticker() {
        return ticker;
    }

    /** The nodes, as {@code redis://host:port[/db]} without credentials, in configured order. */
    public List<String> nodes() {
        return names;
    }

    /** How many threads wait in {@link #acquire} for {@code resource} after a refusal. */
    int waiting(String resource) {
        return rounds.waiters.waiting(checkResource(resource));
    }

    /** How many yes votes a grant needs: N/2 + 1. */
    public int quorum() {
        return QuorumMath.quorum(names.size());
    }

    /**
     * Makes one attempt to lock {@code resource} for {@code ttl}.
     *
     * @return the lease, or empty if another owner holds it: some node named a holder, and the
     *     nodes that could vote were a quorum (the attempt then released whatever it had taken)
     * @throws LockUnavailableException if the nodes could not decide: fewer than a quorum of them
     *     answered (down, refusing connections, not answering within the node timeout), or the
     *     votes came with no validity left; with every node's answer, as {@link #acquire} gives it
     * @throws IllegalArgumentException if the resource is empty or the TTL unusable
     * @throws LockConfigurationException if it was not granted and a node refused with a
     *     configuration error (a wrong password, a replica)
     * @throws IllegalStateException if this lock is closed
     */
    @Override
    public Optional<Lease> tryAcquire(String resource, Duration ttl) {
        ensureOpen();
        // Not through AcquireLoop.once, as the other locks do: its attempt object and supplier
        // cost about 50 bytes per cycle on this, the bench's hot path (1,399 against 1,346 B/op).
        String sent = checkResource(resource);
        long start = ticker.nanos();
        Attempt attempt = attempts.attempt(sent, checkTtl(ttl), 0);
        if (attempt.lease().isEmpty() && attempt.misconfigured()) {
            LockConfigurationException e = new LockConfigurationException(sent, 1, attempt.answers());
            if (events.on()) {
                events.error(sent, ticker.nanos() - start, e);
            }
            throw e;
        }
        if (attempt.lease().isPresent()) {
            if (events.on()) {
                events.acquired(sent, ticker.nanos() - start, attempt.votes(), names.size());
            }
            return attempt.lease();
        }
        long took = ticker.nanos() - start;
        boolean busy = LockUnavailableException.busy(attempt.answers(), quorum());
        if (events.on()) {
            events.refused(sent, took, busy);
        }
        if (!busy) {
            ensureOpen(); // a round cut short by close() says so
            throw new LockUnavailableException(
                    sent,
                    Duration.ofNanos(took),
                    1,
                    attempt.votes(),
                    quorum(),
                    attempts.withHolders(sent, attempt.answers()));
        }
        return Optional.empty();
    }

    /**
     * Locks {@code resource} for {@code ttl}, retrying with jittered backoff until {@code maxWait}
     * has passed. A {@code maxWait} of zero makes exactly one attempt. The threads of this lock
     * waiting for one resource take turns in the order they came: the first in line retries with
     * the backoff, or at once when a lease of this lock on the resource is released, and the
     * others wait without sending anything.
     *
     * @throws LockUnavailableException if no attempt succeeded in time, with the votes of the last
     *     one, each {@code held by another owner} naming the holder where it could be read. After a
     *     refusal by the restart guard ({@link LockUnavailableException#restartGuard()}) the next
     *     attempt comes once the guard lets enough votes in, and none if {@code maxWait} ends first
     * @throws LockConfigurationException at once, without waiting further, if an attempt was not
     *     granted and a node refused with a configuration error (a wrong password, a replica)
     * @throws QuorumlockException if the thread was interrupted while waiting (the interrupt flag stays set)
     * @throws IllegalStateException if this lock is closed
     */
    @Override
    public Lease acquire(String resource, Duration ttl, Duration maxWait) {
        ensureOpen();
        String sent = checkResource(resource);
        checkTtl(ttl);
        Settings.maxWait(maxWait);
        try (ReleaseWait wait = releaseWait(sent)) {
            wait.yieldTo(rounds.yieldNanos(sent), maxWait);
            return AcquireLoop.acquire(
                    sent, maxWait, wait, ticker, events, (number, remainingNanos) -> attempt(sent, ttl, wait, number));
        }
    }

    /**
     * As {@link #acquire}, holding no thread while it waits: the attempts run on the threads that
     * the asynchronous acquires of this process share, and the pauses between them end on a timer
     * or at a release heard. Cancelling the future gives the wait up (the waiter leaves the line on
     * the nodes); a lease granted after the cancel is released. {@link #acquireAsync} takes its
     * leases with this.
     */
    @Override
    public CompletableFuture<Lease> acquireWithoutThread(String resource, Duration ttl, Duration maxWait) {
        ensureOpen();
        String sent = checkResource(resource);
        checkTtl(ttl);
        Settings.maxWait(maxWait);
        ReleaseWait wait = releaseWait(sent);
        ThreadlessPause pause = new ThreadlessPause(wait);
        long yield = rounds.yieldNanos(sent);
        boolean yields = ReleaseWait.yields(yield, maxWait);
        CompletableFuture<Lease> lease = AsyncAcquireLoop.acquireAsync(
                sent,
                maxWait,
                yields ? yield : 0,
                pause,
                ticker,
                events,
                (number, remainingNanos) -> {
                    if (number == 1 && yields) {
                        wait.yielded();
                    }
                    return attempt(sent, ttl, wait, number);
                },
                Lease::release,
                wait::close);
        lease.whenComplete((granted, failure) -> pause.cancel()); // however it ended: no pause goes on
        return lease;
    }

    /** The pauses of one acquire. A first subscription may take a while on a busy machine: up to a second. */
    private ReleaseWait releaseWait(String sent) {
        return new ReleaseWait(rounds, sent, retry, recheckNanos, Math.max(connectTimeoutNanos, 1_000_000_000L));
    }

    /** Attempt {@code number} of an acquire that pauses with {@code wait}. */
    private AcquireLoop.Attempt<Lease> attempt(String sent, Duration ttl, ReleaseWait wait, int number) {
        Attempt attempt = attempts.attempt(sent, ttl, wait.id());
        if (attempt.lease().isPresent()) {
            wait.granted();
            return AcquireLoop.Attempt.granted(attempt.lease().get(), attempt.votes(), names.size());
        }
        if (attempt.misconfigured()) {
            throw new LockConfigurationException(sent, number, attempt.answers());
        }
        boolean busy = LockUnavailableException.busy(attempt.answers(), quorum());
        long guard = rounds.restartGuard.refusalNanos(attempt.answers(), attempt.votes(), quorum());
        if (guard >= 0) {
            wait.refusedByRestartGuard(guard);
        } else {
            wait.refused(
                    !busy
                            ? ReleaseWait.Refusal.OTHER
                            : attempt.votes() == 0 ? ReleaseWait.Refusal.HOLDER : ReleaseWait.Refusal.CONTEST);
        }
        return AcquireLoop.Attempt.outvoted(
                attempt.votes(),
                quorum(),
                busy,
                () -> attempts.withHolders(sent, attempt.answers()),
                guard >= 0 ? Optional.of(Duration.ofNanos(guard)) : Optional.empty());
    }

    /**
     * Runs {@code work} while holding the lock, and releases it afterwards. The lease engine extends the
     * lease whenever two thirds of the TTL are left, so the work may take longer than the TTL;
     * a failed extension is retried after a short backoff as long as a retry can end with a tenth
     * of the TTL still left. When none can, when an extension throws, or when this lock is
     * closed, the lease is lost: the thread running the work is interrupted (with about a tenth
     * of the TTL left to stop in, after failed extensions), and the call ends with a {@link
     * LeaseLostException} whatever the work returned, because another holder may enter the
     * critical section.
     *
     * @throws LockUnavailableException if the lock could not be acquired within {@code maxWait}
     * @throws LeaseLostException if the lease was lost while the work ran (the work's own
     *     exception, if any, is attached as suppressed)
     * @throws X what the work throws, when the lease held throughout
     */
    @Override
    public <T, X extends Exception> T withLease(
            String resource, Duration ttl, Duration maxWait, LeasedSection<Lease, T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        ensureOpen();
        Lease lease = acquire(resource, ttl, maxWait);
        // Its release stops the keep-alive.
        return CriticalSections.run(lease, keepAlive(lease, ttl), () -> work.run(lease));
    }

    /**
     * Keeps a lease of this lock alive outside {@link #withLock}, for work that is not a Java call
     * (a child process, a job driven by callbacks): the lease engine extends the lease to {@code ttl}
     * whenever two thirds of the TTL are left of its remaining validity (at once if less are left
     * when this is called), until the lease is released, and retries a failed extension as {@link
     * #withLock} does. A lease whose validity already ran out is lost at once. Its rounds and the
     * lease's own {@link Lease#extend} calls take turns, one at a time. When no retry can end with
     * a tenth of the TTL left, when an extension throws, or when this lock is closed, the lease is
     * lost: it is no longer {@linkplain Lease#isValid() valid}, and the returned future completes
     * with the evidence; the work should then stop, within that tenth of the TTL, since another
     * holder may enter. The future never completes if the lease is released first. {@code
     * CriticalSections.run(lease, keepAlive(lease, ttl), work)} is what {@code withLock} does.
     *
     * @param lease a lease granted by this lock, not yet released
     * @param ttl the TTL of each extension, usually the TTL of the grant
     * @return completes when the lease is lost, as {@link io.quorumlock.FencedLease#lost()} does
     * @throws IllegalArgumentException if the lease was not granted by this lock or the TTL is unusable
     * @throws IllegalStateException if the lease was released or is already kept alive
     */
    @Override
    public CompletableFuture<LeaseLostException> keepAlive(Lease lease, Duration ttl) {
        ensureOpen();
        if (!(lease instanceof RedlockLease own) || !own.grantedBy(rounds)) {
            throw new IllegalSettingException("lease", "the lease was not granted by this Redlock: " + lease);
        }
        checkTtl(ttl);
        own.keepAlive(ttl);
        return own.lost();
    }

    /**
     * How much validity a lease kept alive by this lock ({@link #withLock}, {@link #keepAlive}) has
     * left when the keep-alive gives it up as lost: the time the work has to stop in before another
     * client can be granted the lock. A tenth of the TTL.
     */
    @Override
    public Duration lossNotice(Duration ttl) {
        return Duration.ofNanos(LeaseTimes.lossNoticeNanos(checkTtl(ttl).toNanos()));
    }

    /**
     * Who holds {@code resource} now: reads its key on every node in one round (one {@code GET}
     * each, waiting for a node as a grant does, up to the node timeout of silence) and returns the
     * owner whose key is on a quorum of nodes, named as its lock's {@link RedlockBuilder#holder(String)}
     * set it, without a fencing token (a Redis lease has none). Empty if no owner holds a quorum:
     * the resource is free, or its keys are left on fewer nodes (a split vote, keys running out by
     * their TTLs), where no owner holds the lock. A node down or silent is no obstacle as long as
     * the others settle the answer.
     *
     * @throws QuorumlockException if too few nodes answered to tell (those that did not could make
     *     or break a quorum for an owner), with each node's answer
     * @throws IllegalArgumentException if the resource is empty
     * @throws IllegalStateException if this lock is closed
     */
    @Override
    public Optional<LockHolder> holder(String resource) {
        ensureOpen();
        return rounds.queries.holder(checkResource(resource));
    }

    /**
     * How long a TTL must at least be with this lock: every TTL must be longer than this floor, 3
     * x the node timeout, so that a grant and an extension each fit in it with time to spare.
     * Shorter TTLs are refused by every call that takes one.
     */
    public Duration ttlFloor() {
        return QuorumMath.ttlFloor(nodeTimeout);
    }

    /**
     * Checks every node for the mistakes that break Redlock's assumptions: replicas, Redis Cluster
     * members, the same server listed twice, replication, and persistence that loses keys on a
     * restart; and, with the restart guard on, nodes it keeps out of the vote for now. Takes a few
     * milliseconds per node; an unreachable node costs the node timeout.
     */
    public NodeCheckReport checkNodes() {
        ensureOpen();
        List<NodeCheck> checks = new ArrayList<>(names.size());
        for (int i = 0; i < names.size(); i++) {
            int node = i;
            checks.add(NodeInspector.inspect(
                    names.get(i),
                    command -> rounds.queries.query(new int[] {node}, command)[0],
                    () -> rounds.restartGuard.finding(node),
                    transport.whereIs(node),
                    names.size() == 1,
                    rounds.replicaSync.replicas() != 0));
        }
        return new NodeCheckReport(NodeInspector.flagSameServers(checks));
    }

    /**
     * First lets the releases begun on other threads go out (up to two connect timeouts), so that
     * their keys are freed at once. Then ends every lease that it keeps alive ({@link #withLock},
     * {@link #keepAlive}) as lost: their {@code keepAlive} futures complete, their work in {@code withLock} is
     * interrupted and ends in {@link LeaseLostException}, and releasing them afterwards does
     * nothing (their keys run out with their TTL). Then closes every connection; deletes still
     * owed an answer are left to the TTL. Every later call on this lock, and on the other leases
     * it granted, throws {@link IllegalStateException}. Idempotent.
     */
    @Override
    public void close() {
        // A release begun before the close goes out on connections still open: one extension round
        // under way, then the release's own round.
        int left = rounds.releases.close(2 * rounds.roundNanos());
        if (left > 0) {
            log.warn("closing with {} releases still under way: their keys may stay until their TTL", left);
        }
        rounds.close();
        rounds.waiters.wakeEvery(); // a waiter's next attempt, now, ends its wait: the lock is closed
        for (RedlockLease lease : rounds.keptAlive) {
            lease.loseOnClose();
        }
        timers.close();
        transport.close();
    }

    /** The algorithm and the leases' context: for tests. */
    Rounds rounds() {
        return rounds;
    }

    /** The attempts: for tests. */
    RedlockAttempts attempts() {
        return attempts;
    }

    private void ensureOpen() {
        rounds.ensureOpen();
    }

    /**
     * The resource as the nodes know it ({@link Command#asSent}): names that are one key on the
     * nodes are one resource here too, with one line of waiters, one release channel and one name
     * on the leases.
     */
    private static String checkResource(String resource) {
        return Command.asSent(Settings.resource(resource, "lock:order:42"));
    }

    private Duration checkTtl(Duration ttl) {
        return rounds.checkTtl(ttl);
    }
}
