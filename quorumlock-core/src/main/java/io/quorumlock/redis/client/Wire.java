package io.quorumlock.redis.client;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * The bytes of one connection to a node, as {@link RespLink} reads and writes them: plain TCP
 * ({@link PlainWire}) or TLS over it ({@link TlsWire}). Non-blocking, driven by the lane's selector
 * on the caller's thread; used under the link's lock only.
 */
interface Wire {

    /**
     * Opens a non-blocking connection to {@code target} registered with {@code selector}, TLS for a
     * {@code rediss://} address (its certificate checked against the target's host name).
     */
    static Wire open(Locator.Result target, NodeAddress address, TlsConfig tls, Selector selector, Object attachment)
            throws IOException {
        SocketChannel channel = SocketChannel.open();
        try {
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            boolean pending = !channel.connect(target.address());
            SelectionKey key =
                    channel.register(selector, pending ? SelectionKey.OP_CONNECT : SelectionKey.OP_READ, attachment);
            return address.tls()
                    ? new TlsWire(
                            channel,
                            key,
                            pending,
                            tls.engine(target.host(), target.address().getPort()),
                            tls)
                    : new PlainWire(channel, key, pending);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    SelectionKey key();

    /**
     * Drives the TCP connect, and for TLS the handshake, a step further on a ready key.
     *
     * @return true once requests may be written
     * @throws Failure when the node refuses for a reason only a configuration change fixes
     */
    boolean connect() throws IOException;

    /** Reads the node's bytes into {@code dst}; -1 at the end of the stream. */
    int read(ByteBuffer dst) throws IOException;

    /** Writes what the connection takes of {@code src} (in read mode). */
    void write(ByteBuffer src) throws IOException;

    /** Bytes taken from the socket that {@link #read} has not handed out yet: read again before waiting. */
    boolean buffered();

    /** Sets the selector's interest: reads always, writes if {@code moreToWrite} or the wire has bytes owed. */
    void interest(boolean moreToWrite);

    /** What holds up a connection that has not come up after {@code nanos}. */
    String notUpWithin(long nanos);

    void close() throws IOException;

    /** A refusal that only a change of configuration fixes (a certificate, the scheme): one line, with the remedy. */
    final class Failure extends IOException {
        private static final long serialVersionUID = 1L;
        private final transient Reply.Kind kind;

        Failure(Reply.Kind kind, String message, Throwable cause) {
            super(message, cause);
            this.kind = kind;
        }

        Reply.Kind kind() {
            return kind;
        }
    }
}
