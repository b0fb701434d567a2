package io.quorumlock.redis.client;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.internal.Ticker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The production transport: no thread of its own. A caller borrows a lane (one non-blocking
 * pipelined connection per node and a selector), writes its requests, and waits until its round
 * is decided. Lanes are shared: at most {@code maxLanes} of them, so at most that many connections
 * per node, however many callers there are; the callers of a lane have their requests pipelined on
 * its connections, and the rounds on one resource use one lane. Whoever waits on a lane reads its
 * replies for everyone on it (one caller at a time polls the selector, the others sleep until
 * their round is decided or the poller leaves), so a caller is never refused or delayed for want
 * of a connection.
 */
public final class NioTransport implements Transport {

    private final List<NodeAddress> nodes;
    private final long timeoutNanos;
    private final long connectTimeoutNanos;
    private final Ticker ticker;
    private final int maxLanes;

    private final NodeStarts starts;
    private final Locator[] resolvers;
    /** Looks host names up, off the callers' path; null when every node is an IP literal. */
    private final ExecutorService lookups;
    /** Asks the sentinels, off the callers' path; null when no node is a master that Sentinel manages. */
    private final ScheduledExecutorService sentinelAsks;

    /** In the order they were opened; guarded by itself, as is {@link #callers}. */
    private final List<NioLane> lanes = new ArrayList<>();
    /** Callers in a round now, on any lane. */
    private int callers;
    /** Resources with rounds under way that were borrowed while lanes could still be added, and their lanes. */
    private final Pins<NioLane> inUse = new Pins<>();
    /** For the {@code rediss://} nodes; null if there are none. */
    private final TlsConfig tls;
    /** Loaded on every new connection. */
    private final List<Script> scripts;
    /** Guarded by {@link #lanes}. */
    private boolean closed;
    /** Guarded by {@link #lanes}. */
    private final List<Subscriptions> subscriptions = new ArrayList<>();
    /** The subscriptions listen on nodes 0 to this, excluded. */
    private final java.util.function.IntSupplier listenOn;
    /** Whether a lane's connections are made when first used rather than with the lane. */
    private final boolean lazy;

    public NioTransport(
            List<NodeAddress> nodes,
            long timeoutNanos,
            long connectTimeoutNanos,
            int maxLanes,
            Ticker ticker,
            TlsConfig tls,
            List<Script> scripts) {
        this(nodes, timeoutNanos, connectTimeoutNanos, maxLanes, ticker, tls, scripts, null, nodes::size);
    }

