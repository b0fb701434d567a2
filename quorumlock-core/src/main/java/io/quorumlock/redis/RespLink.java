package io.quorumlock.redis;

import io.quorumlock.NodeOutcome.Vote;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pipelined, non-blocking connection to one node. Requests are written at once and their
 * handlers queued; replies are read by whoever waits on the lane's selector and handed to the
 * handlers in order. It connects lazily (over TLS for {@code rediss://}: see {@link Wire}) and sets
 * the connection up first (AUTH, SELECT, SCRIPT LOAD), holding requests back until the handshake
 * is done and the node has accepted the set-up, and reads {@code INFO
 * server} for the node's start, answered before any request. It never piles requests
 * onto a node that owes a reply older than the node timeout: those are answered at once as not
 * sent.
 */
final class RespLink implements Transport.Link {

    private static final Logger log = LoggerFactory.getLogger(RespLink.class);

    /**
     * A sent request and who gets its reply. A null handler marks a set-up command, whose {@code
     * withScript} then says whether requests were held back behind it.
     */
    private record Pending(Request request, Transport.ReplyHandler handler, long sentAt, boolean withScript) {}

    private final NodeAddress address;
    private final String name;
    private final Selector selector;
    private final long timeoutNanos;
    private final long staleNanos;
    /** Gets the node's INFO server reply on every new connection: see {@link NodeStarts}. */
    private final Transport.ReplyHandler serverInfo;
    /** For {@code rediss://} nodes; null if none is configured. */
    private final TlsConfig tls;

    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private Wire channel;
    private SelectionKey key;
    private boolean connected;
    /** AUTH and SELECT; requests wait in {@link #out} until the node has accepted them. */
    private ByteBuffer setup = ByteBuffer.allocate(256);

    private int setupOwed;
    private ByteBuffer out = ByteBuffer.allocate(1024);
    private ByteBuffer in = ByteBuffer.allocate(4096);

    RespLink(
            NodeAddress address,
            Selector selector,
            long timeoutNanos,
            Transport.ReplyHandler serverInfo,
            TlsConfig tls) {
        this.address = address;
        this.tls = tls;
        this.serverInfo = serverInfo;
        this.name = address.toString();
        this.selector = selector;
        this.timeoutNanos = timeoutNanos;
        // A reply owed this long means a frozen or lost node: drop the connection and start afresh.
        this.staleNanos = Math.max(20 * timeoutNanos, 1_000_000_000L);
    }

    @Override
    public String node() {
        return name;
    }

    @Override
    public void send(Request request, Transport.ReplyHandler handler) {
        send(request, handler, false);
    }

    @Override
    public void sendBehind(Request request, Transport.ReplyHandler handler) {
        send(request, handler, true);
    }

    private synchronized void send(Request request, Transport.ReplyHandler handler, boolean behind) {
        long now = System.nanoTime();
        Pending oldest = pending.peek();
        long owedFor = oldest == null ? 0 : now - oldest.sentAt();
        if (owedFor > staleNanos) {
            close(
                    Vote.TIMED_OUT,
                    (connected ? "no reply within " + staleNanos / 1_000_000 + " ms" : channel.notUpWithin(owedFor))
                            + "; connection dropped");
        } else if (!behind && owedFor > timeoutNanos) {
            String why = connected
                    ? "not sent: the node owes a reply for " + owedFor / 1_000_000 + " ms"
                    : "not sent: " + channel.notUpWithin(owedFor);
            handler.onReply(request, new Resp.Failure(Vote.UNREACHABLE, why), this);
            return;
        }
        if (channel == null && !open(request, handler)) {
            return;
        }
        out = Resp.write(out, request, false);
        pending.add(new Pending(request, handler, now, false));
        write();
    }

    /** Handles what the selector found ready on this link's channel. */
    synchronized void ready(SelectionKey readyKey) {
        if (readyKey != key || !readyKey.isValid()) {
            return;
        }
        try {
            boolean connecting = !connected;
            if (connecting && !(connected = channel.connect())) {
                return; // still connecting, or in the TLS handshake
            }
            if (readyKey.isWritable() || connecting) {
                write();
            }
            if (key != null && key.isValid() && readyKey.isReadable()) {
                read();
            }
        } catch (Wire.Failure e) { // a certificate, or the wrong scheme: a configuration error
            close(e.vote(), e.getMessage());
        } catch (IOException e) {
            close(
                    connected ? Vote.ERROR : Vote.UNREACHABLE,
                    (connected ? "connection lost: " : "could not connect: ") + reason(e));
        } catch (RuntimeException e) { // a reply that does not parse: the stream cannot be trusted any more
            close(Vote.ERROR, "protocol error: " + e.getMessage());
        }
    }

    private boolean open(Request request, Transport.ReplyHandler handler) {
        try {
            channel = Wire.open(address, tls, selector, this);
            key = channel.key();
            connected = channel.connect();
        } catch (IOException | RuntimeException e) {
            // A TLS handshake may fail at once, on a fast node: a configuration error keeps its vote.
            Vote vote = e instanceof Wire.Failure failure ? failure.vote() : Vote.UNREACHABLE;
            String why = e instanceof Wire.Failure ? e.getMessage() : "could not connect: " + reason(e);
            close(vote, why);
            handler.onReply(request, new Resp.Failure(vote, why), this);
            return false;
        }
        // AUTH and SELECT must be accepted before any request may go: held back until answered.
        if (address.password().isPresent()) {
            setUp(
                    true,
                    address.user().isPresent()
                            ? new String[] {
                                "AUTH", address.user().get(), address.password().get()
                            }
                            : new String[] {"AUTH", address.password().get()});
        }
        if (address.database() != 0) {
            setUp(true, "SELECT", Integer.toString(address.database()));
        }
        setUp(false, "SCRIPT", "LOAD", Scripts.DELETE_IF_EQUALS);
        setUp(false, "SCRIPT", "LOAD", Scripts.EXTEND_IF_EQUALS);
        // Pipelined like the scripts: its reply comes before any request's, so the node's start is
        // known before its first vote on this connection. Sent as a request, not as set-up: a node
        // that refuses INFO (renamed or denied) still serves the lock.
        Request info = Request.info("server");
        out = Resp.write(out, info, false);
        pending.add(new Pending(info, serverInfo, System.nanoTime(), false));
        return true;
    }

    private void setUp(boolean holdRequests, String... command) {
        if (holdRequests) {
            setup = Resp.command(setup, command);
            setupOwed++;
        } else {
            out = Resp.command(out, command);
        }
        pending.add(new Pending(null, null, System.nanoTime(), holdRequests));
    }

    /** Writes the set-up commands, and the requests once the set-up is answered. */
    private void write() {
        if (!connected) {
            return;
        }
        try {
            boolean more = flush(setup) || (setupOwed == 0 && flush(out));
            channel.interest(more);
        } catch (Wire.Failure e) {
            close(e.vote(), e.getMessage());
        } catch (IOException e) {
            close(Vote.ERROR, "connection lost: " + reason(e));
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
    private void read() throws IOException {
        int count;
        do {
            count = channel.read(in);
            if (count < 0) {
                close(Vote.ERROR, "connection lost: closed by the node");
                return;
            }
            in.flip();
            Object reply;
            while (channel != null && (reply = Resp.parse(in)) != Resp.INCOMPLETE) {
                deliver(reply);
            }
            if (channel == null) {
                return;
            }
            in.compact();
            in = Resp.room(in, 1024);
            // A full buffer may have left more behind, in the socket or in the TLS engine.
        } while (count > 0 && (in.position() > 0 || channel.buffered()));
    }

    private void deliver(Object reply) {
        Pending request = pending.poll();
        if (request == null) {
            close(Vote.ERROR, "protocol error: a reply nobody asked for");
        } else if (request.handler() == null) {
            if (reply instanceof Resp.Error error && request.withScript()) {
                // AUTH or SELECT refused: nothing but the set-up was sent, the requests behind it were not.
                setUpRefused(error.message());
            } else if (reply instanceof Resp.Error error) {
                // SCRIPT LOAD refused: the requests went on; EVALSHA falls back to EVAL, or shows the error.
                log.debug("node {} refused to load a script: {}", name, NodeErrors.shortened(error.message()));
            } else if (request.withScript() && --setupOwed == 0) {
                write();
            }
        } else if (reply instanceof Resp.Error error
                && error.message().startsWith("NOSCRIPT")
                && !request.withScript()) {
            // The script cache was flushed since this connection loaded it: send the script itself.
            // (For a straggler whose round has ended, this happens when the lane is next used.)
            out = Resp.write(out, request.request(), true);
            pending.add(new Pending(request.request(), request.handler(), request.sentAt(), true));
            write();
        } else {
            request.handler().onReply(request.request(), reply, this);
        }
    }

    private void setUpRefused(String error) {
        // A server may echo what it was sent: the password never goes into the evidence.
        String text = address.password().map(p -> error.replace(p, "***")).orElse(error);
        String misconfiguration = NodeErrors.misconfiguration(text);
        connected = false;
        if (misconfiguration != null) {
            close(Vote.MISCONFIGURED, "not sent: " + misconfiguration);
        } else {
            close(Vote.UNREACHABLE, "not sent: the node refused the connection set-up: " + NodeErrors.shortened(text));
        }
    }

    /** Drops the connection; every request still owed a reply gets {@code vote} as its failure. */
    synchronized void close(Vote vote, String detail) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException e) {
                log.debug("closing the connection to {}: {}", name, e.toString());
            }
        }
        channel = null;
        key = null;
        setup.clear();
        setupOwed = 0;
        out.clear();
        in.clear();
        // Nothing was sent on a connection that never came up, unless its set-up was refused.
        Resp.Failure failure =
                new Resp.Failure(connected || vote == Vote.MISCONFIGURED ? vote : Vote.UNREACHABLE, detail);
        connected = false;
        List<Pending> owed = new ArrayList<>(pending);
        pending.clear();
        for (Pending p : owed) {
            if (p.handler() != null) {
                p.handler().onReply(p.request(), failure, this);
            }
        }
    }

    private static String reason(Exception e) {
        if (e instanceof ConnectException) {
            return "connection refused";
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
