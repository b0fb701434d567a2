package io.quorumlock.redis.client;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLException;

/**
 * TLS over a non-blocking connection, with an {@link SSLEngine} and no thread of its own: the
 * handshake is driven by {@link #connect()} on the lane's selector, and post-handshake messages
 * (TLS 1.3 session tickets, key updates, a renegotiation) by {@link #read} and {@link #write}.
 * Requests wait until the handshake is done, as they wait for AUTH. Each buffer holds at most one
 * TLS record (about 16 KiB) and never grows past {@link #MAX_BUFFER}.
 */
final class TlsWire implements Wire {

    /** A bound on every buffer: a TLS record is at most 16 KiB plus overhead (the engine says how much). */
    static final int MAX_BUFFER = 1 << 17;

    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final SocketChannel channel;
    private final SelectionKey key;
    private final SSLEngine engine;
    private final TlsConfig config;
    private boolean pending;
    private boolean started;
    private boolean handshaken;
    private boolean inboundDone;
    /** The first byte the node sent, or -1: tells a plain-text answer from a TLS one. */
    private int firstByte = -1;

    /** What the node sent, not yet unwrapped (write mode). */
    private ByteBuffer netIn;
    /** What is wrapped for the node, not yet written (write mode). */
    private ByteBuffer netOut;
    /** Unwrapped bytes not yet handed to the reader (write mode). */
    private ByteBuffer appIn;

    TlsWire(SocketChannel channel, SelectionKey key, boolean pending, SSLEngine engine, TlsConfig config) {
        this.channel = channel;
        this.key = key;
        this.pending = pending;
        this.engine = engine;
        this.config = config;
        int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocate(packet);
        this.netOut = ByteBuffer.allocate(packet);
        this.appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
    }

    @Override
    public SelectionKey key() {
        return key;
    }

    @Override
    public boolean connect() throws IOException {
        if (pending && !channel.finishConnect()) {
            return false;
        }
        pending = false;
        try {
            if (!started) {
                started = true;
                engine.beginHandshake();
            }
            if (handshake()) {
                handshaken = true;
                return true;
            }
            return false;
        } catch (SSLException e) {
            throw TlsErrors.handshakeFailed(e, firstByte, config);
        }
    }

