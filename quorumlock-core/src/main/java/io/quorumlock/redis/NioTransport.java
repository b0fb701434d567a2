package io.quorumlock.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The production transport: no thread of its own. A caller borrows a lane (one non-blocking
 * connection per node and a selector), writes its requests, and reads the replies itself until
 * its round is decided. Lanes are pooled, at most {@code maxLanes}: that many callers at once,
 * and as many connections per node.
 */
final class NioTransport implements Transport {

    private final List<NodeAddress> nodes;
    private final long timeoutNanos;
    private final Ticker ticker;
    private final int maxLanes;
    /** Fair: callers get a lane in the order they asked, so none starves under load. */
    private final Semaphore permits;

    private final NodeStarts starts;
    private final Resolver[] resolvers;
    /** Looks host names up, off the callers' path; null when every node is an IP literal. */
    private final ExecutorService lookups;

    private final ConcurrentLinkedDeque<NioLane> idle = new ConcurrentLinkedDeque<>();
    private final ConcurrentLinkedDeque<NioLane> all = new ConcurrentLinkedDeque<>();
    /** For the {@code rediss://} nodes; null if there are none. */
    private final TlsConfig tls;

    NioTransport(List<NodeAddress> nodes, long timeoutNanos, int maxLanes, Ticker ticker, TlsConfig tls) {
        this.nodes = List.copyOf(nodes);
        this.tls = tls;
        this.timeoutNanos = timeoutNanos;
        this.ticker = ticker;
        this.maxLanes = maxLanes;
        this.permits = new Semaphore(maxLanes, true);
        this.starts = new NodeStarts(nodes.stream().map(NodeAddress::toString).toList(), ticker);
        this.lookups = nodes.stream().allMatch(n -> Resolver.isLiteral(n.host()))
                ? null
                : Executors.newSingleThreadExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "quorumlock-dns");
                    thread.setDaemon(true);
                    return thread;
                });
        this.resolvers = nodes.stream()
                .map(n -> new Resolver(n.host(), n.port(), ticker, lookups))
                .toArray(Resolver[]::new);
    }

    @Override
    public Lane borrow(long deadlineNanos) {
        long waited = ticker.nanos();
        try {
            if (!permits.tryAcquire(Math.max(0, deadlineNanos - waited), TimeUnit.NANOSECONDS)) {
                return new RefusingLane(
                        nodes,
                        "not sent: all " + maxLanes + " connections per node stayed busy for "
                                + (ticker.nanos() - waited) / 1_000_000 + " ms; raise maxConnectionsPerNode");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new RefusingLane(nodes, "not sent: interrupted");
        }
        try {
            NioLane lane = idle.pollFirst();
            if (lane == null) {
                lane = new NioLane();
                all.add(lane);
            }
            lane.catchUp();
            return lane;
        } catch (RuntimeException | Error e) { // the permit must not be lost with the lane
            permits.release();
            throw e;
        }
    }

    @Override
    public RestartGuard.Start nodeStart(int node) {
        return starts.start(node);
    }

    @Override
    public boolean sameServer(int a, int b) {
        return starts.sameServer(a, b);
    }

    /**
     * Two nodes whose addresses are the same address and port, as the resolvers have them by
     * {@code deadlineNanos}: a message naming both, or null. IP literals are compared at once; a
     * host name not resolved by then is left out (two entries of one server are caught by their
     * run_id at their first connection).
     */
    String sameAddress(long deadlineNanos) {
        java.util.Map<InetSocketAddress, NodeAddress> seen = new java.util.HashMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            InetSocketAddress address = resolvers[i].address(deadlineNanos).address();
            NodeAddress earlier = address == null ? null : seen.putIfAbsent(address, nodes.get(i));
            if (earlier != null) {
                return "nodes " + earlier + " and " + nodes.get(i) + " are the same server (both reach "
                        + address.getAddress().getHostAddress() + ":" + address.getPort()
                        + "): each Redis server may vote only once; list independent servers";
            }
        }
        return null;
    }

    @Override
    public void giveBack(Lane lane) {
        if (lane instanceof NioLane nio) {
            idle.addFirst(nio); // most recently used first: its late replies are read soonest
            permits.release();
        }
    }

    @Override
    public void close() {
        for (NioLane lane : all) {
            lane.close();
        }
        if (lookups != null) {
            lookups.shutdownNow();
        }
    }

    private final class NioLane implements Lane {
        private final Selector selector;
        private final RespLink[] links;

        NioLane() {
            try {
                selector = Selector.open();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open a selector", e);
            }
            links = new RespLink[nodes.size()];
            for (int i = 0; i < links.length; i++) {
                int node = i;
                links[i] = new RespLink(
                        nodes.get(i), resolvers[i], selector, timeoutNanos, ticker, () -> starts.connection(node), tls);
            }
        }

        @Override
        public Link link(int node) {
            return links[node];
        }

        @Override
        public boolean await(BooleanSupplier done, long deadlineNanos) throws InterruptedException {
            while (!done.getAsBoolean()) {
                long left = deadlineNanos - ticker.nanos();
                if (left <= 0) {
                    return false;
                }
                try {
                    selector.select(this::ready, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left + 999_999)));
                } catch (IOException e) {
                    throw new UncheckedIOException("selector failed", e);
                } catch (ClosedSelectorException e) {
                    throw new IllegalStateException("the Redlock was closed during this call", e);
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
            return true;
        }

        /**
         * Handles what arrived while the lane was idle: late replies, and connections the node
         * closed (a restart), so that the next round opens a fresh one instead of failing on it.
         */
        void catchUp() {
            try {
                selector.selectNow(this::ready);
            } catch (IOException e) {
                throw new UncheckedIOException("selector failed", e);
            }
        }

        private void ready(SelectionKey key) {
            ((RespLink) key.attachment()).ready(key);
        }

        void close() {
            for (RespLink link : links) {
                link.close(Reply.Kind.BROKEN, "client closed");
            }
            try {
                selector.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    /** A lane whose links answer at once that nothing was sent. */
    private record RefusingLane(List<NodeAddress> nodes, String why) implements Lane, Link {
        @Override
        public Link link(int node) {
            return new RefusingLane(List.of(nodes.get(node)), why);
        }

        @Override
        public boolean await(BooleanSupplier done, long deadlineNanos) {
            return done.getAsBoolean();
        }

        @Override
        public String node() {
            return nodes.get(0).toString();
        }

        @Override
        public void send(Request request, ReplyHandler handler) {
            handler.onReply(request, new Reply.Failure(Reply.Kind.NOT_SENT, why), this);
        }

        @Override
        public void sendBehind(Request request, ReplyHandler handler) {
            send(request, handler);
        }
    }
}
