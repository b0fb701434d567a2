package io.quorumlock.redis.client;

import io.quorumlock.internal.Ticker;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pipelined, non-blocking connection to one node. Requests are written at once and their
 * handlers queued; replies are read by whoever waits on the lane's selector and handed to the
 * handlers in order. It connects lazily (over TLS for {@code rediss://}: see {@link Wire}) and
 * sets the connection up first ({@link SetUp}: AUTH, SELECT, SCRIPT LOAD), holding requests back
 * until the handshake is done and the node has accepted the set-up, and reads {@code INFO server}
 * for the node's start and {@code CONFIG GET append*} for its fsync policy, answered before any
 * request. A script the node has lost from its cache (NOSCRIPT) is sent again by its text. It
 * never piles requests onto a node that has owed a reply without answering anything for the node
 * timeout: those are answered at once as not sent. A node that answers, however deep its
 * pipeline, is not silent.
 */
final class RespLink implements Transport.Link {

    private static final Logger log = LoggerFactory.getLogger(RespLink.class);

    /** For a probe whose answer only the link itself reads. */
    private static final Transport.ReplyHandler IGNORED = (command, reply, link) -> {};

    /** A WAIT found fewer replicas than asked for: ask the node's ROLE again before the next request. */
    private boolean recount;

    private final NodeAddress address;
    private final int index;
    private final String name;
    private final Selector selector;
    private final long timeoutNanos;
    /** How long a connection may take to come up (TCP, TLS, set-up), for every request queued meanwhile. */
    private final long connectTimeoutNanos;

    private final Ticker ticker;
    private final Locator resolver;
    /** Where the open connection goes; null while none is open. */
    private Locator.Result connectedTo;

    private final long staleNanos;
    /**
     * Gets the node's INFO server and CONFIG GET append* replies, a new handler for every new
     * connection: see {@link NodeStarts}.
     */
    private final Supplier<Transport.ReplyHandler> serverInfo;
    /** For {@code rediss://} nodes; null if none is configured. */
    private final TlsConfig tls;
    /** Loaded on every new connection, so that EVALSHA finds them. */
    private final List<Script> scripts;
    /** For a connection of {@link Subscriptions}: gets its messages and its loss; null for a lane's. */
    private final Subscriptions.Push push;

    /** What the node owes replies to; a set-up command has a null command. */
    private final Owed pending = new Owed();

    private Wire channel;
    /** The {@link #connection} id of the current connection: unique in the process. */
    private long opened;

    private static final AtomicLong CONNECTIONS = new AtomicLong();

    /** {@code send}'s {@code only} for a command that may go on any connection. */
    private static final long ANY = -1;

    private SelectionKey key;
    private boolean connected;
    /** AUTH and SELECT; requests wait in {@link #out} until the node has accepted them. */
    private ByteBuffer setup = ByteBuffer.allocate(256);

    /** Closed for good with its lock: no connection is opened again. */
    private boolean shut;

    /** When the last whole reply was read, or the connection came up: the node's last sign of life. */
    private long lastReplyNanos = Long.MIN_VALUE;

    private int setupOwed;
    /** Set-up commands of this connection not answered yet: until then it is still being opened. */
    private int setupUnanswered;

    private ByteBuffer out = ByteBuffer.allocate(1024);
    private ByteBuffer in = ByteBuffer.allocate(4096);
    private RespReader reader = new RespReader();

    RespLink(
            NodeAddress address,
            int index,
            Locator resolver,
            Selector selector,
            long timeoutNanos,
            long connectTimeoutNanos,
            Ticker ticker,
            Supplier<Transport.ReplyHandler> serverInfo,
            TlsConfig tls,
            List<Script> scripts,
            Subscriptions.Push push) {
        this.address = address;
        this.index = index;
        this.push = push;
        this.tls = tls;
        this.scripts = scripts;
        this.resolver = resolver;
        this.ticker = ticker;
        this.serverInfo = serverInfo;
        this.name = address.toString();
        this.selector = selector;
        this.timeoutNanos = timeoutNanos;
        this.connectTimeoutNanos = Math.max(timeoutNanos, connectTimeoutNanos);
        // A reply owed this long means a frozen or lost node: drop the connection and start afresh.
        this.staleNanos = Math.max(20 * timeoutNanos, 1_000_000_000L);
    }

    @Override
    public String node() {
        return name;
    }

    @Override
    public int index() {
        return index;
    }

    @Override
    public void send(Command command, Transport.ReplyHandler handler) {
        send(command, handler, false, false, ANY);
    }

    @Override
    public void sendBehind(Command command, Transport.ReplyHandler handler) {
        send(command, handler, true, false, ANY);
    }

    @Override
    public void sendOn(long connection, Command command, Transport.ReplyHandler handler) {
        send(command, handler, true, false, connection);
    }

    @Override
    public synchronized long connection() {
        return channel == null ? Long.MIN_VALUE : opened; // no connection: no command can follow on it
    }

    /**
     * Sends {@code command} right behind an {@code ASKING}, nothing between them, as {@link
     * #sendBehind} does: a cluster node's {@code ASK} redirect of one command to the node that
     * imports its slot.
     */
    void sendAsking(Command command, Transport.ReplyHandler handler) {
        send(command, handler, true, true, ANY);
    }

    /** {@code only}: the {@link #connection} the command must go on, or {@link #ANY}. */
    private synchronized void send(
            Command command, Transport.ReplyHandler handler, boolean behind, boolean asking, long only) {
        if (shut) { // a connection opened now would outlive the lock: nobody would ever close it
            handler.onReply(command, new Reply.Failure(Reply.Kind.NOT_SENT, "not sent: the Redlock was closed"), this);
            return;
        }
        if (channel != null && resolver.moved(connectedTo)) {
            close(Reply.Kind.BROKEN, "the sentinels name another master now; connection dropped");
        }
        long now = ticker.nanos();
        long silentFor = silentFor(now);
        if (silentFor > timeoutNanos && connected) {
            readArrived();
            silentFor = silentFor(ticker.nanos());
        }
        if (silentFor > staleNanos) {
            close(
                    Reply.Kind.TIMED_OUT,
                    (connected ? "no reply within " + staleNanos / 1_000_000 + " ms" : channel.notUpWithin(silentFor))
                            + "; connection dropped");
        } else if (!behind && silentFor > timeoutNanos && (!connecting() || silentFor > connectTimeoutNanos)) {
            String why = connected
                    ? "not sent: the node owes a reply and has answered nothing for " + silentFor / 1_000_000 + " ms"
                    : "not sent: " + channel.notUpWithin(silentFor);
            handler.onReply(command, new Reply.Failure(Reply.Kind.NOT_SENT, why), this);
            return;
        }
        if (only != ANY && (channel == null || opened != only)) {
            handler.onReply(
                    command,
                    new Reply.Failure(Reply.Kind.BROKEN, "not sent: the connection it had to follow was dropped"),
                    this);
            return;
        }
        if (channel == null && !open(command, handler)) {
            return;
        }
        if (recount) {
            recount = false;
            askRole(now);
        }
        if (asking) {
            out = Resp.write(out, Command.asking(), false);
            pending.add(Command.asking(), IGNORED, now, false, null);
        }
        out = Resp.write(out, command, false);
        pending.add(command, handler, now + command.blocksNanos(), false, null);
        write();
    }

    /** Asks the node's {@code ROLE}, which tells its {@link Locator} how many replicas it has. */
    private void askRole(long now) {
        Command role = Command.role();
        out = Resp.write(out, role, false);
        pending.add(role, IGNORED, now, false, null);
    }

    @Override
    public synchronized boolean connecting() {
        return channel != null && (!connected || setupUnanswered > 0);
    }

    /** Handles what the selector found ready on this link's channel. */
    synchronized void ready(SelectionKey readyKey) {
        drive(readyKey, readyKey.isValid() && readyKey.isReadable());
    }

    @Override
    public synchronized long silentSince() {
        if (connected && !pending.isEmpty()) {
            readArrived();
        }
        return pending.isEmpty() ? Long.MAX_VALUE : Math.max(lastReplyNanos, pending.sentAt());
    }

    /**
     * Reads what arrived that nobody has read yet (the caller polling the lane may be kept off the
     * CPU): a node is never judged silent for replies waiting in the socket.
     */
    private void readArrived() {
        int before = pending.size();
        drive(key, true);
        if (pending.size() < before) {
            selector.wakeup(); // what was read may decide rounds whose callers wait on another's poll
        }
    }

    /** How long the node has owed a reply without answering anything, at {@code now}; 0 if it owes none. */
    private long silentFor(long now) {
        return pending.isEmpty() ? 0 : now - Math.max(lastReplyNanos, pending.sentAt());
    }

    /** Carries the connection on: its connect or handshake, what is left to write, and reading if {@code readable}. */
    private void drive(SelectionKey readyKey, boolean readable) {
        if (readyKey != key || readyKey == null || !readyKey.isValid()) {
            return;
        }
        try {
            boolean connecting = !connected;
            if (connecting && !(connected = channel.connect())) {
                return; // still connecting, or in the TLS handshake
            }
            if (connecting) {
                lastReplyNanos = ticker.nanos();
            }
            if (readyKey.isWritable() || connecting) {
                write();
            }
            if (key != null && key.isValid() && readable) {
                read();
            }
        } catch (Wire.Failure e) { // a certificate, or the wrong scheme: a configuration error
            close(e.kind(), e.getMessage());
        } catch (IOException e) {
            close(
                    connected ? Reply.Kind.BROKEN : Reply.Kind.NOT_SENT,
                    (connected ? "connection lost: " : "could not connect: ") + NodeErrors.reason(e));
        } catch (RespReader.ProtocolException e) {
            close(Reply.Kind.PROTOCOL, "protocol error: the node " + e.getMessage() + pending.firstOwed());
        }
    }

    private boolean open(Command command, Transport.ReplyHandler handler) {
        // The sentinels are asked on a connection of their own, which may take the connect timeout.
        Locator.Result target =
                resolver.address(ticker.nanos() + (resolver.followsFailovers() ? connectTimeoutNanos : timeoutNanos));
        if (target.address() == null) {
            handler.onReply(command, new Reply.Failure(target.kind(), "not sent: " + target.failure()), this);
            return false;
        }
        try {
            connectedTo = target;
            opened = CONNECTIONS.incrementAndGet();
            channel = Wire.open(target, address, tls, selector, this);
            key = channel.key();
            selector.wakeup(); // another caller may be polling the lane: its select must see the new channel
            connected = channel.connect();
            lastReplyNanos = ticker.nanos(); // opened: silence counts from here
        } catch (IOException | RuntimeException e) {
            // A TLS handshake may fail at once, on a fast node: a configuration error keeps its kind.
            Reply.Kind kind = e instanceof Wire.Failure failure ? failure.kind() : Reply.Kind.NOT_SENT;
            String why = e instanceof Wire.Failure ? e.getMessage() : "could not connect: " + NodeErrors.reason(e);
            close(kind, why);
            handler.onReply(command, new Reply.Failure(kind, why), this);
            return false;
        }
        for (SetUp step : SetUp.of(address, scripts)) {
            setUp(step);
        }
        Transport.ReplyHandler starts = serverInfo.get();
        for (Command probe : SetUp.PROBES) {
            out = Resp.write(out, probe, false);
            pending.add(probe, starts, ticker.nanos(), false, null);
        }
        if (resolver.countsReplicas()) {
            askRole(ticker.nanos()); // how many replicas the node has, for the WAIT behind a write
        }
        return true;
    }

    private void setUp(SetUp what) {
        if (what.holdsRequests()) {
            setup = Resp.command(setup, what.words());
            setupOwed++;
        } else {
            out = Resp.command(out, what.words());
        }
        pending.add(null, null, ticker.nanos(), false, what);
        setupUnanswered++;
    }

    /** Writes the set-up commands, and the requests once the set-up is answered. */
    private void write() {
        if (!connected) {
            return;
        }
        try {
            boolean more = flush(setup) || (setupOwed == 0 && flush(out));
            channel.interest(more);
            if ((key.interestOps() & SelectionKey.OP_WRITE) != 0) {
                selector.wakeup(); // a select in progress on another thread must watch for the socket's room
            }
        } catch (Wire.Failure e) {
            close(e.kind(), e.getMessage());
        } catch (IOException e) {
            close(Reply.Kind.BROKEN, "connection lost: " + NodeErrors.reason(e));
        }
    }

    /** Writes what the socket takes; true if bytes are left. */
    private boolean flush(ByteBuffer buffer) throws IOException {
        buffer.flip();
        channel.write(buffer);
        buffer.compact();
        return buffer.position() > 0;
    }

    /** Reads what has arrived and hands every whole reply to its handler. */
    private void read() throws IOException, RespReader.ProtocolException {
        int count;
        do {
            count = channel.read(in);
            if (count < 0) {
                close(Reply.Kind.BROKEN, "connection lost: closed by the node");
                return;
            }
            in.flip();
            Reply reply;
            boolean answered = false;
            while (channel != null && (reply = reader.next(in)) != null) {
                answered = true;
                deliver(reply);
            }
            if (answered && channel != null) {
                lastReplyNanos = ticker.nanos();
            }
            if (channel == null) {
                return;
            }
            in.compact();
            in = Resp.roomToRead(in);
            // A full buffer may have left more behind, in the socket or in the TLS engine.
        } while (count > 0 && (in.position() > 0 || channel.buffered()));
    }

    private void deliver(Reply reply) {
        if (push != null && Subscriptions.pushed(reply, push)) {
            return;
        }
        if (pending.isEmpty()) {
            close(Reply.Kind.PROTOCOL, "protocol error: the node sent a reply nobody asked for");
            return;
        }
        Command command = pending.command();
        Transport.ReplyHandler handler = pending.handler();
        long sentAt = pending.sentAt();
        boolean withScript = pending.withScript();
        SetUp what = pending.setUp();
        pending.remove();
        if (what != null) {
            setupUnanswered--;
            if (reply instanceof Reply.Error error && what.required()) {
                // AUTH or SELECT refused: nothing but the set-up was sent, the requests behind it were not.
                setUpFailed(SetUp.refused(address, error.message()));
            } else if (reply instanceof Reply.Error error) {
                // The requests went on; a refused SCRIPT LOAD makes EVALSHA fall back to EVAL.
                log.debug("node {} refused {}: {}", name, what.command(), NodeErrors.shortened(error.message()));
                if (what.holdsRequests() && --setupOwed == 0) {
                    write(); // a ROLE this user may not run: the requests go
                }
            } else if (what.role() && !SetUp.isMaster(reply)) {
                setUpFailed(SetUp.notTheMaster(connectedTo, reply));
            } else if (what.expected() != null && !what.expected().equals(reply)) {
                outOfStep(reply, what.command());
            } else if (what.holdsRequests() && --setupOwed == 0) {
                write();
            }
        } else if (!command.fits(reply)) {
            outOfStep(reply, command.name());
        } else if (reply instanceof Reply.Error error && error.message().startsWith("NOSCRIPT") && !withScript) {
            // The script cache was flushed since this connection loaded it: send the script itself.
            // (For a straggler whose round has ended, this happens when the lane is next used.)
            out = Resp.write(out, command, true);
            pending.add(command, handler, sentAt, true, null);
            write();
        } else {
            recount |= command.aboutReplicas() && resolver.replied(command, reply);
            handler.onReply(command, reply, this);
            if (reply instanceof Reply.Error error
                    && error.message().startsWith("READONLY")
                    && resolver.followsFailovers()
                    && channel != null) {
                // The master this connection went to is a replica now: look for the new one.
                close(Reply.Kind.BROKEN, "the node is a replica now (it refused a write as READONLY)");
            }
        }
    }

    /** A well-formed reply that no Redis server sends to what was asked: the stream cannot be trusted. */
    private void outOfStep(Reply reply, String command) {
        close(
                Reply.Kind.PROTOCOL,
                "protocol error: the node answered " + Reply.shape(reply) + " to " + command
                        + ": not a Redis server, or out of step");
    }

    /** The set-up failed (refused, or the node is not the master): none of the requests held back was sent. */
    private void setUpFailed(Reply.Failure failure) {
        connected = false;
        close(failure.kind(), failure.detail());
    }

    /** Drops the connection for good, as {@link #close} does, and opens none after it. */
    synchronized void shut() {
        shut = true;
        close(Reply.Kind.BROKEN, "client closed");
    }

    /** Drops the connection; every request still owed a reply gets a failure of {@code kind}. */
    synchronized void close(Reply.Kind kind, String detail) {
        boolean open = channel != null;
        if (open) {
            try {
                channel.close();
            } catch (IOException e) {
                log.debug("closing the connection to {}: {}", name, e.toString());
            }
        }
        channel = null;
        key = null;
        if (open && !shut) {
            resolver.recheck();
        }
        connectedTo = null;
        lastReplyNanos = Long.MIN_VALUE;
        setup.clear();
        setupOwed = 0;
        setupUnanswered = 0;
        out.clear();
        in.clear();
        reader = new RespReader();
        // Nothing was sent on a connection that never came up, unless its set-up was refused.
        Reply.Failure failure =
                new Reply.Failure(connected || kind == Reply.Kind.MISCONFIGURED ? kind : Reply.Kind.NOT_SENT, detail);
        connected = false;
        for (Owed owed = pending.drain(); !owed.isEmpty(); owed.remove()) {
            if (owed.handler() != null) {
                owed.handler().onReply(owed.command(), failure, this);
            }
        }
        if (open) {
            selector.wakeup(); // the failures may have decided rounds whose callers wait on another's poll
            if (push != null) {
                push.closed(detail);
            }
        }
    }
}
