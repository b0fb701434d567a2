package io.quorumlock.zookeeper;

import io.quorumlock.FencedLease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.internal.CoreLease;
import io.quorumlock.internal.KeepAlive;
import io.quorumlock.internal.LeaseCore;
import io.quorumlock.internal.LeaseTimes;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease granted by {@link ZooKeeperLock}: the holder's own ephemeral lock node, alive as long
 * as the session that created it.
 *
 * <p>States: VALID; SUSPENDED while the connection is down or until ownership is re-checked after
 * it came back; LOST once the session (or the node) is known to be gone, or no heartbeat was
 * answered in time; RELEASED. LOST and RELEASED are final, and only the first of them happens: a
 * released lease never reports a loss.
 *
 * <p>The lease's end counts from what the ensemble has answered: the send time of the latest
 * request on this session that it answered (the listing of the queue at the grant, the re-check
 * after a reconnection, and the lease's heartbeats), plus the session timeout, less the drift
 * allowance. The ensemble heard from the session no earlier than that send, so it cannot expire
 * the session before the end. The heartbeat is an {@code exists} on the lease's node, sent on the
 * session by the lease engine ({@link KeepAlive}) when two thirds of the session timeout are left
 * of the lease; the engine also tells the doubt and loses the lease at its deadline.
 *
 * <p>The lease is in doubt at the first suspension (Curator's SUSPENDED: no answer from the
 * ensemble for about two thirds of the session timeout, so it may expire the session in the third
 * that is left), when a third of the session timeout is left without an answered heartbeat, or at
 * the loss, whichever comes first; it may become valid again after a suspension.
 */
final class ZooKeeperLease extends CoreLease implements FencedLease, KeepAlive.Driver {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLease.class);

    private final ZooKeeperLock lock;
    private final String node;
    private final long token;
    private final long sessionId;
    /** The session timeout, the lease's length. */
    private final Duration validity;
    /** The longest a heartbeat waits for its answer. */
    private final long roundNanos;

    private final NodeWatch watch;
    private final KeepAlive keepAlive;

    ZooKeeperLease(
            ZooKeeperLock lock,
            String resource,
            String node,
            long token,
            long sessionId,
            Duration validity,
            long answeredSentNanos,
            NodeWatch watch) {
        super(new LeaseCore(
                resource,
                lock.ticker(),
                lock.events(),
                LeaseCore.State.VALID,
                LeaseTimes.endAfter(answeredSentNanos, validity.toNanos()),
                validity.toNanos()));
        this.lock = lock;
        this.node = node;
        this.token = token;
        this.sessionId = sessionId;
        this.validity = validity;
        this.roundNanos = heartbeatWaitNanos(validity);
        this.watch = watch;
        this.keepAlive = new KeepAlive(core, this, lock.timers(), validity.toNanos(), roundNanos);
    }

    /**
     * How long a lease's heartbeat waits for its answer, for a session of {@code session}: a tenth
     * of it. The ensemble answers a connected session in milliseconds; the bound leaves room for a
     * few heartbeats more before the lease is given up.
     */
    private static long heartbeatWaitNanos(Duration session) {
        return session.toNanos() / 10;
    }

    /**
     * The session timeout negotiated with the ensemble, the lease's length as a TTL would be:
     * how long the ensemble keeps the lock node after it last heard from this client. The
     * countdown is {@link #remaining()}.
     */
    @Override
    public Duration validity() {
        return validity;
    }

    /**
     * Nothing to extend: the session keeps the lock node alive. Returns whether the lease is valid.
     */
    @Override
    public boolean extend(Duration ttl) {
        lock.checkTtl(ttl);
        checkNotReleased();
        return isValid();
    }

    @Override
    public long fencingToken() {
        return token;
    }

    @Override
    public void release() {
        LeaseCore.State before = core.release();
        if (before == LeaseCore.State.RELEASED) {
            return;
        }
        keepAlive.stop();
        lock.forget(this);
        log.debug("releasing '{}' (token {}, was {})", core.resource(), hex(token), before);
        lock.deleteLockNode(node, before == LeaseCore.State.VALID);
        core.released(before);
    }

    /** Drops a grant that did not settle, leaving its node to the contender that goes on with it. */
    void discard() {
        core.release();
        lock.forget(this);
    }

    /** Starts the heartbeats. */
    void startHeartbeats() {
        keepAlive.start(validity.toNanos());
    }

    /** Ends the lease as lost because its lock is being closed, telling it on the closing thread. */
    void loseOnClose() {
        keepAlive.lose("the ZooKeeperLock was closed while the lease was held", true);
    }

    // ---- driven by the lock's connection listener and the node watch ------------------------------

    /** The connection is down (or read-only): the lease cannot be trusted until re-checked. */
    void suspend(String why) {
        int suspension = core.suspend(new LeaseLostException(
                core.resource(),
                "the connection to the ensemble is SUSPENDED (" + why + "): the ensemble may expire session "
                        + hex(sessionId) + " before it comes back, and another client may then hold the lock;"
                        + " fencing token " + hex(token),
                null));
        if (suspension > 0) {
            log.info("lease on '{}' (token {}) suspended: {}", core.resource(), hex(token), why);
        }
    }

    /** The connection is back: checks that the lock node still exists and is this session's. */
    void recheck() {
        int seen = core.suspension();
        if (seen < 0) {
            return;
        }
        long current = lock.currentSessionId();
        if (current != sessionId) {
            lose(sessionChanged(current, " while the connection was down"));
            return;
        }
        long sent = core.nowNanos();
        try {
            lock.client()
                    .getData()
                    .usingWatcher(watch)
                    .inBackground((client, event) -> rechecked(seen, sent, event))
                    .forPath(node);
        } catch (Exception e) {
            log.debug(
                    "could not re-check '{}' after reconnection; it stays suspended: {}",
                    core.resource(),
                    e.toString());
        }
    }

    private void rechecked(int seen, long sent, CuratorEvent event) {
        KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
        Stat stat = event.getStat();
        if (code == KeeperException.Code.NONODE) {
            lose("the lock node was gone when the connection came back");
        } else if (code != KeeperException.Code.OK || stat == null) {
            log.info(
                    "could not re-check '{}' after reconnection ({}); it stays suspended until the next reconnection",
                    core.resource(),
                    code);
        } else if (!ours(stat)) {
            lose(notOurs(stat));
        } else if (lock.currentSessionId() != sessionId) {
            log.info("re-checked '{}' on another session than the lease's; it stays suspended", core.resource());
        } else {
            long suspendedMillis = core.suspendedMillis();
            if (core.resume(seen, LeaseTimes.endAfter(sent, validity.toNanos()))) {
                log.info(
                        "lease on '{}' (token {}) valid again after {} ms: the lock node is still this session's",
                        core.resource(),
                        hex(token),
                        suspendedMillis);
            }
        }
    }

    /**
     * Loses the lease with the evidence {@code why}, unless it was already lost or released; the
     * notice is told on the lock's notice threads.
     *
     * @return true if this call lost it
     */
    boolean lose(String why) {
        return keepAlive.lose(why, false);
    }

    // ---- its heartbeats, for the engine ------------------------------------------------------------

    /**
     * One heartbeat: the lease's cheap request, {@code exists} on its lock node, sent on the
     * session's ZooKeeper handle (not through Curator's background retries, which could resend it
     * on a later session), waited for up to the round's bound. Nothing is sent while the handle is
     * not connected.
     */
    @Override
    public KeepAlive.Result renew(long ttlNanos) {
        ZooKeeper handle;
        try {
            handle = lock.client().getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            return KeepAlive.Result.notSent("no handle on the session: " + e);
        }
        long current = handle.getSessionId();
        if (current != sessionId) {
            return KeepAlive.Result.gone(sessionChanged(current, ""));
        }
        ZooKeeper.States state = handle.getState();
        if (!state.isConnected()) {
            return KeepAlive.Result.notSent("the session's connection is " + state);
        }
        CompletableFuture<KeepAlive.Result> answer = new CompletableFuture<>();
        try {
            String path = ZKPaths.fixForNamespace(lock.client().getNamespace(), node);
            handle.exists(path, false, (rc, p, context, stat) -> answer.complete(answered(rc, stat)), null);
        } catch (RuntimeException e) {
            return KeepAlive.Result.notSent("the heartbeat could not be sent: " + e);
        }
        try {
            return answer.get(roundNanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return KeepAlive.Result.unknown("no answer to the heartbeat within " + roundNanos / 1_000_000 + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return KeepAlive.Result.unknown("interrupted while waiting for the heartbeat's answer");
        } catch (ExecutionException e) {
            return KeepAlive.Result.unknown("the heartbeat failed: " + e.getCause());
        }
    }

    /** What the answer to a heartbeat says of the lease. */
    private KeepAlive.Result answered(int rc, Stat stat) {
        KeeperException.Code code = KeeperException.Code.get(rc);
        if (code == KeeperException.Code.NONODE) {
            return KeepAlive.Result.gone("the lock node was gone while the session was alive");
        } else if (code == KeeperException.Code.SESSIONEXPIRED) {
            return KeepAlive.Result.gone("the ensemble expired session " + hex(sessionId));
        } else if (code != KeeperException.Code.OK || stat == null) {
            return KeepAlive.Result.unknown("the heartbeat was answered " + code);
        } else if (!ours(stat)) {
            return KeepAlive.Result.gone(notOurs(stat));
        }
        return KeepAlive.Result.RENEWED;
    }

    @Override
    public LeaseLostException evidence(String why) {
        long suspendedMillis = core.suspendedMillis();
        String message = why
                + (suspendedMillis >= 0 ? " (disconnected for " + suspendedMillis + " ms)" : "")
                + "; lock node " + node + ", session " + hex(sessionId) + ", fencing token " + hex(token)
                + ": another client may hold the lock now, and storage that has seen a newer token refuses this one";
        return new LeaseLostException(core.resource(), message, null);
    }

    @Override
    public void onLost() {
        lock.lost(this);
    }

    private boolean ours(Stat stat) {
        return stat.getEphemeralOwner() == sessionId && stat.getCzxid() == token;
    }

    private String notOurs(Stat stat) {
        return "the lock node now belongs to session " + hex(stat.getEphemeralOwner()) + " (czxid "
                + hex(stat.getCzxid()) + "), not to this lease's";
    }

    /** Why a lease whose session became {@code current} is gone; {@code when} says when that was seen. */
    private String sessionChanged(long current, String when) {
        return "the ZooKeeper session changed from " + hex(sessionId) + " to " + hex(current) + when
                + ": the old session's lock node is deleted by the ensemble";
    }

    LeaseCore.State state() {
        return core.state();
    }

    String node() {
        return node;
    }

    long sessionId() {
        return sessionId;
    }

    static String hex(long value) {
        return "0x" + Long.toHexString(value);
    }

    @Override
    public String toString() {
        return "ZooKeeperLease[" + core.resource() + ", token " + hex(token) + ", node " + node + ", session "
                + hex(sessionId) + ", " + core.state() + "]";
    }

    /**
     * Checks that the lock node is still there after a change in the queue, with an {@code exists}
     * that also watches the node itself from then on: a deletion loses the lease.
     */
    private void checkNode() {
        if (!core.state().held()) {
            return;
        }
        try {
            lock.client()
                    .checkExists()
                    .usingWatcher(watch)
                    .inBackground((client, event) -> {
                        if (KeeperException.Code.get(event.getResultCode()) == KeeperException.Code.NONODE) {
                            lose("the lock node was deleted while the session was alive");
                        }
                    })
                    .forPath(node);
        } catch (Exception e) {
            log.debug("could not check the lock node of '{}' now: {}", core.resource(), e.toString());
        }
    }

    /**
     * The watch that reports the deletion of the lease's own lock node while the session lives (by
     * hand, or by an administrator), which loses the lease. It is first set on the queue by the
     * listing that made the lease, so it costs no request of its own: a change in the queue has
     * the lease check its node with an {@code exists} that watches the node itself. The watch is
     * set before the lease exists, so a change seen before {@link #attach} is kept and checked on
     * attaching.
     */
    static final class NodeWatch implements Watcher {
        private ZooKeeperLease lease;
        private boolean changed;

        void attach(ZooKeeperLease lease) {
            boolean early;
            synchronized (this) {
                this.lease = Objects.requireNonNull(lease);
                early = changed;
            }
            if (early) {
                lease.checkNode();
            }
        }

        @Override
        public void process(WatchedEvent event) {
            Event.EventType type = event.getType();
            if (type != Event.EventType.NodeDeleted && type != Event.EventType.NodeChildrenChanged) {
                // Connection events reach every watch; the lock's connection listener handles them.
                return;
            }
            ZooKeeperLease target;
            synchronized (this) {
                changed = true;
                target = lease;
            }
            if (target == null) {
                return;
            }
            if (type == Event.EventType.NodeDeleted) {
                target.lose("the lock node was deleted while the session was alive");
            } else {
                target.checkNode();
            }
        }
    }
}