    /** Steps through the handshake as far as the bytes at hand allow; true when it is done. */
    private boolean handshake() throws IOException {
        while (true) {
            switch (engine.getHandshakeStatus()) {
                case NEED_TASK -> runTasks();
                case NEED_WRAP -> {
                    if (!wrap(EMPTY)) {
                        key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                        return false;
                    }
                }
                case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                    Status status = unwrap();
                    if (status == Status.CLOSED) {
                        throw TlsErrors.closedInHandshake(firstByte);
                    }
                    if (status == Status.BUFFER_UNDERFLOW) {
                        int count = fill();
                        if (count < 0) {
                            throw TlsErrors.closedInHandshake(firstByte);
                        }
                        if (count == 0) {
                            interest(false);
                            return false;
                        }
                    }
                }
                default -> { // NOT_HANDSHAKING, FINISHED
                    flush();
                    return true;
                }
            }
        }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        try {
            int total = 0;
            while (true) {
                total += drain(dst);
                if (!dst.hasRemaining()) {
                    return total;
                }
                if (inboundDone) {
                    return total > 0 ? total : -1;
                }
                Status status = unwrap();
                if (status == Status.BUFFER_UNDERFLOW && total > 0) {
                    return total; // no read from the socket for nothing: the caller asks again if a reply is cut
                }
                if (status == Status.BUFFER_UNDERFLOW) {
                    int count = fill();
                    if (count < 0) {
                        inboundDone = true; // closed without close_notify: the reply parser sees what is missing
                    } else if (count == 0) {
                        return total;
                    }
                }
            }
        } catch (SSLException e) {
            throw TlsErrors.afterHandshake(e, config);
        }
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        // What a partial write left of the last record goes first, also when src has nothing more:
        // the key stays interested in writing until it is gone (see interest).
        if (netOut.position() > 0 && !flush()) {
            return;
        }
        try {
            while (src.hasRemaining() && wrap(src)) {
                if (engine.getHandshakeStatus() == HandshakeStatus.NEED_UNWRAP) {
                    return; // a renegotiation waits for the node: read() carries it on
                }
            }
        } catch (SSLException e) {
            throw TlsErrors.afterHandshake(e, config);
        }
    }

    @Override
    public boolean buffered() {
        return appIn.position() > 0 || netIn.position() > 0;
    }

    @Override
    public void interest(boolean moreToWrite) {
        key.interestOps(
                moreToWrite || netOut.position() > 0
                        ? SelectionKey.OP_READ | SelectionKey.OP_WRITE
                        : SelectionKey.OP_READ);
    }

    @Override
    public String notUpWithin(long nanos) {
        long millis = nanos / 1_000_000;
        if (pending) {
            return "not connected after " + millis + " ms";
        }
        // A plain Redis port never answers a TLS hello: it waits for the end of a line that never comes.
        return firstByte < 0
                ? "TLS handshake not answered after " + millis + " ms; if the node does not serve TLS, use redis://"
                : "TLS handshake not done after " + millis + " ms";
    }

    @Override
    public void close() throws IOException {
        try {
            if (handshaken && !inboundDone) {
                engine.closeOutbound(); // close_notify, sent if the socket takes it at once
                wrap(EMPTY);
            }
        } catch (IOException e) {
            // closing anyway
        } finally {
            key.cancel();
            channel.close();
        }
    }

    /**
     * Wraps from {@code src} into the outgoing buffer and writes it out; false if the socket would
     * not take enough for another record.
     */
    private boolean wrap(ByteBuffer src) throws IOException {
        while (true) {
            SSLEngineResult result = engine.wrap(src, netOut);
            if (result.getStatus() == Status.BUFFER_OVERFLOW) {
                if (netOut.position() == 0) {
                    netOut = larger(netOut, engine.getSession().getPacketBufferSize());
                } else if (!flush()) {
                    return false;
                }
                continue;
            }
            if (result.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
                runTasks();
            }
            flush();
            return result.getStatus() == Status.OK && (result.bytesConsumed() > 0 || result.bytesProduced() > 0);
        }
    }

    /**
     * Unwraps what has arrived; answers what the engine asks for on the way (tasks, a handshake
     * message of its own). Returns BUFFER_UNDERFLOW when more bytes from the socket are needed.
     */
    private Status unwrap() throws IOException {
        netIn.flip();
        SSLEngineResult result;
        try {
            result = engine.unwrap(netIn, appIn);
        } finally {
            netIn.compact();
        }
        switch (result.getStatus()) {
            case BUFFER_UNDERFLOW -> {
                int packet = engine.getSession().getPacketBufferSize();
                if (!netIn.hasRemaining() && netIn.capacity() < packet) {
                    netIn = larger(netIn, packet);
                } else if (!netIn.hasRemaining()) {
                    throw new SSLException("a TLS record larger than " + netIn.capacity() + " bytes");
                }
                return Status.BUFFER_UNDERFLOW;
            }
            case BUFFER_OVERFLOW -> {
                if (appIn.position() == 0) {
                    appIn = larger(appIn, engine.getSession().getApplicationBufferSize());
                }
                return Status.BUFFER_OVERFLOW; // the reader drains appIn first
            }
            case CLOSED -> {
                inboundDone = true; // close_notify
                return Status.CLOSED;
            }
            default -> {}
        }
        if (handshaken) { // after the handshake: a session ticket, a key update, a renegotiation
            HandshakeStatus status = result.getHandshakeStatus();
            if (status == HandshakeStatus.NEED_TASK) {
                runTasks();
                status = engine.getHandshakeStatus();
            }
            if (status == HandshakeStatus.NEED_WRAP && !wrap(EMPTY)) {
                interest(true);
            }
        }
        return Status.OK;
    }

    /** Reads from the socket into the incoming buffer. */
    private int fill() throws IOException {
        int count = channel.read(netIn);
        if (count > 0 && firstByte < 0) {
            firstByte = netIn.get(0) & 0xff;
        }
        return count;
    }

    /** Writes the outgoing buffer; true if it is empty. */
    private boolean flush() throws IOException {
        netOut.flip();
        try {
            channel.write(netOut);
        } finally {
            netOut.compact();
        }
        return netOut.position() == 0;
    }

    private int drain(ByteBuffer dst) {
        if (appIn.position() == 0) {
            return 0;
        }
        appIn.flip();
        int count = Math.min(appIn.remaining(), dst.remaining());
        int limit = appIn.limit();
        appIn.limit(appIn.position() + count);
        dst.put(appIn);
        appIn.limit(limit);
        appIn.compact();
        return count;
    }

    private void runTasks() {
        Runnable task;
        while ((task = engine.getDelegatedTask()) != null) {
            task.run(); // on the caller's thread: certificate checks and key exchange, once per connection
        }
    }

    private static ByteBuffer larger(ByteBuffer buffer, int wanted) throws SSLException {
        int size = Math.max(wanted, buffer.capacity() * 2);
        if (size > MAX_BUFFER) {
            throw new SSLException("a TLS record needs more than " + MAX_BUFFER + " bytes of buffer");
        }
        ByteBuffer larger = ByteBuffer.allocate(size);
        buffer.flip();
        return larger.put(buffer);
    }
}
