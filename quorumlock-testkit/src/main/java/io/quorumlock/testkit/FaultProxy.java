package io.quorumlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP proxy on a free port of 127.0.0.1 in front of one server, with network faults that a
 * test switches on and off while clients are connected: latency, partitions, resets, refused
 * connections and a bandwidth cap. Point a client at {@link #port()} (or {@link #uri()}) instead of
 * the server, and that client's link can be cut or slowed while other clients still reach the
 * server directly.
 *
 * <pre>{@code
 * try (RedisServer node = RedisServer.start();
 *         FaultProxy proxy = FaultProxy.inFrontOf(node)) {
 *     // a client connects to proxy.uri() ...
 *     proxy.latency(Duration.ofMillis(50));         // 50 ms each way
 *     proxy.partition();                            // its bytes are held, nothing is reset
 *     proxy.heal();                                 // held bytes are delivered, in order
 *     proxy.reset();                                // every open connection is reset now
 * }
 * }</pre>
 *
 * <p>What each switch does, as a client and the server see it:
 *
 * <ul>
 *   <li><b>Latency</b> ({@link #latency(Direction, Duration, Duration)}): each chunk of bytes is
 *       delivered {@code latency} after the proxy read it, plus or minus a uniform random {@code
 *       jitter}; bytes are never reordered (a chunk is never delivered before one read earlier).
 *   <li><b>Partition</b> ({@link #partition(Direction)}): open connections stop forwarding in the
 *       partitioned direction; the proxy holds the bytes back (at most {@value #MAX_HELD_BYTES}
 *       bytes per direction and connection, then it stops reading and the sender's TCP window fills,
 *       as it would on a real network) and resets nothing, so the peers see silence, not an error. A
 *       connection opened during a partition, in either direction, is accepted (the kernel completes
 *       the handshake whatever the proxy does, so the client's connect succeeds, as it does to a
 *       frozen server) but is not connected to the server: the server sees nothing of it until the
 *       partition heals.
 *   <li><b>Heal</b> ({@link #heal()}): the held bytes are delivered, in order, and connections
 *       opened during the partition are connected to the server. This is what TCP does after a
 *       partition shorter than its retransmission timeout: the segments it resends get through
 *       late, never lost from the middle of a stream. A request sent during the partition is
 *       therefore applied by the server after the heal (as a command sent to a frozen Redis node is
 *       applied when it resumes). To model a partition long enough for the connections to die,
 *       call {@link #reset()} before {@link #heal()}: the held bytes are then dropped with the
 *       connections.
 *   <li><b>Reset</b> ({@link #reset()}): every open connection is closed at once with a TCP reset
 *       on both sides (the client reads "connection reset"); held bytes are dropped. New connections
 *       are forwarded as usual.
 *   <li><b>Refuse</b> ({@link #refuseConnections()}): each new connection is reset as soon as it
 *       is accepted (the client's connect succeeds, its first read fails); open connections go on.
 *       It takes precedence over a partition for new connections.
 *   <li><b>Bandwidth</b> ({@link #bandwidth(Direction, long)}): each connection forwards at most
 *       so many bytes per second in that direction, paced in slices of about 10 ms.
 * </ul>
 *
 * <p>Every switch is thread-safe and takes effect before its method returns: once {@link
 * #partition()} has returned, no further byte crosses. The proxy runs one daemon thread with one
 * NIO selector for all its connections; it buffers at most {@value #MAX_HELD_BYTES} bytes per
 * direction and connection, so with a latency {@code L} a connection carries at most {@value
 * #MAX_HELD_BYTES} bytes per {@code L}, like a TCP window. If the server refuses the proxy's
 * connection (it is down), the client's connection is reset. {@link #close()} stops the thread and
 * closes every connection and the listening socket.
 */
public final class FaultProxy implements AutoCloseable {

    /** Which way bytes flow through the proxy. */
    public enum Direction {
        /** From the client to the server: requests. */
        CLIENT_TO_SERVER,
        /** From the server to the client: replies. */
        SERVER_TO_CLIENT,
        /** Both ways. */
        BOTH;

        boolean covers(Direction flow) {
            return this == BOTH || this == flow;
        }
    }

    /** How many bytes the proxy holds at most per direction and connection. */
    public static final int MAX_HELD_BYTES = 256 * 1024;

    private static final Logger log = LoggerFactory.getLogger(FaultProxy.class);
    private static final String HOST = "127.0.0.1";
    private static final int READ_CHUNK = 16 * 1024;
    private static final long PACING_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final Duration SWITCH_TIMEOUT = Duration.ofSeconds(10);

    private final InetSocketAddress upstream;
    private final String scheme;
    private final ServerSocketChannel listener;
    private final Selector selector;
    private final Thread thread;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicLong accepted = new AtomicLong();
    private final SplittableRandom random = new SplittableRandom();
    private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(READ_CHUNK);

    // Owned by the selector thread: changed only by tasks it runs.
    private final List<Connection> connections = new ArrayList<>();
    private final Link toServer = new Link();
    private final Link toClient = new Link();
    private boolean refusing;

    private volatile int open;
    private volatile boolean closed;
    private volatile String switches = "no faults";

    private FaultProxy(InetSocketAddress upstream, String scheme) throws IOException {
        this.upstream = upstream;
        this.scheme = scheme;
        this.selector = Selector.open();
        ServerSocketChannel channel = null;
        try {
            channel = ServerSocketChannel.open();
            channel.bind(new InetSocketAddress(InetAddress.getByName(HOST), 0), 128);
            channel.configureBlocking(false);
            channel.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException | RuntimeException e) {
            if (channel != null) {
                channel.close();
            }
            selector.close();
            throw e;
        }
        this.listener = channel;
        this.thread = new Thread(this::run, "quorumlock-fault-proxy-" + port());
        thread.setDaemon(true);
        thread.start();
        log.debug("Fault proxy on {}:{} in front of {}", HOST, port(), upstream);
    }

    /**
     * Starts a proxy on a free port of 127.0.0.1 in front of {@code host:port}.
     *
     * @param host the server's host
     * @param port the server's port, from 1 to 65535
     * @return the running proxy, forwarding without faults
     * @throws IllegalArgumentException if the port is out of range
     * @throws UncheckedIOException if the proxy cannot listen
     */
    public static FaultProxy start(String host, int port) {
        Objects.requireNonNull(host, "host");
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be between 1 and 65535, was " + port);
        }
        return start(InetSocketAddress.createUnresolved(host, port), "");
    }

    /**
     * Starts a proxy in front of a Redis node; its {@link #uri()} is the node's with the proxy's
     * port ({@code redis://} or {@code rediss://}: TLS passes through untouched). The proxy keeps
     * forwarding to the same port when the node is stopped and started again.
     */
    public static FaultProxy inFrontOf(RedisServer server) {
        String uri = server.uri();
        return start(
                InetSocketAddress.createUnresolved(server.host(), server.port()),
                uri.substring(0, uri.indexOf("://") + 3));
    }

    /** Starts a proxy in front of an etcd member's client port; its {@link #uri()} is {@code http://127.0.0.1:PORT}. */
    public static FaultProxy inFrontOf(EtcdServer member) {
        return start(InetSocketAddress.createUnresolved(EtcdServer.HOST, member.clientPort()), "http://");
    }

    /**
     * Starts a proxy in front of a PostgreSQL server; it keeps forwarding to the same port when
     * the server is stopped and started again. Connect with {@code jdbc:postgresql://127.0.0.1:}
     * {@link #port()}.
     */
    public static FaultProxy inFrontOf(PostgresServer server) {
        return start(InetSocketAddress.createUnresolved(server.host(), server.port()), "");
    }

    /**
     * Starts a proxy in front of a MariaDB server; it keeps forwarding to the same port when the
     * server is stopped and started again. Connect with {@code jdbc:mariadb://127.0.0.1:}
     * {@link #port()}.
     */
    public static FaultProxy inFrontOf(MariaDbServer server) {
        return start(InetSocketAddress.createUnresolved(server.host(), server.port()), "");
    }

    private static FaultProxy start(InetSocketAddress upstream, String scheme) {
        try {
            return new FaultProxy(upstream, scheme);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot start a fault proxy on " + HOST + " in front of " + upstream, e);
        }
    }

    /** {@return the address the proxy listens on: always {@code "127.0.0.1"}} */
    public String host() {
        return HOST;
    }

    /** {@return the port the proxy listens on} */
    public int port() {
        return listener.socket().getLocalPort();
    }

    /** {@return {@code 127.0.0.1:PORT}, the proxy's address, as in a ZooKeeper connect string} */
    public String address() {
        return HOST + ":" + port();
    }

    /**
     * {@return the address clients use: the server's URI with the proxy's port} {@code
     * redis://127.0.0.1:PORT} in front of a Redis node, {@code http://127.0.0.1:PORT} in front of an
     * etcd member, {@code 127.0.0.1:PORT} when started with {@link #start(String, int)}.
     */
    public String uri() {
        return scheme + address();
    }

    /** {@return the server's host and port} */
    public String upstream() {
        return upstream.getHostString() + ":" + upstream.getPort();
    }

    /** {@return how many connections through the proxy are open now, including those held by a partition} */
    public int openConnections() {
        return open;
    }

    /** {@return how many connections the proxy has accepted since it started, refused ones included} */
    public long acceptedConnections() {
        return accepted.get();
    }

    // ---- switches ------------------------------------------------------------------------------------

    /** Delays both directions by {@code latency}, without jitter: a round trip takes twice as long. */
    public FaultProxy latency(Duration latency) {
        return latency(Direction.BOTH, latency, Duration.ZERO);
    }

    /**
     * Delays the bytes of one or both directions by {@code latency}, plus or minus a uniform random
     * {@code jitter} (never below zero), in order. Bytes already read keep the delay they were given.
     *
     * @param direction which way
     * @param latency the mean delay, zero or more
     * @param jitter the greatest deviation from {@code latency}, zero or more
     * @throws IllegalArgumentException if a duration is negative
     */
    public FaultProxy latency(Direction direction, Duration latency, Duration jitter) {
        Objects.requireNonNull(direction, "direction");
        requireNotNegative(latency, "latency");
        requireNotNegative(jitter, "jitter");
        return change(() -> forEachLink(direction, link -> {
            link.latencyNanos = latency.toNanos();
            link.jitterNanos = jitter.toNanos();
        }));
    }

    /** Removes the latency of both directions; bytes already delayed keep their delay. */
    public FaultProxy clearLatency() {
        return latency(Direction.BOTH, Duration.ZERO, Duration.ZERO);
    }

    /** Partitions both directions; see {@link #partition(Direction)}. */
    public FaultProxy partition() {
        return partition(Direction.BOTH);
    }

    /**
     * Stops forwarding in {@code direction} on every open connection (the bytes are held, nothing is
     * reset), and holds every new connection unconnected, until {@link #heal()}. A partition of one
     * direction adds to one already set on the other.
     */
    public FaultProxy partition(Direction direction) {
        Objects.requireNonNull(direction, "direction");
        return change(() -> forEachLink(direction, link -> link.partitioned = true));
    }

    /**
     * Ends the partition in both directions: the held bytes are delivered in order (with the latency
     * they were given, which has usually passed) and connections opened during the partition are
     * connected to the server. Call {@link #reset()} first to drop them instead.
     */
    public FaultProxy heal() {
        return change(() -> {
            toServer.partitioned = false;
            toClient.partitioned = false;
            for (Connection connection : List.copyOf(connections)) {
                if (connection.parked) {
                    connection.connectUpstream();
                }
            }
        });
    }

    /**
     * Caps each connection at {@code bytesPerSecond} in {@code direction}.
     *
     * @throws IllegalArgumentException if {@code bytesPerSecond} is not positive
     */
    public FaultProxy bandwidth(Direction direction, long bytesPerSecond) {
        Objects.requireNonNull(direction, "direction");
        if (bytesPerSecond < 1) {
            throw new IllegalArgumentException("bytesPerSecond must be at least 1, was " + bytesPerSecond);
        }
        return change(() -> forEachLink(direction, link -> link.bytesPerSecond = bytesPerSecond));
    }

    /** Removes the bandwidth cap of both directions. */
    public FaultProxy clearBandwidth() {
        return change(() -> forEachLink(Direction.BOTH, link -> link.bytesPerSecond = 0));
    }

    /** Resets each new connection as soon as it is accepted, until {@link #acceptConnections()}. */
    public FaultProxy refuseConnections() {
        return change(() -> refusing = true);
    }

    /** Forwards new connections again after {@link #refuseConnections()}. */
    public FaultProxy acceptConnections() {
        return change(() -> refusing = false);
    }

    /**
     * Closes every open connection now, with a TCP reset to the client and to the server, and drops
     * the bytes held for them. The switches stay as they are.
     */
    public FaultProxy reset() {
        return change(() -> {
            for (Connection connection : List.copyOf(connections)) {
                connection.close(true);
            }
        });
    }

    /** Switches every fault off: no latency, no cap, no partition (held bytes are delivered), connections accepted. */
    public FaultProxy clearFaults() {
        clearLatency();
        clearBandwidth();
        acceptConnections();
        return heal();
    }

    /** Stops the proxy: closes every connection and the listening socket and ends its thread. Idempotent. */
    @Override
    public void close() {
        closed = true;
        selector.wakeup();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(TestTime.scaled(SWITCH_TIMEOUT).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "FaultProxy[" + address() + " -> " + upstream() + ", " + switches + ", " + open + " open]";
    }

    private static void requireNotNegative(Duration duration, String name) {
        Objects.requireNonNull(duration, name);
        if (duration.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative, was " + duration);
        }
    }

    private void forEachLink(Direction direction, java.util.function.Consumer<Link> change) {
        if (direction.covers(Direction.CLIENT_TO_SERVER)) {
            change.accept(toServer);
        }
        if (direction.covers(Direction.SERVER_TO_CLIENT)) {
            change.accept(toClient);
        }
    }

    /** Runs {@code change} on the selector thread and waits until it has run. */
    private FaultProxy change(Runnable change) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        tasks.add(() -> {
            try {
                change.run();
                switches = describeSwitches(); // before the caller returns: toString() shows it
                done.complete(null);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
        selector.wakeup();
        try {
            done.get(TestTime.scaled(SWITCH_TIMEOUT).toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while switching a fault of " + this, e);
        } catch (ExecutionException e) {
            throw (RuntimeException) e.getCause();
        } catch (TimeoutException e) {
            throw new IllegalStateException(
                    (closed ? this + " is closed" : "The thread of " + this + " did not take the switch in time"), e);
        }
        return this;
    }

    // ---- the selector thread -------------------------------------------------------------------------

    private void run() {
        try {
            while (!closed) {
                Runnable task;
                while ((task = tasks.poll()) != null) {
                    task.run();
                }
                switches = describeSwitches();
                long now = System.nanoTime();
                long next = Long.MAX_VALUE;
                for (Connection connection : List.copyOf(connections)) {
                    next = Math.min(next, connection.pump(now));
                }
                if (next <= now) {
                    selector.selectNow();
                } else if (next == Long.MAX_VALUE) {
                    selector.select();
                } else {
                    selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(next - now + 999_999)));
                }
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    handle(key);
                }
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                log.warn("Fault proxy {} stopped on an unexpected error", address(), e);
            }
        } finally {
            closed = true;
            for (Connection connection : List.copyOf(connections)) {
                connection.close(false);
            }
            closeQuietly(listener);
            try {
                selector.close();
            } catch (IOException e) {
                // closing anyway
            }
            Runnable task;
            while ((task = tasks.poll()) != null) {
                task.run(); // lets a switch that raced with close() return; it changes nothing now
            }
            log.debug("Fault proxy {} closed", address());
        }
    }

    private void handle(SelectionKey key) {
        if (!key.isValid()) {
            return;
        }
        if (key.channel() == listener) {
            accept();
            return;
        }
        Connection connection = (Connection) key.attachment();
        try {
            if (key.isConnectable()) {
                connection.finishConnect();
            }
            if (key.isValid() && key.isReadable()) {
                connection.read(key.channel() == connection.client ? connection.up : connection.down);
            }
            if (key.isValid() && key.isWritable()) {
                // pump() writes on the next turn; clear the interest until a write blocks again
                key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
            }
        } catch (IOException | RuntimeException e) {
            log.debug("Fault proxy {}: connection {} failed: {}", address(), connection, e.toString());
            connection.close(true);
        }
    }

    private void accept() {
        SocketChannel client;
        while (true) {
            try {
                client = listener.accept();
            } catch (IOException e) {
                log.debug("Fault proxy {}: accept failed: {}", address(), e.toString());
                return;
            }
            if (client == null) {
                return;
            }
            accepted.incrementAndGet();
            if (refusing) {
                abort(client);
                continue;
            }
            try {
                client.configureBlocking(false);
                client.setOption(StandardSocketOptions.TCP_NODELAY, true);
                Connection connection = new Connection(client);
                connections.add(connection);
                open = connections.size();
                if (!toServer.partitioned && !toClient.partitioned) {
                    connection.connectUpstream();
                }
            } catch (IOException e) {
                abort(client);
            }
        }
    }

    private String describeSwitches() {
        List<String> on = new ArrayList<>();
        toServer.describe("to server", on);
        toClient.describe("to client", on);
        if (refusing) {
            on.add("refusing connections");
        }
        return on.isEmpty() ? "no faults" : String.join(", ", on);
    }

    private static void abort(SocketChannel channel) {
        try {
            channel.setOption(StandardSocketOptions.SO_LINGER, 0); // close with a reset
        } catch (IOException | RuntimeException e) {
            // closing anyway
        }
        closeQuietly(channel);
    }

    private static void closeQuietly(java.io.Closeable channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    /** The switches of one direction, shared by every connection. */
    private static final class Link {
        long latencyNanos;
        long jitterNanos;
        long bytesPerSecond;
        boolean partitioned;

        void describe(String name, List<String> on) {
            if (latencyNanos > 0 || jitterNanos > 0) {
                on.add(name + " latency " + Duration.ofNanos(latencyNanos).toMillis() + " ms +/- "
                        + Duration.ofNanos(jitterNanos).toMillis() + " ms");
            }
            if (bytesPerSecond > 0) {
                on.add(name + " capped at " + bytesPerSecond + " B/s");
            }
            if (partitioned) {
                on.add(name + " partitioned");
            }
        }
    }

    /** Bytes read from one side, due at the other at {@code due}. */
    private static final class Chunk {
        final byte[] bytes;
        final long due;
        int position;

        Chunk(byte[] bytes, long due) {
            this.bytes = bytes;
            this.due = due;
        }
    }

    /** One direction of one connection: what was read from the source and not yet written to the sink. */
    private final class Flow {
        final Link link;
        final ArrayDeque<Chunk> held = new ArrayDeque<>();
        SocketChannel source;
        SocketChannel sink;
        int heldBytes;
        long lastDue;
        long nextSendAt;
        boolean sourceEnded;
        boolean sinkShut;
        boolean blocked;

        Flow(Link link) {
            this.link = link;
        }

        boolean wantsRead() {
            return source != null && !sourceEnded && heldBytes < MAX_HELD_BYTES;
        }

        boolean done() {
            return sinkShut;
        }

        void add(byte[] bytes, long now) {
            long delay = link.latencyNanos;
            if (link.jitterNanos > 0) {
                delay += random.nextLong(-link.jitterNanos, link.jitterNanos + 1);
            }
            long due = Math.max(now + Math.max(0, delay), lastDue); // in order, whatever the jitter
            lastDue = due;
            held.add(new Chunk(bytes, due));
            heldBytes += bytes.length;
        }

        /** Writes what is due; returns when it next has something to do, {@code Long.MAX_VALUE} if never. */
        long pump(long now) throws IOException {
            blocked = false;
            if (sink == null || link.partitioned || sinkShut) {
                return Long.MAX_VALUE;
            }
            while (!held.isEmpty()) {
                Chunk chunk = held.peek();
                if (chunk.due > now) {
                    return chunk.due;
                }
                int length = chunk.bytes.length - chunk.position;
                long rate = link.bytesPerSecond;
                if (rate > 0) {
                    if (nextSendAt > now) {
                        return nextSendAt;
                    }
                    length = (int) Math.min(length, Math.max(1, rate * PACING_SLICE_NANOS / 1_000_000_000L));
                }
                int written = sink.write(ByteBuffer.wrap(chunk.bytes, chunk.position, length));
                chunk.position += written;
                heldBytes -= written;
                if (rate > 0 && written > 0) {
                    nextSendAt = Math.max(nextSendAt, now) + written * 1_000_000_000L / rate;
                }
                if (chunk.position == chunk.bytes.length) {
                    held.poll();
                }
                if (written < length) {
                    blocked = true;
                    return Long.MAX_VALUE; // OP_WRITE tells when the sink takes more
                }
            }
            if (sourceEnded) {
                sink.shutdownOutput();
                sinkShut = true;
            }
            return Long.MAX_VALUE;
        }
    }

    /** A client's connection and, once connected, the proxy's own connection to the server. */
    private final class Connection {
        final SocketChannel client;
        final Flow up = new Flow(toServer);
        final Flow down = new Flow(toClient);
        SocketChannel server;
        SelectionKey clientKey;
        SelectionKey serverKey;
        boolean parked = true;
        boolean connected;
        boolean closed;

        Connection(SocketChannel client) throws IOException {
            this.client = client;
            this.clientKey = client.register(selector, 0, this);
        }

        void connectUpstream() {
            parked = false;
            try {
                server = SocketChannel.open();
                server.configureBlocking(false);
                server.setOption(StandardSocketOptions.TCP_NODELAY, true);
                InetSocketAddress address = new InetSocketAddress(upstream.getHostString(), upstream.getPort());
                serverKey = server.register(selector, 0, this);
                if (server.connect(address)) {
                    connected();
                } else {
                    serverKey.interestOps(SelectionKey.OP_CONNECT);
                }
            } catch (IOException | RuntimeException e) {
                log.debug("Fault proxy {}: cannot connect to {}: {}", address(), upstream(), e.toString());
                close(true);
            }
        }

        void finishConnect() throws IOException {
            if (server.finishConnect()) {
                connected();
            }
        }

        private void connected() {
            connected = true;
            up.source = client;
            up.sink = server;
            down.source = server;
            down.sink = client;
        }

        void read(Flow flow) throws IOException {
            long now = System.nanoTime();
            while (flow.wantsRead()) {
                readBuffer.clear();
                readBuffer.limit(Math.min(READ_CHUNK, MAX_HELD_BYTES - flow.heldBytes));
                int n = flow.source.read(readBuffer);
                if (n < 0) {
                    flow.sourceEnded = true;
                } else if (n == 0) {
                    return;
                } else {
                    byte[] bytes = new byte[n];
                    readBuffer.flip();
                    readBuffer.get(bytes);
                    flow.add(bytes, now);
                }
            }
        }

        long pump(long now) {
            if (closed) {
                return Long.MAX_VALUE;
            }
            try {
                long next = Math.min(up.pump(now), down.pump(now));
                if (up.done() && down.done()) {
                    close(false);
                    return Long.MAX_VALUE;
                }
                if (connected) {
                    interest(clientKey, up.wantsRead(), down.blocked);
                    interest(serverKey, down.wantsRead(), up.blocked);
                }
                return next;
            } catch (IOException | RuntimeException e) {
                log.debug("Fault proxy {}: connection {} failed: {}", address(), this, e.toString());
                close(true);
                return Long.MAX_VALUE;
            }
        }

        private void interest(SelectionKey key, boolean read, boolean write) {
            int ops = (read ? SelectionKey.OP_READ : 0) | (write ? SelectionKey.OP_WRITE : 0);
            if (key.isValid() && key.interestOps() != ops) {
                key.interestOps(ops);
            }
        }

        void close(boolean reset) {
            if (closed) {
                return;
            }
            closed = true;
            connections.remove(this);
            open = connections.size();
            if (reset) {
                abort(client);
                if (server != null) {
                    abort(server);
                }
            } else {
                closeQuietly(client);
                if (server != null) {
                    closeQuietly(server);
                }
            }
        }

        @Override
        public String toString() {
            return client.socket().getRemoteSocketAddress() + " -> " + upstream();
        }
    }
}
