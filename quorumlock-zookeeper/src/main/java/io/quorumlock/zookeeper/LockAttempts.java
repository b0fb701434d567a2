package io.quorumlock.zookeeper;

import io.quorumlock.FencedLease;
import io.quorumlock.QuorumlockException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.AcquireLoop.Attempt;
import io.quorumlock.internal.AsyncAcquireLoop;
import io.quorumlock.internal.Holders;
import io.quorumlock.zookeeper.ZooKeeperCalls.NoAnswer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt to take a resource's lock: create this contender's ephemeral-sequential node, wait
 * for the node just before it to go (woken by a watch, or by the {@link ConnectionWatch}), and
 * turn the first place into a lease whose fencing token is the node's czxid. A node that did not
 * become a lease is deleted as the attempt returns (in the background, guaranteed by Curator).
 *
 * <p>Every request goes out in the background and is waited for until the attempt's end at most
 * ({@link ZooKeeperCalls}), whatever the ensemble does. A create given up at the end deletes its
 * node when it is answered after all, so no node is left that the ensemble would grant to nobody
 * while the session lives.
 */
final class LockAttempts {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLock.class);

    private static final int CREATE_TRIES = 3;

    /** How often a contender without a connection looks whether it is back, should no change wake it. */
    private static final long CONNECTION_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final ZooKeeperLock lock;
    private final CuratorFramework client;
    private final ConnectionWatch connection;
    private final ZooKeeperCalls calls;
    private final QueueRefusals refusals;
    /** The data of this lock's nodes: who holds them, as refused contenders are told. */
    private final byte[] holder;

    LockAttempts(ZooKeeperLock lock, CuratorFramework client, ConnectionWatch connection, byte[] holder) {
        this.lock = lock;
        this.client = client;
        this.connection = connection;
        this.calls = new ZooKeeperCalls(lock.ticker());
        this.holder = holder.clone();
        this.refusals = new QueueRefusals(lock, client, calls, this.holder);
    }

    /** How an attempt treats the holders ahead of it, and a refusal. */
    enum Mode {
        /** {@code acquire}: waits for the holders ahead until the deadline. */
        WAIT,
        /** {@code tryAcquire}, or {@code acquire} with a {@code maxWait} of zero: waits for no holder. */
        ONCE
    }

    /**
     * Makes one attempt on the lock directory {@code dir}, waiting for a connection up to {@code
     * deadline} (the lock's ticker), and, in {@link Mode#WAIT}, for the holders ahead up to it too;
     * each request is given up at {@code end}, a little after the deadline, so that a request made
     * just before the deadline can be answered.
     *
     * @throws IllegalStateException if the lock was closed
     * @throws QuorumlockException if ZooKeeper refused for a reason other than the connection, or
     *     the thread was interrupted
     */
    Attempt<FencedLease> attempt(String resource, String dir, long deadline, long end, Mode mode) {
        return attempt(resource, dir, LockQueue.LOCK, deadline, end, mode);
    }

    /**
     * Makes one attempt on the queue {@code dir} of the shape {@code shape}: as {@link
     * #attempt(String, String, long, long, Mode)}, where a contender holds once its node is one of
     * the shape's first {@code holders}; a contender of a queue of several holders waits for any
     * change of the queue, since the going of any node ahead lets it in.
     */
    Attempt<FencedLease> attempt(String resource, String dir, LockQueue shape, long deadline, long end, Mode mode) {
        lock.checkOpen();
        return ContenderSteps.await(new Contender(resource, dir, shape, deadline, end, mode, null), lock.ticker());
    }

    /**
     * As {@link #attempt(String, String, LockQueue, long, long, Mode)}, holding no thread while it
     * waits ({@link ContenderSteps#withoutThread}). Once {@code acquire} is done (cancelled), the
     * attempt gives up at its next step, and deletes its node.
     */
    CompletableFuture<Attempt<FencedLease>> attemptWithoutThread(
            String resource,
            String dir,
            LockQueue shape,
            long deadline,
            long end,
            Mode mode,
            AsyncAcquireLoop.AcquireEnd acquire) {
        lock.checkOpen();
        return ContenderSteps.withoutThread(
                new Contender(resource, dir, shape, deadline, end, mode, acquire), lock.ticker(), acquire);
    }

    /**
     * One contender's attempt, as steps: each step sends its requests and reads their answers, and
     * comes to the attempt's outcome, or to a wait for its {@link #pause} (until {@link #wakeAt()}),
     * after which the next step looks again.
     */
    private final class Contender implements ContenderSteps.Steps<Attempt<FencedLease>> {
        private final String resource;
        private final String dir;
        private final LockQueue shape;
        private final long deadline;
        private final long end;
        private final boolean wait;
        /** How long one request is waited for at most, within the end. */
        private final long requestNanos;
        /** The end of the asynchronous acquire making this attempt; null for a blocking one. */
        private final AsyncAcquireLoop.AcquireEnd acquire;

        private final ReleaseWait pause = connection.releaseWait();
        private String ours;
        private Created created;
        private String name;
        /** The listing sent right behind the create: used once, if it shows our node. */
        private Listing early;

        private boolean granted;
        /** While no connection is reported: wait no longer than this before looking again. */
        private boolean awaitingConnection;

        /**
         * @param acquire the end of the asynchronous acquire whose steps run on the shared attempt
         *     threads, null for a blocking one. Each request is then waited for no longer than the
         *     connect timeout, so that a silent ensemble holds none of those threads for the whole
         *     wait: a listing or watch given up leaves the node in its place and looks again; and
         *     the steps stop between two requests once the acquire has ended.
         */
        Contender(
                String resource,
                String dir,
                LockQueue shape,
                long deadline,
                long end,
                Mode mode,
                AsyncAcquireLoop.AcquireEnd acquire) {
            this.resource = resource;
            this.acquire = acquire;
            this.requestNanos = acquire != null ? lock.connectTimeout().toNanos() : Long.MAX_VALUE;
            this.dir = dir;
            this.shape = shape;
            this.deadline = deadline;
            this.end = end;
            this.wait = mode == Mode.WAIT;
        }

        @Override
        public ReleaseWait pause() {
            return pause;
        }

        /** The deadline, sooner while no connection is reported: to look whether it is back. */
        @Override
        public long wakeAt() {
            return awaitingConnection ? Math.min(deadline, lock.ticker().nanos() + CONNECTION_RECHECK_NANOS) : deadline;
        }

        @Override
        public Attempt<FencedLease> step() throws Exception {
            lock.checkOpen();
            awaitingConnection = false;
            if (created == null) {
                if (!lock.client().getZookeeperClient().isConnected()) {
                    if (lock.ticker().nanos() - deadline >= 0) {
                        return refusals.refused(
                                ServerAnswer.Kind.UNREACHABLE,
                                "no connection to the ensemble"
                                        + (wait ? " within the wait" : " within the connect timeout"));
                    }
                    awaitingConnection = true;
                    return null;
                }
                created = create(dir, shape, until());
                ours = created.path();
                name = ZKPaths.getNodeFromPath(ours);
                early = created.listing();
            }
            while (true) {
                lock.checkOpen();
                if (acquire != null && acquire.isDone()) {
                    return givenUp();
                }
                if (!connection.reportedConnected()) {
                    // Curator has not yet reported the connection back: no grant on a doubtful connection.
                    if (lock.ticker().nanos() - deadline >= 0) {
                        return refusals.refused(
                                ServerAnswer.Kind.UNREACHABLE,
                                "the connection to the ensemble is " + connection.lastState());
                    }
                    return null;
                }
                try {
                    boolean sentEarly = early != null;
                    Listing listing = sentEarly ? early : list(dir);
                    early = null;
                    List<String> queue;
                    try {
                        queue = calls.answer(listing.answered(), until(), "list the queue")
                                .getChildren();
                    } catch (KeeperException e) {
                        if (sentEarly) {
                            continue; // sent before the create made the parent, or before a reconnect: list again
                        }
                        throw e;
                    }
                    LockQueue.Place place = shape.place(queue, name);
                    if (!place.present()) {
                        if (sentEarly) {
                            continue; // the create was sent again after a lost connection, behind this listing
                        }
                        return refusals.refused(
                                ServerAnswer.Kind.ERROR,
                                "the lock node " + ours + " vanished while waiting: the session ended");
                    }
                    if (place.first()) {
                        QueueGrant grant = QueueGrant.of(lock, connection, resource, created, listing);
                        if (grant.lease() != null) {
                            granted = true;
                            return Attempt.granted(grant.lease());
                        }
                        if (grant.refusal() != null) {
                            return refusals.refused(ServerAnswer.Kind.ERROR, grant.refusal());
                        }
                        continue;
                    }
                    if (!wait && shape.holders() > 1) {
                        return refusals.allHeld(place);
                    }
                    if (!wait) {
                        String holder = Holders.shown(place.holder());
                        return Attempt.heldBy(
                                "lock node " + holder, refusals.answer(ServerAnswer.Kind.HELD_BY_OTHER, holder));
                    }
                    if (lock.ticker().nanos() - deadline >= 0) {
                        return shape.holders() > 1 ? refusals.allHeld(place) : refusals.heldBy(dir, place, until());
                    }
                    if (shape.holders() > 1) {
                        // Any holder's going lets this contender in: wait for any change of the queue,
                        // unless one came since the listing.
                        List<String> watched = calls.answer(
                                        calls.send(cb -> client.getChildren()
                                                .usingWatcher(pause)
                                                .inBackground(cb)
                                                .forPath(dir)),
                                        until(),
                                        "watch the queue")
                                .getChildren();
                        if (shape.place(watched, name).index() == place.index()) {
                            return null;
                        }
                        continue;
                    }
                    try {
                        String predecessor = ZKPaths.makePath(dir, place.predecessor());
                        calls.answer(
                                calls.send(cb -> client.getData()
                                        .usingWatcher(pause)
                                        .inBackground(cb)
                                        .forPath(predecessor)),
                                until(),
                                "watch the node ahead");
                    } catch (KeeperException.NoNodeException gone) {
                        continue;
                    }
                    return null;
                } catch (NoAnswer e) {
                    if (acquire == null || lock.ticker().nanos() - deadline >= 0) {
                        throw e;
                    }
                    // A request unanswered within the connect timeout: the node keeps its place,
                    // and the contender looks again once the connection changes, or soon.
                    early = null;
                    awaitingConnection = true;
                    return null;
                }
            }
        }

        /**
         * What a step's exception comes to: a refusal another attempt may overcome (no answer in
         * time, a lost connection)
         *
         * @throws QuorumlockException for any other
         */
        /** When the request sent now is given up: the attempt's end, or sooner (see the constructor). */
        private long until() {
            long now = lock.ticker().nanos();
            return end - now <= requestNanos ? end : now + requestNanos;
        }

        @Override
        public Attempt<FencedLease> failed(Exception thrown) {
            try {
                throw thrown;
            } catch (NoAnswer e) {
                return refusals.refused(
                        ServerAnswer.Kind.TIMED_OUT,
                        "no answer from the ensemble to '" + e.getMessage() + "' within the "
                                + (!wait
                                        ? "connect timeout"
                                        : requestNanos == Long.MAX_VALUE ? "wait" : "wait or the connect timeout"));
            } catch (KeeperException e) {
                if (ZooKeeperCalls.retryable(e.code())) {
                    return refusals.refused(ZooKeeperCalls.kindOf(e.code()), e.getMessage());
                }
                throw new QuorumlockException(
                        "ZooKeeper refused to lock '" + resource + "' under " + lock.ensemble() + ": " + e.getMessage(),
                        e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new QuorumlockException("interrupted while acquiring '" + resource + "'", e);
            } catch (IllegalStateException e) {
                lock.checkOpen();
                throw new QuorumlockException("could not lock '" + resource + "': " + e.getMessage(), e);
            } catch (QuorumlockException e) {
                throw e;
            } catch (Exception e) {
                throw new QuorumlockException("could not lock '" + resource + "': " + e, e);
            }
        }

        @Override
        public Attempt<FencedLease> givenUp() {
            return refusals.refused(ServerAnswer.Kind.ERROR, "the acquire was given up");
        }

        /** The pause wakes no more, and a node that did not become a lease is deleted. */
        @Override
        public void finish() {
            connection.done(pause);
            if (ours != null && !granted) {
                lock.deleteLockNode(ours, false);
            }
        }
    }

    /**
     * Creates this contender's node; retries when the parent container was deleted under it. A
     * create given up at {@code end}, or by an interrupt, deletes its node if it is answered after
     * all.
     */
    private Created create(String dir, LockQueue shape, long end) throws Exception {
        for (int tries = 1; ; tries++) {
            CompletableFuture<CuratorEvent> created = calls.send(cb -> client.create()
                    .creatingParentContainersIfNeeded()
                    .withProtection()
                    .withMode(shape.beside() == null ? CreateMode.EPHEMERAL_SEQUENTIAL : CreateMode.EPHEMERAL)
                    .inBackground(cb)
                    .forPath(ZKPaths.makePath(dir, shape.nodeName()), holder));
            // The session's requests are answered in the order sent: a listing sent right behind the
            // create shows its node, and both take one round trip.
            Listing listing = list(dir);
            try {
                awaitQuietly(listing.answered(), end); // answered after the create: one wake-up for both
                CuratorEvent event = calls.answer(created, end, "create the lock node");
                Stat stat = event.getStat();
                if (stat == null || stat.getCzxid() == 0) {
                    // Curator found the node after a lost connection: its answer carries no Stat.
                    try {
                        stat = calls.answer(
                                        calls.send(cb -> client.getData()
                                                .inBackground(cb)
                                                .forPath(event.getName())),
                                        end,
                                        "read the lock node")
                                .getStat();
                    } catch (Exception unread) {
                        lock.deleteLockNode(event.getName(), false); // made, but not to wait with
                        throw unread;
                    }
                }
                return new Created(event.getName(), stat.getCzxid(), stat.getEphemeralOwner(), listing);
            } catch (NoAnswer | InterruptedException e) {
                created.thenAccept(late -> {
                    if (late.getResultCode() == KeeperException.Code.OK.intValue()) {
                        log.debug("deleting lock node {}, created after its attempt gave up", late.getName());
                        lock.deleteLockNode(late.getName(), false);
                    }
                });
                throw e;
            } catch (KeeperException.NoNodeException e) {
                // ZooKeeper deleted the empty container between Curator's mkdirs and the create.
                if (tries >= CREATE_TRIES) {
                    throw e;
                }
            }
        }
    }

    /** Waits for {@code answer} until {@code end} at most, whatever it says: its reader tells. */
    private void awaitQuietly(CompletableFuture<?> answer, long end) throws InterruptedException {
        try {
            answer.get(Math.max(0, end - lock.ticker().nanos()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // told by whoever reads the answer
        }
    }

    /**
     * This contender's node as the create answered it: its path, its czxid (the fencing token)
     * and the session that created it, from the create's own Stat; and the listing of the queue
     * sent right behind the create.
     */
    record Created(String path, long czxid, long owner, Listing listing) {}

    /**
     * A listing of the queue, sent at {@code sent} (a lease's end counts from it) with {@code
     * watch} on the queue, which reports the deletion of our node should the listing make it a
     * lease; {@code changes} is the connection's event count read before it was sent.
     */
    record Listing(CompletableFuture<CuratorEvent> answered, ZooKeeperLease.NodeWatch watch, long sent, long changes) {}

    /** Sends a listing of the queue {@code dir}, with a watch on it. */
    private Listing list(String dir) throws Exception {
        long changes = connection.changes();
        ZooKeeperLease.NodeWatch watch = new ZooKeeperLease.NodeWatch();
        long sent = lock.ticker().nanos();
        return new Listing(
                calls.send(cb -> client.getChildren()
                        .usingWatcher(watch)
                        .inBackground(cb)
                        .forPath(dir)),
                watch,
                sent,
                changes);
    }
}
