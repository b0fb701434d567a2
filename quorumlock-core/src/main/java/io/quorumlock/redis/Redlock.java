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
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.CriticalSections;
import io.quorumlock.internal.Holders;
import io.quorumlock.internal.LeaseTimes;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import io.quorumlock.redis.Rounds.Grant;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.NioTransport;
import io.quorumlock.redis.client.NodeAddress;
import io.quorumlock.redis.client.Reply;
import io.quorumlock.redis.client.TlsConfig;
import io.quorumlock.redis.client.Transport;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLContext;
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
 * for a TTL, which the {@linkplain Builder#restartGuard(boolean) restart guard} sees to for the
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
public final class Redlock implements DistributedLock<Lease>, Clocked {

    private static final Logger log = LoggerFactory.getLogger(Redlock.class);

    /** At most this many extension rounds of kept-alive leases wait on the nodes at once. */
    private static final int KEEP_ALIVE_WORKERS = 4;

    private final Transport transport;
    /** The algorithm, and the context of the leases. */
    private final Rounds rounds;

    private final List<String> names;
    private final Duration nodeTimeout;
    private final RetryPolicy retry;
    /** The longest sleep of a waiter that listens for releases: one that went unheard costs at most this. */
    private final long recheckNanos;

    private final long connectTimeoutNanos;
    private final Ticker ticker;
    /** Who holds the leases of this lock: stored beside each token, so that refusals can name it. */
    private final String holder;

    private final LockEvents events;
    private final SecureRandom random = new SecureRandom();
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
        this.holder = holder;
        this.timers = timers != null ? timers : Timers.threads("redlock", KEEP_ALIVE_WORKERS);
        this.rounds = new Rounds(
                transport,
                this.names,
                nodeTimeout,
                connectTimeout,
                driftFactor,
                ticker,
                restartGuard,
                events,
                this.timers);
    }

    /** Starts the configuration of a lock. */
    public static Builder builder() {
        return new Builder();
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
        Attempt attempt = attempt(sent, checkTtl(ttl), 0);
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
                    sent, Duration.ofNanos(took), 1, attempt.votes(), quorum(), withHolders(sent, attempt.answers()));
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
     *     one, each {@code held by another owner} naming the holder where it could be read
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
        // A first subscription may take a while on a busy machine: waited for up to a second.
        try (ReleaseWait wait =
                new ReleaseWait(rounds, sent, retry, recheckNanos, Math.max(connectTimeoutNanos, 1_000_000_000L))) {
            wait.yieldTo(rounds.yieldNanos(sent), maxWait);
            Lease lease = AcquireLoop.acquire(sent, maxWait, wait, ticker, events, (number, remainingNanos) -> {
                Attempt attempt = attempt(sent, ttl, wait.id());
                if (attempt.lease().isPresent()) {
                    return AcquireLoop.Attempt.granted(attempt.lease().get(), attempt.votes(), names.size());
                }
                if (attempt.misconfigured()) {
                    throw new LockConfigurationException(sent, number, attempt.answers());
                }
                boolean busy = LockUnavailableException.busy(attempt.answers(), quorum());
                wait.refused(
                        !busy
                                ? ReleaseWait.Refusal.OTHER
                                : attempt.votes() == 0 ? ReleaseWait.Refusal.HOLDER : ReleaseWait.Refusal.CONTEST);
                return AcquireLoop.Attempt.outvoted(
                        attempt.votes(), quorum(), busy, () -> withHolders(sent, attempt.answers()));
            });
            wait.granted();
            return lease;
        }
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
     * owner whose key is on a quorum of nodes, named as its lock's {@link Builder#holder(String)}
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
        return rounds.holder(checkResource(resource));
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
                    command -> rounds.query(new int[] {node}, command)[0],
                    () -> rounds.restartGuardFinding(node)));
        }
        return new NodeCheckReport(NodeInspector.flagSameServers(checks));
    }

    /**
     * Ends every lease that it keeps alive ({@link #withLock}, {@link #keepAlive}) as
     * lost: their {@code keepAlive} futures complete, their work in {@code withLock} is
     * interrupted and ends in {@link LeaseLostException}, and releasing them afterwards does
     * nothing (their keys run out with their TTL). Then closes every connection; deletes still
     * owed an answer are left to the TTL. Every later call on this lock, and on the other leases
     * it granted, throws {@link IllegalStateException}. Idempotent.
     */
    @Override
    public void close() {
        rounds.close();
        for (RedlockLease lease : rounds.keptAlive) {
            lease.loseOnClose();
        }
        timers.close();
        transport.close();
    }

    // ---- one attempt, on Rounds ------------------------------------------------------------------

    /** The result of one attempt: the lease if granted, and the evidence either way. */
    record Attempt(Optional<Lease> lease, int votes, List<ServerAnswer> answers, boolean misconfigured) {}

    /** One attempt, by a waiter with this id in the resource's line ({@link Scripts#LINE}), or 0. */
    Attempt attempt(String resource, Duration ttl, long waiter) {
        String token = newToken() + " " + holder; // compared whole: the holder is part of the token
        Grant[] grants = new Grant[names.size()];
        Rounds.Outcome outcome = rounds.grant(resource, token, ttl.toMillis(), grants);
        if (outcome.interrupted()) {
            Thread.currentThread().interrupt();
            throw new QuorumlockException("interrupted while acquiring '" + resource + "'");
        }
        if (outcome.held()) {
            if (log.isDebugEnabled()) { // the hot path: no boxing, no substring unless asked for
                log.debug(
                        "acquired '{}' with {} of {} votes, validity {} ms, token {}...",
                        resource,
                        outcome.votes(),
                        names.size(),
                        outcome.validityNanos() / 1_000_000,
                        token.substring(0, 8));
            }
            RedlockLease lease = new RedlockLease(
                    rounds,
                    resource,
                    token,
                    grants,
                    waiter,
                    ttl.toMillis() * 1_000_000,
                    outcome.validityNanos(),
                    outcome.validUntilNanos());
            return new Attempt(Optional.of(lease), outcome.votes(), outcome.answers(), false);
        }
        if (log.isDebugEnabled()) {
            log.debug(
                    "could not acquire '{}': {} of {} votes, {} needed, validity {} ms; {}",
                    resource,
                    outcome.votes(),
                    names.size(),
                    quorum(),
                    outcome.validityNanos() / 1_000_000,
                    outcome.answers());
        }
        return new Attempt(Optional.empty(), outcome.votes(), outcome.answers(), outcome.misconfigured());
    }

    /**
     * The answers, with the holder read from each node that said {@code held by another owner}
     * (the holder then, not necessarily at the vote): for the evidence of a refusal, off the hot path.
     */
    private List<ServerAnswer> withHolders(String resource, List<ServerAnswer> answers) {
        int[] held = java.util.stream.IntStream.range(0, answers.size())
                .filter(i -> answers.get(i).kind() == ServerAnswer.Kind.HELD_BY_OTHER)
                .toArray();
        if (held.length == 0 || Thread.currentThread().isInterrupted()) {
            return answers;
        }
        Reply[] values = rounds.query(held, Command.get(resource));
        List<ServerAnswer> named = new ArrayList<>(answers);
        for (int i = 0; i < held.length; i++) {
            String who = Holder.of(values[i]);
            if (who != null) {
                ServerAnswer o = answers.get(held[i]);
                named.set(held[i], new ServerAnswer(o.server(), o.kind(), Holders.named(who, holder)));
            }
        }
        return named;
    }

    /** The algorithm and the leases' context: for tests. */
    Rounds rounds() {
        return rounds;
    }

    private void ensureOpen() {
        rounds.ensureOpen();
    }

    private String newToken() {
        byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
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

    /** Configures a {@link Redlock}; every setting is checked in {@link #build()}. */
    public static final class Builder {
        /** How long build() waits for host names to resolve, to refuse two entries of one address. */
        private static final long SAME_ADDRESS_NANOS = 200_000_000L;

        private final List<String> uris = new ArrayList<>();
        private Duration nodeTimeout = Duration.ofMillis(50);
        /** Null until set: the node timeout. */
        private Duration connectTimeout;

        private double clockDriftFactor = 0.01;
        private RetryPolicy retry = RetryPolicy.DEFAULT;
        private Duration recheck = Duration.ofSeconds(1);
        private int maxConnectionsPerNode = 8;
        /** Null until set: on with several nodes, off with one. */
        private Boolean restartGuard;
        /** For nodes whose URI has none; null if not set. */
        private String password;
        /** Null until set: pid@host. */
        private String holder;

        private SSLContext tlsContext;
        private Path tlsCaBundle;
        private Path tlsCertificate;
        private Path tlsKey;
        private boolean tlsClientCertificateSet;
        private boolean insecureTrustAll;
        private LockListener listener = LockListener.NONE;
        private Ticker ticker = Ticker.SYSTEM;
        /** Null: the lock makes its own. */
        private Timers timers;

        private Builder() {}

        /**
         * Adds a node, {@code redis://[user:password@]host:port[/db]}, or {@code rediss://...} for
         * TLS. One node makes a single-node lock.
         */
        public Builder node(String uri) {
            uris.add(uri);
            return this;
        }

        /** Adds several nodes. */
        public Builder nodes(List<String> nodeUris) {
            nodeUris.forEach(this::node);
            return this;
        }

        /**
         * How long a node that owes a reply may stay silent before it counts as a no: a round waits
         * for a node as long as it answers something within this time (its set-up on a new
         * connection, or other callers' requests on a shared one), up to a third of the TTL, and a
         * yes that comes while validity is left counts. Short, so that a dead or frozen node never
         * holds up the caller; a slow but live node, or a busy client, does not lose its vote. The
         * default is 50 ms. TTLs must be longer than 3 x this.
         */
        public Builder nodeTimeout(Duration timeout) {
            this.nodeTimeout = timeout;
            return this;
        }

        /**
         * How long a round waits for a node whose connection is being opened (TCP connect, TLS
         * handshake, AUTH), by this round or another sharing the connection, when the outcome
         * cannot be decided without that node. A handshake on a cold JVM, or across a network, can
         * take longer than a command; once the connection is up, the node is waited for while it
         * answers (see {@linkplain #nodeTimeout node timeout}), and a node whose connection stays
         * unopened counts as not reached from the next round on. The default is the node timeout.
         * Over TLS, where the first handshake of a JVM just started can take longer than 50 ms, a
         * single attempt ({@code tryAcquire}) on fresh connections may then miss its quorum;
         * {@code acquire} retries on the opened connections, or set this to about a second
         * ({@code quorumlock run} does, for TLS nodes).
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        /**
         * The fraction of the TTL allowed for clock drift between nodes; validity = ttl - elapsed -
         * (ttl x factor + 2 ms). The default is 0.01.
         */
        public Builder clockDriftFactor(double factor) {
            this.clockDriftFactor = factor;
            return this;
        }

        /**
         * The backoff between attempts in {@link Redlock#acquire} that a release does not end: after
         * a refusal in which some nodes said yes (clients that split the vote, a holder whose keys
         * are gone from some nodes), and where the nodes refuse the release channel. The default is
         * {@link RetryPolicy#DEFAULT}.
         */
        public Builder retry(RetryPolicy policy) {
            this.retry = policy;
            return this;
        }

        /**
         * A thread waiting in {@link Redlock#acquire} after a refusal by a holder sleeps until the
         * holder's release wakes it (a release in this process, or one published by the release
         * script of another client on channel {@code quorumlock:released:<resource>}, which the lock
         * listens to while threads wait) or the holder's keys run out on a quorum of nodes, and
         * tries again at least this often anyway, in case a release went unheard (a node that
         * refuses the channel to the lock's ACL user, a proxy without pub/sub). The default is 1 s.
         */
        public Builder recheck(Duration interval) {
            this.recheck = interval;
            return this;
        }

        /**
         * The most connections kept per node. Connections are opened as more callers run rounds
         * at once, up to this many; beyond that, callers share them, their requests pipelined, and
         * no caller ever waits for a connection. The rounds on one resource share connections, so
         * that callers of one lock contending for a resource reach every node in one order and do
         * not split its vote. The lock starts no threads of its own for I/O: a waiting caller
         * reads the replies for every caller on its connections. The default is 8.
         */
        public Builder maxConnectionsPerNode(int max) {
            this.maxConnectionsPerNode = max;
            return this;
        }

        /**
         * Redlock's restart guard, the remedy for nodes that restart without fsync'd persistence:
         * a node that has been up for less than the longest TTL this client has asked for (in any
         * acquire or extension so far, the current one included) does not vote until it has been
         * up that long. Its yes is not counted, shows as {@link ServerAnswer.Kind#EXCLUDED} in the evidence,
         * and is released like any other; a grant still needs N/2 + 1 yes votes from the other
         * nodes. Each new connection reads the node's {@code run_id} and {@code uptime_in_seconds}
         * ({@code INFO server}) and its fsync policy ({@code CONFIG GET append*}), pipelined with
         * its set-up: no extra round trip. The latest start that any reply implies wins; a node
         * whose INFO fails counts as started when the connection was made. A changed {@code
         * run_id} (a restart, or a failover to another server behind the same address) counts as
         * a start when it was seen, whatever the uptime. A node that fsyncs every write ({@code
         * appendonly yes} and {@code appendfsync always}; a denied CONFIG counts as not) lost
         * nothing in its own start and votes at once, unless its run_id changed.
         *
         * <p>What it costs: a node that does not fsync every write gives no vote for the first TTL
         * after it (re)started, so a freshly started set of such nodes gives no quorum at all
         * until its nodes have been up for the longest TTL. It protects against restarts only for
         * the TTLs of this client: clients of the same nodes should use the same TTLs.
         *
         * <p>The default is on with several nodes and off with one node (a single-node lock has
         * no quorum to protect). Turn it off in tests on nodes just started that do not fsync
         * every write.
         */
        public Builder restartGuard(boolean enabled) {
            this.restartGuard = enabled;
            return this;
        }

        /**
         * The password (Redis AUTH) for every node whose URI carries none, so that a password from
         * a secret store or the environment need not be written into the URIs. A URI's own
         * password wins; {@code redis://user:@host:port} names an ACL user without a password.
         *
         * @param password the password; empty or null means none
         */
        public Builder password(String password) {
            this.password = password == null || password.isEmpty() ? null : password;
            return this;
        }

        /**
         * The name stored with each lease's key beside its random token, so that a client refused
         * a busy lock learns who holds it ({@code held by another owner (holder billing-worker-1)}).
         * Release and extension compare the whole value, name included. Printable ASCII, at most
         * 64 characters, never a secret: it goes into messages and logs. The default is the
         * process's {@code pid@host}.
         */
        public Builder holder(String name) {
            this.holder = name;
            return this;
        }

        /**
         * The TLS context for the {@code rediss://} nodes, for trust or client keys that PEM files
         * do not serve (a key store, a hardware token). Hostname verification stays on. Not together
         * with {@link #tlsCaBundle}, {@link #tlsClientCertificate} or {@link
         * #insecureTrustAllCertificates}. The default is none: the JDK trust store, no client
         * certificate.
         */
        public Builder tls(SSLContext context) {
            this.tlsContext = context;
            return this;
        }

        /**
         * The CAs that the {@code rediss://} nodes' certificates must be issued by, as a PEM file of
         * one or more certificates, in place of the JDK trust store. The nodes' names are checked
         * against their certificates either way. The default is the JDK trust store.
         */
        public Builder tlsCaBundle(Path caBundle) {
            this.tlsCaBundle = caBundle;
            return this;
        }

        /**
         * The client certificate presented to {@code rediss://} nodes that require one (mutual TLS,
         * Redis's {@code tls-auth-clients yes}): a PEM certificate (intermediates may follow it)
         * and its private key, an unencrypted PKCS#8 PEM file ({@code -----BEGIN PRIVATE
         * KEY-----}), RSA or EC. Keep the key file readable by this user only. The default is none.
         */
        public Builder tlsClientCertificate(Path certificate, Path key) {
            this.tlsCertificate = certificate;
            this.tlsKey = key;
            this.tlsClientCertificateSet = true;
            return this;
        }

        /**
         * Turns off the verification of the {@code rediss://} nodes' certificates and names: the
         * traffic is encrypted, but anyone on the network path can pose as a node and grant locks.
         * For tests and first trials only; {@link #build()} logs a warning. Prefer {@link
         * #tlsCaBundle} with the CA that issued the nodes' certificates. The default is off.
         */
        public Builder insecureTrustAllCertificates() {
            this.insecureTrustAll = true;
            return this;
        }

        /**
         * The clock every validity and deadline of the lock counts on; by default {@link
         * Ticker#SYSTEM}, the monotonic clock. For tests that run the lock on a clock of their own.
         * {@link Ticker} is an internal type of the library and may change in any release.
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Settings.notNull("ticker", ticker, "pass a Ticker, or leave the default");
            return this;
        }

        /**
         * The threads that keep the lock's leases alive: a timer, workers for the renewals and
         * threads for the notices; by default the lock's own, started on first use. For tests that
         * run the leases' lives on timers of their own. The lock closes them when it is closed.
         * {@link Timers} is an internal type of the library and may change in any release.
         */
        public Builder timers(Timers timers) {
            this.timers = Settings.notNull("timers", timers, "pass Timers, or leave the default");
            return this;
        }

        /**
         * The listener told of every grant, refusal, extension, loss and release of this lock, as
         * backend {@code "redis"}: for metrics ({@code QuorumlockMetrics} of quorumlock-micrometer)
         * or logs. One that throws is logged once and does not break the lock. The default is
         * {@link LockListener#NONE}, which costs nothing.
         */
        public Builder listener(LockListener listener) {
            this.listener = listener;
            return this;
        }

        /**
         * Checks the configuration and connects lazily to the nodes. Two nodes that reach the same
         * address and port ({@code redis://localhost:6379} and {@code redis://127.0.0.1:6379}) are
         * refused: each server may vote only once. IP literals are compared as addresses; host
         * names are looked up for this, for at most 200 ms in all, and a name not resolved by then
         * is left out of the comparison. Entries that reach one server by different addresses (an
         * alias, a NAT, a proxy) are found at their first connection, by the server's {@code
         * run_id}: their votes then count once, and the duplicate is logged and shown by {@link
         * Redlock#checkNodes()}.
         *
         * @throws IllegalSettingException naming the setting that is wrong and how to fix it
         */
        public Redlock build() {
            List<NodeAddress> addresses = validate();
            TlsConfig tls = addresses.stream().anyMatch(NodeAddress::tls) ? tlsConfig() : null;
            NioTransport transport = new NioTransport(
                    addresses,
                    nodeTimeout.toNanos(),
                    connectTimeout().toNanos(),
                    maxConnectionsPerNode,
                    ticker,
                    tls,
                    Scripts.ALL);
            // The lookups started with the transport; a name that takes longer is compared by its run_id.
            IllegalSettingException same =
                    addresses.size() > 1 ? transport.sameAddress(ticker.nanos() + SAME_ADDRESS_NANOS) : null;
            if (same != null) {
                transport.close();
                throw same;
            }
            return create(transport, addresses, ticker);
        }

        private TlsConfig tlsConfig() {
            if (tlsContext != null) {
                return TlsConfig.of(tlsContext);
            }
            if (insecureTrustAll) {
                log.warn("insecureTrustAllCertificates(): the certificates of the rediss:// nodes are not verified, so"
                        + " anyone on the network path can pose as a node and grant locks; give the nodes' CA with"
                        + " tlsCaBundle instead");
                return TlsConfig.trustingAll(tlsCertificate, tlsKey);
            }
            return TlsConfig.fromPem(tlsCaBundle, tlsCertificate, tlsKey);
        }

        /** The TLS settings agree with each other and with the nodes. */
        private void validateTls(List<NodeAddress> addresses) {
            List<String> set = new ArrayList<>();
            List<String> settings = new ArrayList<>(); // as the builder's methods are named
            if (tlsContext != null) {
                set.add("tls(SSLContext)");
                settings.add("tls");
            }
            if (tlsCaBundle != null) {
                set.add("tlsCaBundle");
                settings.add("tlsCaBundle");
            }
            if (tlsClientCertificateSet) {
                set.add("tlsClientCertificate");
                settings.add("tlsClientCertificate");
            }
            if (insecureTrustAll) {
                set.add("insecureTrustAllCertificates()");
                settings.add("insecureTrustAllCertificates");
            }
            if (set.isEmpty()) {
                return;
            }
            Settings.requireArgument(
                    addresses.stream().anyMatch(NodeAddress::tls),
                    settings.get(0),
                    "%s set, but no node is rediss://: write the nodes as rediss://host:port to connect with TLS",
                    String.join(" and ", set));
            Settings.requireArgument(
                    tlsContext == null || set.size() == 1,
                    "tls",
                    "%s set: give the trust and the client key in the SSLContext, or drop tls(SSLContext)",
                    String.join(" and ", set));
            Settings.requireArgument(
                    !insecureTrustAll || tlsCaBundle == null,
                    "insecureTrustAllCertificates",
                    "insecureTrustAllCertificates() and tlsCaBundle set: drop"
                            + " insecureTrustAllCertificates() to verify the nodes against the bundle");
            if (tlsClientCertificateSet && (tlsCertificate == null || tlsKey == null)) {
                throw new IllegalSettingException(
                        "tlsClientCertificate",
                        tlsCertificate == null ? 0 : 1,
                        "tlsClientCertificate needs both files, was certificate " + tlsCertificate + " and key "
                                + tlsKey + ": give the PEM certificate and its PKCS#8 key");
            }
        }

        /** Builds over a given transport: for tests of the algorithm. */
        Redlock build(Transport transport, Ticker ticker) {
            return create(transport, validate(), ticker);
        }

        /** The connect timeout set, or the node timeout. */
        private Duration connectTimeout() {
            return connectTimeout != null ? connectTimeout : nodeTimeout;
        }

        private Redlock create(Transport transport, List<NodeAddress> addresses, Ticker ticker) {
            List<String> names = addresses.stream().map(NodeAddress::toString).toList();
            boolean guard = restartGuard != null ? restartGuard : addresses.size() > 1;
            return new Redlock(
                    transport,
                    names,
                    nodeTimeout,
                    connectTimeout(),
                    clockDriftFactor,
                    retry,
                    recheck,
                    ticker,
                    guard,
                    holder != null ? holder : Holders.defaultName(),
                    listener,
                    timers);
        }

        private List<NodeAddress> validate() {
            Settings.requireArgument(
                    !uris.isEmpty(),
                    "nodes",
                    "no nodes: add at least one with node(\"redis://host:port\") (one node for a single-node lock,"
                            + " 3 or 5 for Redlock)");
            Map<String, NodeAddress> servers = new HashMap<>();
            List<NodeAddress> addresses = new ArrayList<>(uris.size());
            for (int i = 0; i < uris.size(); i++) {
                String uri = uris.get(i);
                NodeAddress address = Settings.parse("nodes", i, () -> NodeAddress.parse(uri));
                if (password != null && address.password().isEmpty()) {
                    address = address.withPassword(password);
                }
                NodeAddress earlier = servers.putIfAbsent(address.server(), address);
                if (earlier != null) {
                    throw new IllegalSettingException(
                            "nodes",
                            i,
                            "node " + address.server() + " is listed twice (" + earlier + " and " + address
                                    + "): each Redis server may vote only once; list independent servers");
                }
                addresses.add(address);
            }
            Settings.positive("nodeTimeout", nodeTimeout, " (the default is 50 ms)");
            Settings.requireArgument(
                    nodeTimeout.toMillis() >= 1 && nodeTimeout.toMillis() <= Integer.MAX_VALUE,
                    "nodeTimeout",
                    "nodeTimeout must be between 1 ms and 24 days, was %s",
                    nodeTimeout);
            Settings.requireArgument(
                    connectTimeout == null
                            || (connectTimeout.compareTo(nodeTimeout) >= 0
                                    && connectTimeout.toMillis() <= Integer.MAX_VALUE),
                    "connectTimeout",
                    "connectTimeout must be at least nodeTimeout (%d ms) and at most 24 days, was %d ms (the default"
                            + " is nodeTimeout)",
                    nodeTimeout.toMillis(),
                    connectTimeout == null ? 0 : connectTimeout.toMillis());
            Settings.requireArgument(
                    clockDriftFactor >= 0 && clockDriftFactor < 0.5,
                    "clockDriftFactor",
                    "clockDriftFactor must be at least 0 and below 0.5, was %s (the default is 0.01)",
                    clockDriftFactor);
            Settings.retry(retry);
            Settings.positive("recheck", recheck, " (the default is 1 s)");
            Settings.listener(listener);
            String holderProblem =
                    holder == null ? null : Holders.problem(holder).orElse(null);
            Settings.requireArgument(holderProblem == null, "holder", "%s", holderProblem);
            Settings.atLeast("maxConnectionsPerNode", maxConnectionsPerNode, 1);
            validateTls(addresses);
            if (addresses.size() > 1 && addresses.size() % 2 == 0) {
                log.warn(
                        "{} nodes tolerate no more failures than {}: a quorum of {} is needed; use an odd number of nodes",
                        addresses.size(),
                        addresses.size() - 1,
                        QuorumMath.quorum(addresses.size()));
            }
            return addresses;
        }
    }
}
