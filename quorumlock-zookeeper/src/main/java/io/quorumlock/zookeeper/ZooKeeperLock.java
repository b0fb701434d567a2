package io.quorumlock.zookeeper;

import io.quorumlock.CriticalSections;
import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LeasedSection;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.NodeOutcome;
import io.quorumlock.NodeOutcome.Vote;
import io.quorumlock.QuorumLockException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.Secrets;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.client.ConnectStringParser;
import org.apache.zookeeper.common.PathUtils;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fenced lock on a ZooKeeper ensemble: for correctness, where two holders at once would corrupt
 * data.
 *
 * <p>Each contender for a resource creates an ephemeral-sequential node under {@code
 * <basePath>/<resource>}; the lowest holds the lock, the others each wait for the node just before
 * their own to go (no herd, no polling). The lease carries a {@linkplain FencedLease#fencingToken()
 * fencing token}: the czxid, the transaction id that created the holder's node. The ensemble
 * orders all transactions totally, so each later holder's token is strictly larger, across
 * clients, client restarts, server restarts and leader changes (the leader's epoch is in the high
 * 32 bits). The sequence suffix of the node is not the token: the parent is a container node that
 * ZooKeeper deletes once it empties, and the suffixes then restart from zero. Tokens are only as
 * monotonic as the ensemble's data: an ensemble rebuilt from empty data directories starts again.
 *
 * <p>A lease lives as long as the ZooKeeper session that created its node, not for a TTL: the
 * {@code ttl} of the {@link DistributedLock} methods only has to be positive and does not change
 * how long a lease lasts. What bounds how long a crashed holder keeps the lock is the {@linkplain
 * #sessionTimeout() session timeout}, set with {@link Builder#sessionTimeout} (10 s by default) and
 * bounded by the ensemble; a lock whose leases should last about {@code ttl} after a crash is built
 * with {@code sessionTimeout(ttl)}, and checks {@link #sessionTimeout()}. Liveness comes from
 * the session: when the connection drops (Curator's SUSPENDED), {@link FencedLease#isValid()}
 * turns false at once; when it comes back within the session timeout and the node is still this
 * session's, the lease is valid again. When the session is lost (Curator's LOST: the ensemble
 * expired it, or no server answered for the session timeout), {@link FencedLease#lost()}
 * completes with the evidence, and the ensemble frees the lock for the next contender. So after a
 * partition the old holder learns its loss within the session timeout, but a process pause can
 * still let it write late: hand the fencing token to the storage with every write.
 *
 * <p>What the {@link FencedLease} methods mean here: {@link FencedLease#validity()} is the session
 * timeout negotiated with the ensemble, the window in which a loss is detected (the ensemble keeps
 * the node that long after it last heard from the client), not a promised holding time; {@link
 * FencedLease#remaining()} is that same value while the lease is valid and zero otherwise, never a
 * countdown, because a connected session does not run out; {@link FencedLease#extend(Duration)}
 * has nothing to extend and returns {@code isValid()}; {@link FencedLease#release()} deletes the
 * node (waiting for the delete when connected, else leaving it to Curator's guaranteed delete in
 * the background) and never throws, also after a loss.
 *
 * <pre>{@code
 * try (ZooKeeperLock zk = ZooKeeperLock.builder().connectString("zk1:2181,zk2:2181,zk3:2181").build()) {
 *     try (FencedLease lease = zk.acquire("stock:sku-42", Duration.ofSeconds(30), Duration.ofSeconds(5))) {
 *         inventory.reserve("sku-42", 1, lease.fencingToken());   // the storage refuses older tokens
 *     }
 * }
 * }</pre>
 *
 * <p>Instances are thread-safe; share one per ensemble and close it on shutdown. The lock is not
 * reentrant: a thread that acquires a resource it already holds waits for itself.
 */
public final class ZooKeeperLock implements DistributedLock<FencedLease> {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLock.class);

    /** The default parent of the resources' lock nodes. */
    public static final String DEFAULT_BASE_PATH = "/quorumlock/locks";

    private static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(5);
    private static final int CREATE_TRIES = 3;

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final String basePath;
    private final RetryPolicy retry;
    private final byte[] holder;
    private final Set<ZooKeeperLease> leases = ConcurrentHashMap.newKeySet();
    private final Set<Waiter> waiters = ConcurrentHashMap.newKeySet();
    /** Counts connection state changes, so a grant can tell whether one slipped in while it checked ownership. */
    private final AtomicLong connectionChanges = new AtomicLong();
    /** The connection state Curator reported last; null before the first report. */
    private volatile ConnectionState lastState;

    private final ConnectionStateListener listener = (c, state) -> stateChanged(state);
    private final AtomicBoolean closed = new AtomicBoolean();

    private ZooKeeperLock(CuratorFramework client, boolean ownsClient, String basePath, RetryPolicy retry) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.basePath = basePath;
        this.retry = retry;
        this.holder = ManagementFactory.getRuntimeMXBean().getName().getBytes(StandardCharsets.UTF_8);
        client.getConnectionStateListenable().addListener(listener);
    }

    /** Starts the configuration of a lock. */
    public static Builder builder() {
        return new Builder();
    }

    /** The ensemble and base path, as {@code zookeeper://host:port,host:port/base/path}: for messages. */
    public String ensemble() {
        return "zookeeper://" + client.getZookeeperClient().getCurrentConnectionString()
                + (client.getNamespace() == null || client.getNamespace().isEmpty() ? "" : "/" + client.getNamespace())
                + basePath;
    }

    /**
     * The session timeout the ensemble granted this lock's client: how long the ensemble keeps a
     * lease after it last heard from the holder, and the {@link FencedLease#validity()} of every
     * lease, whatever the ttl asked for. It is what {@link Builder#sessionTimeout} asked for, bounded
     * by the server to its {@code minSessionTimeout} and {@code maxSessionTimeout} (by default 2 and
     * 20 times its {@code tickTime}). Before the first connection, waits for it up to the connection
     * timeout.
     *
     * @return the negotiated session timeout, or empty if the client has not connected to the
     *     ensemble (within the connection timeout, or before the thread was interrupted)
     * @throws IllegalStateException if this lock was closed
     */
    public Optional<Duration> sessionTimeout() {
        checkOpen();
        if (negotiatedSessionTimeout().isZero()) {
            try {
                connected(System.nanoTime() + client.getZookeeperClient().getConnectionTimeoutMs() * 1_000_000L);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return Optional.of(negotiatedSessionTimeout()).filter(timeout -> !timeout.isZero());
    }

    /**
     * Makes one attempt to lock {@code resource}: takes it if nobody holds it and nobody is
     * waiting for it. If the client is not connected, waits up to the connection timeout for a
     * connection first.
     *
     * @param ttl only checked to be positive: the lease lives as long as the session, and its
     *     {@link FencedLease#validity()} is the {@linkplain #sessionTimeout() session timeout}
     *     whatever the ttl
     * @return the lease, or empty if the lock is held or queued for, or the ensemble could not be
     *     reached within the connection timeout
     * @throws IllegalArgumentException if the resource is not a valid node name or the TTL is not positive
     * @throws IllegalStateException if this lock was closed
     * @throws QuorumLockException if ZooKeeper refused the request for a reason other than the
     *     connection (such as missing permissions on the base path), or the thread was interrupted
     */
    @Override
    public Optional<FencedLease> tryAcquire(String resource, Duration ttl) {
        String dir = lockDir(resource);
        checkTtl(ttl);
        checkOpen();
        long deadline = System.nanoTime() + client.getZookeeperClient().getConnectionTimeoutMs() * 1_000_000L;
        Attempt attempt = attempt(resource, dir, deadline, false);
        if (attempt.lease() == null && attempt.outcome().vote() != Vote.HELD_BY_OTHER) {
            log.warn("could not try to lock '{}': {}", resource, attempt.outcome());
        }
        return Optional.ofNullable(attempt.lease());
    }

    /**
     * Locks {@code resource}, waiting up to {@code maxWait}: for the holders ahead in the queue
     * (woken by a watch, without polling) and for the connection. An attempt that fails for a
     * connection problem is repeated after the {@linkplain Builder#retry(RetryPolicy) retry}
     * backoff. When the connection breaks in the middle of an attempt, the attempt may overrun
     * {@code maxWait} by up to about twice the connection timeout (with a client passed to {@link
     * Builder#client}: by what its retry policy allows). A {@code maxWait} of zero makes one
     * attempt without waiting.
     *
     * @param ttl only checked to be positive: the lease lives as long as the session, and its
     *     {@link FencedLease#validity()} is the {@linkplain #sessionTimeout() session timeout}
     *     whatever the ttl
     * @throws LockUnavailableException if it was not acquired in time, with the evidence of the
     *     last attempt: one outcome for the ensemble, naming the holder or the connection problem
     * @throws IllegalArgumentException if the resource is not a valid node name, the TTL is not
     *     positive or {@code maxWait} is negative
     * @throws IllegalStateException if this lock was closed
     * @throws QuorumLockException if ZooKeeper refused the request for a reason other than the
     *     connection, or the thread was interrupted (the interrupt flag stays set)
     */
    @Override
    public FencedLease acquire(String resource, Duration ttl, Duration maxWait) {
        String dir = lockDir(resource);
        checkTtl(ttl);
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, was " + maxWait.toMillis() + " ms");
        }
        checkOpen();
        long start = System.nanoTime();
        long deadline =
                start + (maxWait.compareTo(Duration.ofDays(36_500)) > 0 ? Long.MAX_VALUE / 4 : maxWait.toNanos());
        for (int attempts = 1; ; attempts++) {
            Attempt attempt = attempt(resource, dir, deadline, true);
            if (attempt.lease() != null) {
                return attempt.lease();
            }
            long now = System.nanoTime();
            log.debug("attempt {} to lock '{}' failed: {}", attempts, resource, attempt);
            if (attempt.outcome().vote() == Vote.HELD_BY_OTHER
                    || !retry.pauseBeforeNextAttempt(attempts, deadline - now, resource)) {
                throw new LockUnavailableException(
                        resource, Duration.ofNanos(now - start), attempts, 0, 1, List.of(attempt.outcome()));
            }
        }
    }

    /**
     * Runs {@code work} while holding the lock, and releases it afterwards. The session keeps the
     * lease alive, so the work may take as long as it needs. If the session is lost meanwhile, the
     * thread running the work is interrupted and the call ends with {@link LeaseLostException}
     * whatever the work returned; it also ends so if the connection is down when the work ends
     * (the lease could not be confirmed). The work cannot see the fencing token: where the storage
     * checks tokens, use {@link #acquire} and {@link CriticalSections#run} instead.
     *
     * @throws LockUnavailableException if the lock could not be acquired within {@code maxWait}
     * @throws LeaseLostException if the lease was lost while the work ran (the work's own
     *     exception, if any, is suppressed in it)
     * @throws X what the work throws, when the lease held throughout
     */
    @Override
    public <T, X extends Exception> T withLease(
            String resource, Duration ttl, Duration maxWait, LeasedSection<FencedLease, T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        FencedLease lease = acquire(resource, ttl, maxWait);
        return CriticalSections.run(lease, () -> work.run(lease));
    }

    /**
     * A third of the session timeout, whatever the ttl: Curator reports SUSPENDED, when a lease is
     * {@linkplain FencedLease#inDoubt() in doubt}, after two thirds of it without an answer, and the
     * ensemble expires the session at its end. Waits for the first connection (see {@link
     * #sessionTimeout()}) to know the negotiated timeout; zero, no notice to promise, without one.
     */
    @Override
    public Duration lossNotice(Duration ttl) {
        checkTtl(ttl);
        return sessionTimeout().orElse(Duration.ZERO).dividedBy(3);
    }

    /**
     * Closes the lock. Leases still held are lost ({@link FencedLease#lost()} completes, so work
     * under {@link #withLock} is interrupted) and their nodes deleted. A client this lock created
     * is closed, which ends its session; a client passed to {@link Builder#client} is left open.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        client.getConnectionStateListenable().removeListener(listener);
        for (ZooKeeperLease lease : List.copyOf(leases)) {
            lease.lose("the ZooKeeperLock was closed while the lease was held", null);
            if (!ownsClient) {
                lease.release();
            }
        }
        waiters.forEach(Waiter::wake);
        if (ownsClient) {
            client.close();
        }
    }

    // ---- one attempt -----------------------------------------------------------------------------

    /** The result of one attempt: a lease, or the outcome that explains why not. */
    record Attempt(ZooKeeperLease lease, NodeOutcome outcome) {}

    private Attempt attempt(String resource, String dir, long deadline, boolean wait) {
        String ours = null;
        boolean granted = false;
        Waiter waiter = new Waiter();
        waiters.add(waiter);
        try {
            if (!connected(deadline)) {
                return failure(
                        Vote.UNREACHABLE,
                        "no connection to the ensemble"
                                + (wait ? " within the wait" : " within the connection timeout"));
            }
            ours = create(dir);
            String name = ZKPaths.getNodeFromPath(ours);
            while (true) {
                checkOpen();
                if (!lastStateConnected()) {
                    // Curator has not yet reported the connection back: no grant on a doubtful connection.
                    waiter.await(deadline);
                    if (!lastStateConnected()) {
                        if (System.nanoTime() - deadline >= 0) {
                            return failure(Vote.UNREACHABLE, "the connection to the ensemble is " + lastState);
                        }
                        continue;
                    }
                }
                long changes = connectionChanges.get();
                LockQueue.Place place = LockQueue.place(client.getChildren().forPath(dir), name);
                if (!place.present()) {
                    return failure(Vote.ERROR, "the lock node " + ours + " vanished while waiting: the session ended");
                }
                if (place.first()) {
                    Grant grant = grant(resource, ours, changes);
                    if (grant.lease() != null) {
                        granted = true;
                        return new Attempt(grant.lease(), new NodeOutcome(ensemble(), Vote.YES, ""));
                    }
                    if (grant.refusal() != null) {
                        return failure(Vote.ERROR, grant.refusal());
                    }
                    continue;
                }
                if (!wait || System.nanoTime() - deadline >= 0) {
                    return failure(Vote.HELD_BY_OTHER, wait ? holderEvidence(dir, place) : place.holder());
                }
                try {
                    client.getData().usingWatcher(waiter).forPath(ZKPaths.makePath(dir, place.predecessor()));
                } catch (KeeperException.NoNodeException gone) {
                    continue;
                }
                waiter.await(deadline);
            }
        } catch (KeeperException e) {
            if (retryable(e.code())) {
                return failure(Vote.ERROR, e.getMessage());
            }
            throw new QuorumLockException(
                    "ZooKeeper refused to lock '" + resource + "' under " + ensemble() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new QuorumLockException("interrupted while acquiring '" + resource + "'", e);
        } catch (IllegalStateException e) {
            checkOpen();
            throw new QuorumLockException("could not lock '" + resource + "': " + e.getMessage(), e);
        } catch (QuorumLockException e) {
            throw e;
        } catch (Exception e) {
            throw new QuorumLockException("could not lock '" + resource + "': " + e, e);
        } finally {
            waiters.remove(waiter);
            if (ours != null && !granted) {
                deleteLockNode(ours, false);
            }
        }
    }

    /** Creates this contender's node; retries when the parent container was deleted under it. */
    private String create(String dir) throws Exception {
        for (int tries = 1; ; tries++) {
            try {
                return client.create()
                        .creatingParentContainersIfNeeded()
                        .withProtection()
                        .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                        .forPath(ZKPaths.makePath(dir, LockQueue.NODE_PREFIX), holder);
            } catch (KeeperException.NoNodeException e) {
                // ZooKeeper deleted the empty container between Curator's mkdirs and the create.
                if (tries >= CREATE_TRIES) {
                    throw e;
                }
            }
        }
    }

    /** A first place turned into a lease; or why not (refusal); or neither: unsettled, look again. */
    private record Grant(ZooKeeperLease lease, String refusal) {}

    /**
     * Turns a first place in the queue into a lease: reads the node's czxid (the token) and owner,
     * and sets the watch that reports its deletion. The lease is registered for connection events
     * before it is returned; if any event came since {@code changesBefore} (read before the queue
     * was), the grant is not settled: the caller looks again, so that no lease is handed out
     * suspended or with an event missed.
     */
    private Grant grant(String resource, String node, long changesBefore) throws Exception {
        ZooKeeperLease.NodeWatch watch = new ZooKeeperLease.NodeWatch();
        Stat stat = new Stat();
        client.getData().storingStatIn(stat).usingWatcher(watch).forPath(node);
        long session = currentSessionId();
        if (stat.getEphemeralOwner() != session) {
            // Curator gave up on a session that the ensemble has not expired yet; that node goes soon.
            return new Grant(
                    null,
                    "the lock node " + node + " belongs to session " + ZooKeeperLease.hex(stat.getEphemeralOwner())
                            + ", an earlier one of this client");
        }
        ZooKeeperLease lease =
                new ZooKeeperLease(this, resource, node, stat.getCzxid(), session, negotiatedSessionTimeout(), watch);
        leases.add(lease);
        watch.attach(lease);
        if (connectionChanges.get() != changesBefore || !lastStateConnected()) {
            lease.discard();
            return new Grant(null, null);
        }
        if (!lease.isValid()) {
            return new Grant(null, "the lock node " + node + " was deleted right after the grant");
        }
        log.debug("acquired '{}': token {}, node {}", resource, ZooKeeperLease.hex(stat.getCzxid()), node);
        return new Grant(lease, null);
    }

    /** Who holds the lock and how many wait, for the evidence of a failed acquire. */
    private String holderEvidence(String dir, LockQueue.Place place) {
        String holderNode = place.holder();
        int others = Math.max(0, place.queue().size() - 2);
        String waiting = "; " + others + " other contender" + (others == 1 ? "" : "s") + " waiting";
        try {
            Stat stat = new Stat();
            byte[] data = client.getData().storingStatIn(stat).forPath(ZKPaths.makePath(dir, holderNode));
            String who = data == null || data.length == 0 ? "" : new String(data, StandardCharsets.UTF_8) + ", ";
            return "holder " + who + "lock node " + holderNode + ", session "
                    + ZooKeeperLease.hex(stat.getEphemeralOwner()) + ", token " + ZooKeeperLease.hex(stat.getCzxid())
                    + waiting;
        } catch (Exception e) {
            return "holder: lock node " + holderNode + waiting;
        }
    }

    private Attempt failure(Vote vote, String detail) {
        return new Attempt(null, new NodeOutcome(ensemble(), vote, detail));
    }

    private boolean connected(long deadline) throws InterruptedException {
        if (client.getZookeeperClient().isConnected()) {
            return true;
        }
        long millis = (deadline - System.nanoTime() + 999_999) / 1_000_000;
        return millis > 0
                && client.blockUntilConnected((int) Math.min(millis, Integer.MAX_VALUE), TimeUnit.MILLISECONDS);
    }

    private static boolean retryable(KeeperException.Code code) {
        return switch (code) {
            case CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONEXPIRED, SESSIONMOVED, NONODE, NOTREADONLY -> true;
            default -> false;
        };
    }

    // ---- what leases use -------------------------------------------------------------------------

    CuratorFramework client() {
        return client;
    }

    long currentSessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    private Duration negotiatedSessionTimeout() {
        return Duration.ofMillis(client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs());
    }

    void forget(ZooKeeperLease lease) {
        leases.remove(lease);
    }

    /**
     * Deletes a lock node, never throwing. Synchronously when asked and connected, so that the
     * next contender can take the lock at once; otherwise in the background. Either way the
     * delete is guaranteed: Curator retries it after a connection loss while the session lives.
     */
    void deleteLockNode(String node, boolean wait) {
        try {
            if (wait && client.getZookeeperClient().isConnected()) {
                client.delete().guaranteed().forPath(node);
            } else {
                client.delete().guaranteed().inBackground().forPath(node);
            }
        } catch (KeeperException.NoNodeException e) {
            log.debug("lock node {} was already gone", node);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.debug("interrupted while deleting {}; Curator finishes the delete in the background", node);
        } catch (Exception e) {
            log.debug(
                    "could not delete lock node {} now ({}); the guaranteed delete goes on in the background",
                    node,
                    e.toString());
        }
    }

    void checkTtl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must be positive, was " + ttl.toMillis()
                    + " ms (a ZooKeeper lease lives as long as its session; the ttl is only checked)");
        }
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("this ZooKeeperLock was closed");
        }
    }

    private String lockDir(String resource) {
        if (resource == null || resource.isEmpty()) {
            throw new IllegalArgumentException(
                    "resource must not be empty: name the thing to lock, e.g. \"stock:sku-42\"");
        }
        if (resource.indexOf('/') >= 0 || resource.equals(".") || resource.equals("..")) {
            throw new IllegalArgumentException("resource must be one ZooKeeper node name, without '/' and not '.' or"
                    + " '..', was \"" + resource + "\": use another separator, e.g. \"stock:sku-42\"");
        }
        String dir = basePath + "/" + resource;
        try {
            PathUtils.validatePath(dir);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "resource \"" + resource + "\" is not a valid ZooKeeper node name: " + e.getMessage(), e);
        }
        return dir;
    }

    private boolean lastStateConnected() {
        ConnectionState state = lastState;
        return state == null || state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED;
    }

    private void stateChanged(ConnectionState state) {
        lastState = state;
        connectionChanges.incrementAndGet();
        log.debug("connection to {} is {}; {} lease(s) held", ensemble(), state, leases.size());
        switch (state) {
            case SUSPENDED, READ_ONLY -> leases.forEach(l -> l.suspend("the connection to the ensemble is " + state));
            case CONNECTED, RECONNECTED -> leases.forEach(ZooKeeperLease::recheck);
            case LOST ->
                leases.forEach(l -> l.lose(
                        "the ZooKeeper session ended (Curator reported LOST: the ensemble expired the session,"
                                + " or no server answered within the session timeout)",
                        null));
        }
        waiters.forEach(Waiter::wake);
    }

    /**
     * Wakes a waiting contender when the node it waits for changes, or when the connection state
     * does (watches of a lost session never fire).
     */
    private static final class Waiter implements Watcher {
        private boolean woken;

        @Override
        public void process(WatchedEvent event) {
            wake();
        }

        synchronized void wake() {
            woken = true;
            notifyAll();
        }

        synchronized void await(long deadline) throws InterruptedException {
            while (!woken) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            woken = false;
        }
    }

    /** Configures a {@link ZooKeeperLock}; every setting is checked in {@link #build()}. */
    public static final class Builder {
        private String connectString;
        private CuratorFramework client;
        private Duration sessionTimeout;
        private Duration connectionTimeout;
        private String basePath = DEFAULT_BASE_PATH;
        private RetryPolicy retry = RetryPolicy.DEFAULT;

        private Builder() {}

        /**
         * The ensemble, as ZooKeeper writes it: {@code host:port,host:port,...}, optionally
         * followed by a chroot path ({@code /app}). List every server of the ensemble. Either
         * this or {@link #client} must be set.
         */
        public Builder connectString(String connectString) {
            this.connectString = connectString;
            return this;
        }

        /**
         * Uses an existing, started Curator client instead of creating one; {@link
         * ZooKeeperLock#close()} then leaves it open. Its namespace, timeouts and retry policy
         * apply: do not set {@link #connectString}, {@link #sessionTimeout} or {@link
         * #connectionTimeout} too.
         */
        public Builder client(CuratorFramework client) {
            this.client = client;
            return this;
        }

        /**
         * The ZooKeeper session timeout: how long the ensemble keeps the lock nodes of a client it
         * no longer hears from, and so how long a crashed holder blocks the lock and how soon a
         * partitioned holder learns its loss. A lease lives as long as the session: this, not the
         * {@code ttl} passed to {@code acquire} or {@code tryAcquire}, is how long a lease outlives
         * its holder. The server bounds it (by default between 2 and 20 times its {@code
         * tickTime}), without an error; {@link ZooKeeperLock#sessionTimeout()} and each lease's
         * {@link FencedLease#validity()} report the negotiated value. The default is 10 s.
         */
        public Builder sessionTimeout(Duration timeout) {
            this.sessionTimeout = timeout;
            return this;
        }

        /**
         * How long to wait for a connection to the ensemble: in {@link ZooKeeperLock#tryAcquire}
         * when not connected, and per try in Curator's operations. At most the session timeout.
         * The default is 5 s, or the session timeout if that is shorter.
         */
        public Builder connectionTimeout(Duration timeout) {
            this.connectionTimeout = timeout;
            return this;
        }

        /**
         * The parent path of the lock nodes; each resource gets the container node {@code
         * <basePath>/<resource>}. The default is {@value ZooKeeperLock#DEFAULT_BASE_PATH}.
         */
        public Builder basePath(String path) {
            this.basePath = path;
            return this;
        }

        /**
         * The backoff between two attempts of {@link ZooKeeperLock#acquire} when one fails for a
         * connection problem (waiting for a held lock needs no polling: a watch wakes the next
         * contender), and, for the client this lock creates, between Curator's retries of one
         * operation, for up to the connection timeout. The default is {@link RetryPolicy#DEFAULT}.
         */
        public Builder retry(RetryPolicy policy) {
            this.retry = policy;
            return this;
        }

        /**
         * Checks the configuration and builds the lock. A client created here starts connecting
         * in the background: {@code build()} does not wait for the ensemble.
         *
         * @throws IllegalArgumentException naming the setting that is wrong and how to fix it
         */
        public ZooKeeperLock build() {
            validateBasePath();
            if (retry == null) {
                throw new IllegalArgumentException(
                        "retry must not be null: use RetryPolicy.DEFAULT or RetryPolicy.jitteredBackoff");
            }
            if (client != null) {
                return withClient();
            }
            if (connectString == null || connectString.isBlank()) {
                throw new IllegalArgumentException("no ensemble: set connectString(\"zk1:2181,zk2:2181,zk3:2181\")"
                        + " or pass a started Curator client with client(...)");
            }
            validateConnectString();
            Duration session = sessionTimeout == null ? DEFAULT_SESSION_TIMEOUT : sessionTimeout;
            Duration connection = connectionTimeout != null
                    ? connectionTimeout
                    : DEFAULT_CONNECTION_TIMEOUT.compareTo(session) < 0 ? DEFAULT_CONNECTION_TIMEOUT : session;
            checkTimeout("sessionTimeout", session, "10 s");
            checkTimeout("connectionTimeout", connection, "5 s");
            if (connection.compareTo(session) > 0) {
                throw new IllegalArgumentException("connectionTimeout (" + connection.toMillis()
                        + " ms) must not be longer than sessionTimeout (" + session.toMillis()
                        + " ms): the session is lost before such a connection is given up; lower connectionTimeout"
                        + " or raise sessionTimeout");
            }
            CuratorFramework created = CuratorFrameworkFactory.builder()
                    .connectString(connectString)
                    .sessionTimeoutMs((int) session.toMillis())
                    .connectionTimeoutMs((int) connection.toMillis())
                    .retryPolicy(new CuratorRetry(retry, connection))
                    .build();
            created.start();
            return new ZooKeeperLock(created, true, basePath, retry);
        }

        private ZooKeeperLock withClient() {
            if (connectString != null) {
                throw new IllegalArgumentException("both connectString and client are set: the client already"
                        + " knows its ensemble; set only one of them");
            }
            if (sessionTimeout != null || connectionTimeout != null) {
                throw new IllegalArgumentException("sessionTimeout and connectionTimeout configure the client this"
                        + " lock creates; with client(...) set them on that CuratorFramework instead");
            }
            CuratorFrameworkState state = client.getState();
            if (state != CuratorFrameworkState.STARTED) {
                throw new IllegalArgumentException("the client passed to client(...) is " + state + ", not STARTED: "
                        + (state == CuratorFrameworkState.LATENT
                                ? "call client.start() before build()"
                                : "it was closed; pass an open client"));
            }
            return new ZooKeeperLock(client, false, basePath, retry);
        }

        private void validateConnectString() {
            String redacted = Secrets.redactUri(connectString.trim());
            if (!redacted.equals(connectString.trim())) {
                // Not shown as given: what is before the last '@' may be a password.
                throw new IllegalArgumentException("connectString '" + redacted
                        + "' is not a ZooKeeper connect string (it holds '@', '?' or '#': ZooKeeper takes no"
                        + " credentials there; give them to your own Curator client with client(...)): write"
                        + " host:port,host:port[/chroot], e.g. \"zk1:2181,zk2:2181,zk3:2181\"");
            }
            String problem;
            try {
                ConnectStringParser parsed = new ConnectStringParser(connectString.trim());
                problem = parsed.getServerAddresses().isEmpty() ? "it names no server" : null;
                for (InetSocketAddress address : parsed.getServerAddresses()) {
                    if (address.getHostString().isBlank() || address.getPort() == 0) {
                        problem = "'" + address.getHostString() + ":" + address.getPort() + "' is not host:port";
                    }
                }
            } catch (RuntimeException e) {
                problem = e.getMessage();
            }
            if (problem != null) {
                throw new IllegalArgumentException("connectString '" + connectString + "' is not a ZooKeeper connect"
                        + " string (" + problem + "): write host:port,host:port[/chroot], e.g."
                        + " \"zk1:2181,zk2:2181,zk3:2181\"");
            }
        }

        private void validateBasePath() {
            String problem = null;
            if (basePath == null || !basePath.startsWith("/") || basePath.length() < 2) {
                problem = "it must start with '/' and name a node";
            } else if (basePath.endsWith("/")) {
                problem = "it must not end with '/'";
            } else if (basePath.equals("/zookeeper") || basePath.startsWith("/zookeeper/")) {
                problem = "ZooKeeper reserves /zookeeper for itself";
            } else {
                try {
                    PathUtils.validatePath(basePath);
                } catch (IllegalArgumentException e) {
                    problem = e.getMessage();
                }
            }
            if (problem != null) {
                throw new IllegalArgumentException("basePath " + (basePath == null ? "null" : "'" + basePath + "'")
                        + " is not usable (" + problem + "): use an absolute ZooKeeper path such as the default "
                        + DEFAULT_BASE_PATH);
            }
        }

        private static void checkTimeout(String setting, Duration timeout, String byDefault) {
            if (timeout.isZero() || timeout.isNegative()) {
                throw new IllegalArgumentException(setting + " must be positive, was " + timeout.toMillis()
                        + " ms (the default is " + byDefault + ")");
            }
            if (timeout.toMillis() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(
                        setting + " must be at most " + Integer.MAX_VALUE + " ms, was " + timeout.toMillis() + " ms");
            }
        }
    }
}
