package io.quorumlock.zookeeper;

import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LeasedSection;
import io.quorumlock.LockHolder;
import io.quorumlock.LockListener;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.CriticalSections;
import io.quorumlock.internal.LeaseTimes;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import io.quorumlock.internal.WaitsWithoutThread;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.common.PathUtils;
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
 * #sessionTimeout() session timeout}, set with {@link ZooKeeperLockBuilder#sessionTimeout} (10 s by
 * default) and bounded by the ensemble; a lock whose leases should last about {@code ttl} after a
 * crash is built with {@code sessionTimeout(ttl)}, and checks {@link #sessionTimeout()}. Liveness
 * comes from the session: when the connection drops (Curator's SUSPENDED), {@link
 * FencedLease#isValid()} turns false at once; when it comes back and the node is still this
 * session's, the lease is valid again. When the session is lost (Curator's LOST: the ensemble
 * expired it, or no server answered for the session timeout), or the lease's heartbeats could not
 * keep it (it stayed suspended, or unanswered, until no heartbeat could be answered with a tenth of
 * the session timeout left of it), {@link FencedLease#lost()} completes with the evidence, and the
 * lock goes to the next contender once the node is gone: with the session, or deleted by the lease
 * when its session lives on. So after a partition the old holder learns its loss within the session
 * timeout, but a process pause can still let it write late: hand the fencing token to the storage
 * with every write.
 *
 * <p>What the {@link FencedLease} methods mean here: {@link FencedLease#validity()} is the session
 * timeout negotiated with the ensemble, the lease's length as a TTL would be (the ensemble keeps the
 * node that long after it last heard from the client); {@link FencedLease#remaining()} is the
 * countdown to the lease's end, which is the send time of the latest request on the session that
 * the ensemble answered, plus the session timeout, less a drift allowance of 1% + 2 ms: never later
 * than the ensemble may expire the session. While connected, each lease sends its own {@code exists}
 * on its node, a heartbeat, when two thirds of the session timeout are left of it (at once if it
 * was granted later than that), which moves its end along; it is zero while the lease is not
 * valid; {@link FencedLease#extend(Duration)} has nothing to extend and returns {@code isValid()};
 * {@link FencedLease#release()} deletes the node (waiting for the delete when connected, else
 * leaving it to Curator's guaranteed delete in the background) and never throws, also after a loss.
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
public final class ZooKeeperLock implements DistributedLock<FencedLease>, Clocked, WaitsWithoutThread<FencedLease> {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLock.class);

    /** The default parent of the resources' lock nodes. */
    public static final String DEFAULT_BASE_PATH = "/quorumlock/locks";

    /** The lock's workers for the leases' heartbeats, which wait for the ensemble's answers. */
    private static final int HEARTBEAT_WORKERS = 4;

    private static final AtomicInteger instances = new AtomicInteger();

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final String basePath;
    private final RetryPolicy retry;
    private final ConnectionWatch connection;
    private final LockAttempts attempts;
    /** The timing and retries of the attempts of this lock and its recipes. */
    private final AttemptTiming timing;

    private final QueueReads reads;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final LockEvents events;
    /** The one clock of the lock and its leases. */
    private final Ticker ticker;
    /** The leases' timer, heartbeat workers and notice threads; they start with the first lease. */
    private final Timers timers;

    ZooKeeperLock(
            CuratorFramework client,
            boolean ownsClient,
            String basePath,
            RetryPolicy retry,
            String holder,
            LockListener listener,
            Ticker ticker,
            Timers timers) {
        this.ticker = ticker;
        this.events = LockEvents.of("zookeeper", listener);
        this.client = client;
        this.ownsClient = ownsClient;
        this.basePath = basePath;
        this.retry = retry;
        this.connection = new ConnectionWatch(client, this::ensemble, ticker);
        this.timing = new AttemptTiming(ticker, events, retry, this::connectTimeout);
        this.attempts = new LockAttempts(this, client, connection, holder.getBytes(StandardCharsets.UTF_8));
        this.reads = new QueueReads(this, client, connection);
        this.timers =
                timers != null ? timers : Timers.threads("zookeeper-" + instances.incrementAndGet(), HEARTBEAT_WORKERS);
    }

    /** Starts the configuration of a lock. */
    public static ZooKeeperLockBuilder builder() {
        return new ZooKeeperLockBuilder();
    }

    /** The ensemble and base path, as {@code zookeeper://host:port,host:port/base/path}: for messages. */
    public String ensemble() {
        return "zookeeper://" + client.getZookeeperClient().getCurrentConnectionString()
                + (client.getNamespace() == null || client.getNamespace().isEmpty() ? "" : "/" + client.getNamespace())
                + basePath;
    }

    /**
     * Whether the client is connected to the ensemble now, as Curator last saw it: for health
     * checks. Never waits. A lock that is not connected grants nothing, and its leases are lost
     * once the session expires.
     */
    public boolean isConnected() {
        return !closed.get() && client.getZookeeperClient().isConnected();
    }

    /**
     * The session timeout the ensemble granted this lock's client: how long the ensemble keeps a
     * lease after it last heard from the holder, and the {@link FencedLease#validity()} of every
     * lease, whatever the ttl asked for. It is what {@link ZooKeeperLockBuilder#sessionTimeout}
     * asked for, bounded by the server to its {@code minSessionTimeout} and {@code
     * maxSessionTimeout} (by default 2 and 20 times its {@code tickTime}). Before the first
     * connection, waits for it up to the connect timeout.
     *
     * @return the negotiated session timeout, or empty if the client has not connected to the
     *     ensemble (within the connect timeout, or before the thread was interrupted)
     * @throws IllegalStateException if this lock was closed
     */
    public Optional<Duration> sessionTimeout() {
        checkOpen();
        if (negotiatedSessionTimeout().isZero()) {
            try {
                connection.awaitConnected(
                        ticker.nanos() + client.getZookeeperClient().getConnectionTimeoutMs() * 1_000_000L);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return Optional.of(negotiatedSessionTimeout()).filter(timeout -> !timeout.isZero());
    }

    /**
     * Makes one attempt to lock {@code resource}: takes it if nobody holds it and nobody is
     * waiting for it. If the client is not connected, waits up to the connect timeout for a
     * connection first. It returns within the connect timeout and the {@linkplain
     * AcquireLoop#overrun overrun} (the larger of 100 ms and a twentieth of the connect timeout:
     * 250 ms by default), whatever the ensemble does.
     *
     * @param ttl only checked to be positive: the lease lives as long as the session, and its
     *     {@link FencedLease#validity()} is the {@linkplain #sessionTimeout() session timeout}
     *     whatever the ttl
     * @return the lease, or empty if another client holds the lock or is queued for it
     * @throws LockUnavailableException if the ensemble could not be reached within the connect
     *     timeout or did not answer in time, with its answer as evidence
     * @throws IllegalArgumentException if the resource is not a valid node name or the TTL is not positive
     * @throws IllegalStateException if this lock was closed
     * @throws QuorumlockException if ZooKeeper refused the request for a reason other than the
     *     connection (such as missing permissions on the base path), or the thread was interrupted
     */
    @Override
    public Optional<FencedLease> tryAcquire(String resource, Duration ttl) {
        String dir = lockDir(resource);
        checkTtl(ttl);
        return timing.tryAcquireBy(
                resource, (deadline, end, mode) -> attempts.attempt(resource, dir, deadline, end, mode));
    }

    /**
     * Locks {@code resource}, waiting up to {@code maxWait}: for the holders ahead in the queue
     * (woken by a watch, without polling) and for the connection. An attempt that fails for a
     * connection problem is repeated after the {@linkplain ZooKeeperLockBuilder#retry(RetryPolicy)
     * retry} backoff. The call returns within {@code maxWait} and the {@linkplain
     * AcquireLoop#overrun overrun}, the larger of 100 ms and a twentieth of the {@linkplain
     * ZooKeeperLockBuilder#connectTimeout connect timeout} (250 ms by default), whatever the
     * ensemble does: every request is waited for until the end of the wait and the overrun at most,
     * also when the connection goes silent (Curator's retries then go on in the background), and if
     * no answer came the exception says so. A node created for a request that was given up is
     * deleted, when the ensemble is reached again, or with the session. A {@code maxWait} of zero
     * makes one attempt, as {@link #tryAcquire} does: it waits for no holder, but for the
     * connection (a lock just built has none yet) and its requests up to the connect timeout.
     *
     * @param ttl only checked to be positive: the lease lives as long as the session, and its
     *     {@link FencedLease#validity()} is the {@linkplain #sessionTimeout() session timeout}
     *     whatever the ttl
     * @throws LockUnavailableException if it was not acquired in time, with the evidence of the
     *     last attempt: one outcome for the ensemble, naming the holder or the connection problem
     * @throws IllegalArgumentException if the resource is not a valid node name, the TTL is not
     *     positive or {@code maxWait} is negative
     * @throws IllegalStateException if this lock was closed
     * @throws QuorumlockException if ZooKeeper refused the request for a reason other than the
     *     connection, or the thread was interrupted (the interrupt flag stays set)
     */
    @Override
    public FencedLease acquire(String resource, Duration ttl, Duration maxWait) {
        String dir = lockDir(resource);
        checkTtl(ttl);
        return timing.acquireBy(
                resource, maxWait, (deadline, end, mode) -> attempts.attempt(resource, dir, deadline, end, mode));
    }

    /**
     * As {@link #acquire}, holding no thread while it waits: the attempts run on the threads that
     * the asynchronous acquires of this process share, and a wait in the queue ends at a watch, a
     * connection change or a timer. Cancelling the future gives the wait up (the attempt's node is
     * deleted); a lease granted after the cancel is released. {@link #acquireAsync} takes its leases
     * with this.
     */
    @Override
    public CompletableFuture<FencedLease> acquireWithoutThread(String resource, Duration ttl, Duration maxWait) {
        String dir = lockDir(resource);
        checkTtl(ttl);
        checkOpen();
        return timing.acquireWithoutThreadBy(
                resource,
                maxWait,
                (deadline, end, mode, acquire) ->
                        attempts.attemptWithoutThread(resource, dir, LockQueue.LOCK, deadline, end, mode, acquire));
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
        return Duration.ofNanos(LeaseTimes.doubtNoticeNanos(
                sessionTimeout().orElse(Duration.ZERO).toNanos()));
    }

    /**
     * Who holds {@code resource} now: the first lock node of the resource's queue, the one the lock
     * grants, read after a {@code sync}, so that the server this client is connected to has caught
     * up with the leader. The name is the data the holder's lock wrote into its node ({@link
     * ZooKeeperLockBuilder#holder(String)}); the token is the node's czxid, the fencing token of
     * the holder's lease. Empty if no lock node is queued (free, released, or its session expired).
     * A contender whose node was created a moment ago and is first in line counts as the holder:
     * the lock is its to take. If the client is not connected, waits for a connection up to the
     * {@linkplain ZooKeeperLockBuilder#connectTimeout connect timeout}; every request is bounded by
     * it and the {@linkplain AcquireLoop#overrun overrun}.
     *
     * @throws QuorumlockException naming the ensemble and what failed, if no connection or no
     *     answer came in time, or ZooKeeper refused the reads (such as for missing permissions)
     * @throws IllegalArgumentException if the resource is not a valid node name
     * @throws IllegalStateException if this lock was closed
     */
    @Override
    public Optional<LockHolder> holder(String resource) {
        String dir = lockDir(resource);
        return reads.holder(resource, dir);
    }

    /**
     * Closes the lock. Leases still held are lost ({@link FencedLease#lost()} completes, so work
     * under {@link #withLock} is interrupted) and their nodes deleted. A client this lock created
     * is closed, which ends its session; a client passed to {@link ZooKeeperLockBuilder#client} is
     * left open.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        connection.close();
        for (ZooKeeperLease lease : connection.leases()) {
            lease.loseOnClose();
            if (!ownsClient) {
                lease.release();
            }
        }
        connection.wakeWaiters();
        timers.close();
        if (ownsClient) {
            client.close();
        }
    }

    // ---- what leases use -------------------------------------------------------------------------

    /** The lock's clock: every validity and deadline of the lock counts on it. */
    @Override
    public Ticker ticker() {
        return ticker;
    }

    LockEvents events() {
        return events;
    }

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

    AttemptTiming timing() {
        return timing;
    }

    LockAttempts attempts() {
        return attempts;
    }

    QueueReads reads() {
        return reads;
    }

    Duration connectTimeout() {
        return Duration.ofMillis(client.getZookeeperClient().getConnectionTimeoutMs());
    }

    Duration negotiatedSessionTimeout() {
        return Duration.ofMillis(client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs());
    }

    Timers timers() {
        return timers;
    }

    void forget(ZooKeeperLease lease) {
        connection.forget(lease);
    }

    /**
     * A lease was lost: it no longer follows the connection, and its node is deleted in the
     * background, since the session may live on (a lease given up while suspended, the connection
     * then back) and the node would keep the lock from the next contender. A close leaves the
     * nodes to the end of the session or to the releases.
     */
    void lost(ZooKeeperLease lease) {
        connection.forget(lease);
        if (!closed.get()) {
            deleteLockNode(lease.node(), false);
        }
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
        Settings.ttl(ttl, " (a ZooKeeper lease lives as long as its session; the ttl is only checked)");
    }

    void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("this ZooKeeperLock was closed");
        }
    }

    private String lockDir(String resource) {
        Settings.resource(resource, "stock:sku-42");
        if (resource.indexOf('/') >= 0 || resource.equals(".") || resource.equals("..")) {
            throw new IllegalSettingException(
                    "resource",
                    "resource must be one ZooKeeper node name, without '/' and not '.' or '..', was \"" + resource
                            + "\": use another separator, e.g. \"stock:sku-42\"");
        }
        String dir = basePath + "/" + resource;
        try {
            PathUtils.validatePath(dir);
        } catch (IllegalArgumentException e) {
            throw new IllegalSettingException(
                    "resource",
                    -1,
                    "resource \"" + resource + "\" is not a valid ZooKeeper node name: " + e.getMessage(),
                    e);
        }
        return dir;
    }
}