    /**
     * Over nodes found by {@code locators} (null: by their addresses and sentinels), opening each
     * lane's connection to a node only when a round first sends to it, and subscribing on as many
     * of the first nodes as {@code listenOn} says when the subscriptions are made: for {@link
     * ClusterTransport}'s places.
     */
    NioTransport(
            List<NodeAddress> nodes,
            long timeoutNanos,
            long connectTimeoutNanos,
            int maxLanes,
            Ticker ticker,
            TlsConfig tls,
            List<Script> scripts,
            java.util.function.IntFunction<Locator> locators,
            java.util.function.IntSupplier listenOn) {
        this.nodes = List.copyOf(nodes);
        this.listenOn = listenOn;
        this.lazy = locators != null;
        this.tls = tls;
        this.scripts = List.copyOf(scripts);
        this.timeoutNanos = timeoutNanos;
        this.connectTimeoutNanos = connectTimeoutNanos;
        this.ticker = ticker;
        this.maxLanes = maxLanes;
        this.starts = new NodeStarts(nodes.stream().map(NodeAddress::toString).toList(), ticker);
        this.lookups = locators != null
                        || nodes.stream().allMatch(n -> n.sentinels().isPresent() || Resolver.isLiteral(n.host()))
                ? null
                : Executors.newSingleThreadExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "quorumlock-dns");
                    thread.setDaemon(true);
                    return thread;
                });
        this.sentinelAsks =
                locators == null && nodes.stream().anyMatch(n -> n.sentinels().isPresent())
                        ? Executors.newSingleThreadScheduledExecutor(runnable -> {
                            Thread thread = new Thread(runnable, "quorumlock-sentinel");
                            thread.setDaemon(true);
                            return thread;
                        })
                        : null;
        this.resolvers = locators != null
                ? java.util.stream.IntStream.range(0, nodes.size())
                        .mapToObj(locators)
                        .toArray(Locator[]::new)
                : nodes.stream()
                        .map(n -> n.sentinels().isPresent()
                                ? new SentinelLocator(n, tls, connectTimeoutNanos, ticker, sentinelAsks)
                                : new Resolver(n.host(), n.port(), ticker, lookups))
                        .toArray(Locator[]::new);
    }

    /**
     * The lane of {@code resource}: chosen by its hash among the open lanes, so that the rounds on
     * one resource share one lane and reach every node in one order (see {@link Lane#sends}). A
     * new lane is opened while more callers are in rounds than lanes are open, up to {@code
     * maxLanes}: one caller uses one connection per node. While lanes are still being added, a
     * resource keeps the lane of its rounds under way until the last of them ends.
     */
    @Override
    public Lane borrow(String resource, Lane follows) {
        NioLane lane;
        synchronized (lanes) {
            if (closed) {
                throw new IllegalStateException("the Redlock was closed during this call");
            }
            if (callers >= lanes.size() && lanes.size() < maxLanes) {
                lanes.add(new NioLane());
            }
            callers++;
            lane = follows != null ? (NioLane) follows : laneOf(resource);
        }
        try {
            lane.catchUp();
        } catch (RuntimeException e) {
            giveBack(lane, follows != null ? null : resource);
            throw e;
        }
        return lane;
    }

    /** Under the lock of {@link #lanes}. */
    private NioLane laneOf(String resource) {
        NioLane lane = resource == null ? null : inUse.lane(resource);
        if (lane == null) {
            lane = lanes.get(resource == null ? 0 : Math.floorMod(resource.hashCode(), lanes.size()));
            if (resource == null || lanes.size() == maxLanes) {
                return lane; // no lane will be added: the hash keeps choosing this one
            }
        }
        inUse.pin(resource, lane);
        return lane;
    }

    @Override
    public NodeStart nodeStart(int node) {
        return starts.start(node);
    }

    @Override
    public java.util.Optional<String> whereIs(int node) {
        return resolvers[node].describe();
    }

    @Override
    public boolean sameServer(int a, int b) {
        return starts.sameServer(a, b);
    }

    /**
     * Two nodes whose addresses are the same address and port, as the resolvers have them by
     * {@code deadlineNanos}: the refusal of the later one's entry in {@code nodes}, naming both, or
     * null. IP literals are compared at once; a host name not resolved by then is left out (two
     * entries of one server are caught by their run_id at their first connection).
     */
    public IllegalSettingException sameAddress(long deadlineNanos) {
        java.util.Map<InetSocketAddress, NodeAddress> seen = new java.util.HashMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            InetSocketAddress address = resolvers[i].address(deadlineNanos).address();
            NodeAddress earlier = address == null ? null : seen.putIfAbsent(address, nodes.get(i));
            if (earlier != null) {
                return new IllegalSettingException(
                        "nodes",
                        i,
                        "nodes " + earlier + " and " + nodes.get(i) + " are the same server (both reach "
                                + address.getAddress().getHostAddress() + ":" + address.getPort()
                                + "): each Redis server may vote only once; list independent servers");
            }
        }
        return null;
    }

    @Override
    public void giveBack(Lane lane, String resource) {
        synchronized (lanes) {
            callers--;
            if (resource != null) {
                inUse.unpin(resource);
            }
        }
    }

    /** A connection to {@code node} on {@code selector}, loading {@code scripts}; {@code push} for a subscriber's. */
    private RespLink link(int node, Selector selector, List<Script> toLoad, Subscriptions.Push push) {
        return new RespLink(
                nodes.get(node),
                node,
                resolvers[node],
                selector,
                timeoutNanos,
                connectTimeoutNanos,
                ticker,
                () -> starts.connection(node),
                tls,
                toLoad,
                push);
    }

    static Selector openSelector() {
        try {
            return Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a selector", e);
        }
    }

    @Override
    public java.util.Optional<Subscriptions> subscriptions(Subscriptions.Listener listener) {
        Subscriptions made = new Subscriptions(
                nodes.subList(0, Math.max(1, Math.min(nodes.size(), listenOn.getAsInt()))).stream()
                        .map(NodeAddress::toString)
                        .toList(),
                // as long as a lane waits before it drops a connection: a busy machine answers late
                Math.max(20 * Math.max(timeoutNanos, connectTimeoutNanos), 1_000_000_000L),
                ticker,
                (node, selector, push) -> link(node, selector, List.of(), push),
                listener);
        synchronized (lanes) {
            if (!closed) {
                subscriptions.add(made);
                return java.util.Optional.of(made);
            }
        }
        made.close();
        throw new IllegalStateException("the Redlock was closed during this call");
    }

    @Override
    public void close() {
        List<NioLane> open;
        List<Subscriptions> listening;
        synchronized (lanes) {
            closed = true;
            open = List.copyOf(lanes);
            listening = List.copyOf(subscriptions);
        }
        listening.forEach(Subscriptions::close);
        for (NioLane lane : open) {
            lane.close();
        }
        for (Locator resolver : resolvers) {
            resolver.close();
        }
        if (sentinelAsks != null) {
            sentinelAsks.shutdownNow();
        }
        if (lookups != null) {
            lookups.shutdownNow();
        }
    }

    /**
     * One connection per node and the selector they are registered with, shared by the callers
     * that borrowed it. Of the callers waiting on it, one at a time polls the selector and hands
     * every reply to its handler, whoever sent the request; after each poll it wakes the callers
     * whose rounds are decided, and when it leaves, the next caller still waiting takes over. The
     * others sleep, each until its own deadline at the latest.
     */
    private final class NioLane implements Lane {
        private final Selector selector;
        /** Made with the lane, or when first used if the transport is {@link #lazy}. */
        private final java.util.concurrent.atomic.AtomicReferenceArray<RespLink> links;

        private final ReentrantLock polling = new ReentrantLock();
        private final ReentrantLock sending = new ReentrantLock();
        private final Sends sent = sending::unlock;
        private final Waiters waiters = new Waiters();
        /** Hands what the selector found ready to its link: made once, not at every poll. */
        private final Consumer<SelectionKey> ready = this::ready;

        NioLane() {
            selector = openSelector();
            links = new java.util.concurrent.atomic.AtomicReferenceArray<>(nodes.size());
            for (int i = 0; i < nodes.size() && !lazy; i++) {
                links.set(i, NioTransport.this.link(i, selector, scripts, null));
            }
        }

        @Override
        public Link link(int node) {
            RespLink link = links.get(node);
            return link != null ? link : made(node);
        }

        /** Guarded by this lane: closed, its new links shut at once. */
        private boolean shut;

        private synchronized RespLink made(int node) {
            RespLink link = links.get(node);
            if (link == null) {
                link = NioTransport.this.link(node, selector, scripts, null);
                if (shut) {
                    link.shut(); // the lane was closed: the link answers every request as not sent
                }
                links.set(node, link);
            }
            return link;
        }

        @Override
        public int replicasUp(int node) {
            return resolvers[node].replicasUp();
        }

        @Override
        public Sends sends() {
            sending.lock();
            return sent;
        }

        @Override
        public boolean await(BooleanSupplier done, LongSupplier deadlineNanos) throws InterruptedException {
            if (done.getAsBoolean()) {
                return true;
            }
            Waiters.Waiter me = waiters.add(done);
            try {
                boolean looked = false;
                while (!done.getAsBoolean()) {
                    long left = deadlineNanos.getAsLong() - ticker.nanos();
                    if (left <= 0) {
                        // A caller kept off the CPU finds its deadline passed: what came meanwhile
                        // is read before any node is judged silent, and may move the deadline on.
                        if (looked || !catchUp()) {
                            return done.getAsBoolean();
                        }
                        looked = true;
                        continue;
                    }
                    looked = false;
                    if (polling.tryLock()) {
                        try {
                            poll(left);
                        } finally {
                            polling.unlock();
                        }
                        wakeDecided(me);
                    } else {
                        LockSupport.parkNanos(this, left);
                    }
                    if (Thread.interrupted()) {
                        throw new InterruptedException();
                    }
                }
                return true;
            } finally {
                waiters.remove(me);
                handOver();
            }
        }

        /** Waits up to {@code nanos} for the lane's channels and handles what is ready. */
        private void poll(long nanos) {
            try {
                selector.select(ready, Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos + 999_999)));
            } catch (IOException e) {
                throw new UncheckedIOException("selector failed", e);
            } catch (ClosedSelectorException e) {
                throw new IllegalStateException("the Redlock was closed during this call", e);
            }
        }

        /** Wakes the waiting callers whose rounds the last poll decided. */
        private void wakeDecided(Waiters.Waiter poller) {
            waiters.wakeDone(poller);
        }

        /** With nobody polling, wakes a waiting caller to take over; a caller never waits unpolled. */
        private void handOver() {
            if (!polling.isLocked()) {
                waiters.wakeFirst();
            }
        }

        /**
         * Handles what arrived while nobody waited on the lane: late replies, and connections the
         * node closed (a restart), so that the next round opens a fresh one instead of failing on
         * it. Skipped while another caller polls: it does that. Like a poll, it wakes the callers
         * whose rounds it decided, and one to poll if a caller started waiting meanwhile. False
         * if it was skipped.
         */
        boolean catchUp() {
            if (!polling.tryLock()) {
                return false;
            }
            try {
                selector.selectNow(ready);
            } catch (IOException e) {
                throw new UncheckedIOException("selector failed", e);
            } catch (ClosedSelectorException e) {
                throw new IllegalStateException("the Redlock was closed during this call", e);
            } finally {
                polling.unlock();
                wakeDecided(null);
                handOver();
            }
            return true;
        }

        private void ready(SelectionKey key) {
            ((RespLink) key.attachment()).ready(key);
        }

        void close() {
            synchronized (this) {
                shut = true;
            }
            for (int i = 0; i < links.length(); i++) {
                RespLink link = links.get(i);
                if (link != null) {
                    link.shut();
                }
            }
            try {
                selector.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
