package io.quorumlock.redis;

import io.quorumlock.CriticalSection;
import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.NodeOutcome;
import io.quorumlock.NodeOutcome.Vote;
import io.quorumlock.QuorumLockException;
import io.quorumlock.RetryPolicy;
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
import java.util.function.IntFunction;
import java.util.function.Predicate;
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
 * for a TTL. Use it to avoid duplicate work. Where a second holder would corrupt data, use a
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
public final class Redlock implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Redlock.class);
    private static final Predicate<Vote> GRANTED = v -> v == Vote.YES;
    /** On release, a node where the key is gone or is another owner's is as free as one that deleted it. */
    private static final Predicate<Vote> SETTLED = v -> v == Vote.YES || v == Vote.HELD_BY_OTHER;

    private final List<NodeChannel> channels;
    private final List<String> names;
    private final long nodeTimeoutNanos;
    private final Duration nodeTimeout;
    private final double driftFactor;
    private final RetryPolicy retry;
    private final Ticker ticker;
    private final SecureRandom random = new SecureRandom();
    private final Watchdog watchdog;

    Redlock(
            List<RedisNode> nodes,
            List<String> names,
            Duration nodeTimeout,
            double driftFactor,
            RetryPolicy retry,
            int maxConnectionsPerNode,
            Ticker ticker) {
        this.nodeTimeout = nodeTimeout;
        this.nodeTimeoutNanos = nodeTimeout.toNanos();
        this.driftFactor = driftFactor;
        this.retry = retry;
        this.ticker = ticker;
        this.names = List.copyOf(names);
        boolean inline = nodes.size() == 1;
        List<NodeChannel> list = new ArrayList<>(nodes.size());
        for (int i = 0; i < nodes.size(); i++) {
            list.add(new NodeChannel(nodes.get(i), names.get(i), nodeTimeoutNanos, maxConnectionsPerNode, inline));
        }
        this.channels = List.copyOf(list);
        this.watchdog = new Watchdog();
    }

    /** Starts the configuration of a lock. */
    public static Builder builder() {
        return new Builder();
    }

    /** The nodes, as {@code redis://host:port[/db]} without credentials, in configured order. */
    public List<String> nodes() {
        return names;
    }

    /** How many yes votes a grant needs: N/2 + 1. */
    public int quorum() {
        return QuorumMath.quorum(channels.size());
    }

    /**
     * Makes one attempt to lock {@code resource} for {@code ttl}.
     *
     * @return the lease, or empty if no quorum granted it with validity left (the attempt then
     *     released whatever it had taken)
     * @throws IllegalArgumentException if the resource is empty or the TTL unusable
     */
    public Optional<Lease> tryAcquire(String resource, Duration ttl) {
        return attempt(checkResource(resource), checkTtl(ttl)).lease();
    }

    /**
     * Locks {@code resource} for {@code ttl}, retrying with jittered backoff until {@code maxWait}
     * has passed. A {@code maxWait} of zero makes exactly one attempt.
     *
     * @throws LockUnavailableException if no attempt succeeded in time, with the votes of the last one
     * @throws QuorumLockException if the thread was interrupted while waiting (the interrupt flag stays set)
     */
    public Lease acquire(String resource, Duration ttl, Duration maxWait) {
        checkResource(resource);
        checkTtl(ttl);
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, was " + maxWait.toMillis() + " ms");
        }
        long start = ticker.nanos();
        long budget = maxWait.toNanos();
        for (int attempts = 1; ; attempts++) {
            Grant grant = attempt(resource, ttl);
            if (grant.lease().isPresent()) {
                return grant.lease().get();
            }
            long delay = retry.delayAfter(attempts).toNanos();
            long waited = ticker.nanos() - start;
            if (waited + delay > budget) {
                throw new LockUnavailableException(
                        resource, Duration.ofNanos(waited), attempts, grant.votes(), quorum(), grant.outcomes());
            }
            try {
                Thread.sleep(delay / 1_000_000, (int) (delay % 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new QuorumLockException("interrupted while waiting to acquire '" + resource + "'", e);
            }
        }
    }

    /**
     * Runs {@code work} while holding the lock, and releases it afterwards. A watchdog extends the
     * lease whenever about a third of the TTL is left, so the work may take longer than the TTL.
     * If an extension fails, the lease is lost: the thread running the work is interrupted, and
     * the call ends with a {@link LeaseLostException} whatever the work returned, because another
     * holder may have entered the critical section.
     *
     * @throws LockUnavailableException if the lock could not be acquired within {@code maxWait}
     * @throws LeaseLostException if the lease was lost while the work ran (the work's own
     *     exception, if any, is its cause)
     * @throws X what the work throws, when the lease held throughout
     */
    public <T, X extends Exception> T withLock(
            String resource, Duration ttl, Duration maxWait, CriticalSection<T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        RedlockLease lease = (RedlockLease) acquire(resource, ttl, maxWait);
        Watchdog.Watch watch = watchdog.watch(lease, ttl, Thread.currentThread());
        T result;
        try {
            result = work.run();
        } catch (Throwable failure) {
            boolean lost = watch.stop() || !lease.isValid();
            lease.release();
            if (lost) {
                throw lease.lostException(failure);
            }
            throw failure;
        }
        boolean lost = watch.stop() || !lease.isValid();
        lease.release();
        if (lost) {
            throw lease.lostException(null);
        }
        return result;
    }

    /**
     * Checks every node for the mistakes that break Redlock's assumptions: replicas, Redis Cluster
     * members, the same server listed twice, replication, and persistence that loses keys on a
     * restart. Takes a few milliseconds per node; an unreachable node costs the node timeout.
     */
    public NodeCheckReport checkNodes() {
        List<NodeCheck> checks = new ArrayList<>(channels.size());
        for (NodeChannel channel : channels) {
            checks.add(NodeInspector.inspect(channel.name(), channel.node()));
        }
        return new NodeCheckReport(NodeInspector.flagSameServers(checks));
    }

    /** Stops the watchdog and closes every connection, after in-flight releases had their node timeout. */
    @Override
    public void close() {
        watchdog.close();
        for (NodeChannel channel : channels) {
            channel.close();
        }
    }

    // ---- one round of the algorithm --------------------------------------------------------------

    /** The result of one attempt: the lease if granted, and the evidence either way. */
    record Grant(Optional<Lease> lease, int votes, List<NodeOutcome> outcomes) {}

    /** The result of one extension round. */
    record Round(boolean held, int votes, List<NodeOutcome> outcomes) {}

    Grant attempt(String resource, Duration ttl) {
        String token = newToken();
        long ttlMillis = ttl.toMillis();
        long start = ticker.nanos();
        Ballot ballot = new Ballot(names, GRANTED);
        List<CompletableFuture<NodeOutcome>> grants =
                send(ballot, i -> channels.get(i).send(node -> node.setIfAbsent(resource, token, ttlMillis)));
        boolean interrupted = !await(ballot, false);
        long now = ticker.nanos();
        long validity = QuorumMath.validityNanos(ttlMillis * 1_000_000, now - start, driftFactor);
        int yes = ballot.yes();
        if (!interrupted && QuorumMath.isHeld(yes, channels.size(), validity)) {
            log.debug(
                    "acquired '{}' with {} of {} votes, validity {} ms, token {}...",
                    resource,
                    yes,
                    channels.size(),
                    validity / 1_000_000,
                    token.substring(0, 8));
            return new Grant(
                    Optional.of(new RedlockLease(this, resource, token, grants, validity, now + validity)),
                    yes,
                    ballot.outcomes());
        }
        release(resource, token, grants);
        if (interrupted) {
            Thread.currentThread().interrupt();
            throw new QuorumLockException("interrupted while acquiring '" + resource + "'");
        }
        // Read after the clean-up, which waited for the reachable nodes: the evidence is then complete.
        List<NodeOutcome> outcomes = ballot.outcomes();
        log.debug(
                "could not acquire '{}': {} of {} votes, {} needed, validity {} ms; {}",
                resource,
                yes,
                channels.size(),
                quorum(),
                validity / 1_000_000,
                outcomes);
        return new Grant(Optional.empty(), yes, outcomes);
    }

    Round extend(RedlockLease lease, Duration ttl) {
        long ttlMillis = ttl.toMillis();
        long start = ticker.nanos();
        Ballot ballot = new Ballot(names, GRANTED);
        afterGrant(ballot, lease.grants(), node -> node.extendIfEquals(lease.resource(), lease.token(), ttlMillis));
        boolean interrupted = !await(ballot, false);
        long now = ticker.nanos();
        long validity = QuorumMath.validityNanos(ttlMillis * 1_000_000, now - start, driftFactor);
        boolean held = !interrupted && QuorumMath.isHeld(ballot.yes(), channels.size(), validity);
        if (held) {
            lease.extended(validity, now + validity);
        }
        return new Round(held, ballot.yes(), ballot.outcomes());
    }

    /**
     * Deletes the key wherever it may hold the token, each node's delete sent after that node
     * answered the grant (so a late yes is released too). Returns once a quorum of nodes is free
     * again, or every node has answered, or the node timeout has passed; stragglers finish in
     * the background.
     */
    void release(String resource, String token, List<CompletableFuture<NodeOutcome>> grants) {
        Ballot ballot = new Ballot(names, SETTLED);
        afterGrant(ballot, grants, node -> node.deleteIfEquals(resource, token));
        if (!await(ballot, true)) {
            Thread.currentThread().interrupt();
        }
    }

    long nowNanos() {
        return ticker.nanos();
    }

    void check(Duration ttl) {
        checkTtl(ttl);
    }

    Watchdog watchdog() {
        return watchdog;
    }

    /**
     * Sends {@code request} to each node once that node's grant is known. A node that never got
     * the key answers for itself: held by another owner, or unreachable.
     */
    private void afterGrant(Ballot ballot, List<CompletableFuture<NodeOutcome>> grants, Predicate<RedisNode> request) {
        send(
                ballot,
                i -> grants.get(i)
                        .thenCompose(grant -> neverHeld(grant)
                                ? CompletableFuture.completedFuture(
                                        channels.get(i).outcome(grant.vote(), "never held the key"))
                                : channels.get(i).send(request)));
    }

    /** The grant was refused, or never sent: this node cannot hold our token. */
    private static boolean neverHeld(NodeOutcome grant) {
        return grant.vote() == Vote.HELD_BY_OTHER || grant.vote() == Vote.UNREACHABLE;
    }

    private List<CompletableFuture<NodeOutcome>> send(
            Ballot ballot, IntFunction<CompletableFuture<NodeOutcome>> request) {
        List<CompletableFuture<NodeOutcome>> replies = new ArrayList<>(channels.size());
        for (int i = 0; i < channels.size(); i++) {
            int node = i;
            // Later steps chain on the recorded reply, so the ballot has always counted a reply first.
            replies.add(request.apply(i).thenApply(outcome -> {
                ballot.record(node, outcome);
                return outcome;
            }));
        }
        return replies;
    }

    /** Waits for the ballot's outcome, at most the node timeout; false if interrupted. */
    private boolean await(Ballot ballot, boolean quorumOrAll) {
        try {
            ballot.await(System.nanoTime() + nodeTimeoutNanos, quorumOrAll);
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    private String newToken() {
        byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    private static String checkResource(String resource) {
        if (resource == null || resource.isEmpty()) {
            throw new IllegalArgumentException(
                    "resource must not be empty: name the thing to lock, e.g. \"lock:order:42\"");
        }
        return resource;
    }

    private Duration checkTtl(Duration ttl) {
        String problem = QuorumMath.ttlProblem(ttl, nodeTimeout);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        return ttl;
    }

    /** Configures a {@link Redlock}; every setting is checked in {@link #build()}. */
    public static final class Builder {
        private final List<String> uris = new ArrayList<>();
        private Duration nodeTimeout = Duration.ofMillis(50);
        private double clockDriftFactor = 0.01;
        private RetryPolicy retry = RetryPolicy.DEFAULT;
        private int maxConnectionsPerNode = 8;

        private Builder() {}

        /** Adds a node, {@code redis://[user:password@]host:port[/db]}. One node makes a single-node lock. */
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
         * How long one node may take to answer one request (connect, command and reply) before it
         * counts as a no. Short, so that a dead or frozen node never holds up the caller. The
         * default is 50 ms. TTLs must be longer than 3 x this.
         */
        public Builder nodeTimeout(Duration timeout) {
            this.nodeTimeout = timeout;
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

        /** The backoff between attempts in {@link Redlock#acquire}. The default is {@link RetryPolicy#DEFAULT}. */
        public Builder retry(RetryPolicy policy) {
            this.retry = policy;
            return this;
        }

        /**
         * The most connections (and worker threads) kept per node, which bounds how many requests
         * to one node run at once. The default is 8.
         */
        public Builder maxConnectionsPerNode(int max) {
            this.maxConnectionsPerNode = max;
            return this;
        }

        /**
         * Checks the configuration and connects lazily to the nodes.
         *
         * @throws IllegalArgumentException naming the setting that is wrong and how to fix it
         */
        public Redlock build() {
            List<NodeAddress> addresses = validate();
            List<RedisNode> nodes = new ArrayList<>(addresses.size());
            for (NodeAddress address : addresses) {
                nodes.add(new JedisNode(address, nodeTimeout, maxConnectionsPerNode));
            }
            return create(nodes, addresses, Ticker.SYSTEM);
        }

        /** Builds over given node implementations: for tests of the algorithm. */
        Redlock build(List<RedisNode> nodes, Ticker ticker) {
            List<NodeAddress> addresses = validate();
            if (nodes.size() != addresses.size()) {
                throw new IllegalArgumentException("one RedisNode per URI");
            }
            return create(nodes, addresses, ticker);
        }

        private Redlock create(List<RedisNode> nodes, List<NodeAddress> addresses, Ticker ticker) {
            List<String> names = addresses.stream().map(NodeAddress::toString).toList();
            return new Redlock(nodes, names, nodeTimeout, clockDriftFactor, retry, maxConnectionsPerNode, ticker);
        }

        private List<NodeAddress> validate() {
            if (uris.isEmpty()) {
                throw new IllegalArgumentException(
                        "no nodes: add at least one with node(\"redis://host:port\") (one node for a single-node lock, 3 or 5 for Redlock)");
            }
            Map<String, NodeAddress> servers = new HashMap<>();
            List<NodeAddress> addresses = new ArrayList<>(uris.size());
            for (String uri : uris) {
                NodeAddress address = NodeAddress.parse(uri);
                NodeAddress earlier = servers.putIfAbsent(address.server(), address);
                if (earlier != null) {
                    throw new IllegalArgumentException("node " + address.server() + " is listed twice (" + earlier
                            + " and " + address + "): each Redis server may vote only once; list independent servers");
                }
                addresses.add(address);
            }
            if (nodeTimeout == null || nodeTimeout.isZero() || nodeTimeout.isNegative()) {
                throw new IllegalArgumentException("nodeTimeout must be positive, was "
                        + (nodeTimeout == null ? "null" : nodeTimeout.toMillis() + " ms") + " (the default is 50 ms)");
            }
            if (nodeTimeout.toMillis() < 1 || nodeTimeout.toMillis() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("nodeTimeout must be between 1 ms and 24 days, was " + nodeTimeout);
            }
            if (!(clockDriftFactor >= 0 && clockDriftFactor < 0.5)) {
                throw new IllegalArgumentException("clockDriftFactor must be at least 0 and below 0.5, was "
                        + clockDriftFactor + " (the default is 0.01)");
            }
            if (retry == null) {
                throw new IllegalArgumentException(
                        "retry must not be null: use RetryPolicy.DEFAULT or RetryPolicy.jitteredBackoff");
            }
            if (maxConnectionsPerNode < 1) {
                throw new IllegalArgumentException(
                        "maxConnectionsPerNode must be at least 1, was " + maxConnectionsPerNode);
            }
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
