package io.quorumlock.redis.client;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * A plain TCP connection. Until the node's first reply it watches for the signs of a TLS port
 * spoken to in plain text (a TLS record, or the connection reset or closed before any reply).
 */
final class PlainWire implements Wire {

    private static final String USE_REDISS = "; if the node serves TLS, use rediss://";

    private final SocketChannel channel;
    private final SelectionKey key;
    private boolean pending;
    private boolean heard;

    PlainWire(SocketChannel channel, SelectionKey key, boolean pending) {
        this.channel = channel;
        this.key = key;
        this.pending = pending;
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
        return true;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return heard ? channel.read(dst) : firstRead(dst);
    }

    private int firstRead(ByteBuffer dst) throws IOException {
        int at = dst.position();
        int count;
        try {
            count = channel.read(dst);
        } catch (IOException e) {
            throw new IOException(e.getMessage() + " before any reply" + USE_REDISS, e);
        }
        if (count < 0) {
            throw new IOException("closed by the node before any reply" + USE_REDISS);
        }
        if (count > 0) {
            heard = true;
            byte type = dst.get(at);
            // A TLS record: handshake (22) or alert (21), version 3.x.
            if ((type == 21 || type == 22) && (count < 2 || dst.get(at + 1) == 3)) {
                throw new Failure(Reply.Kind.MISCONFIGURED, "not RESP: the node answered in TLS; use rediss://", null);
            }
        }
        return count;
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        try {
            channel.write(src);
        } catch (IOException e) {
            throw heard ? e : new IOException(e.getMessage() + " before any reply" + USE_REDISS, e);
        }
    }

    @Override
    public boolean buffered() {
        return false;
    }

    @Override
    public void interest(boolean moreToWrite) {
        key.interestOps(moreToWrite ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    }

    @Override
    public String notUpWithin(long nanos) {
        return "not connected after " + nanos / 1_000_000 + " ms";
    }

    @Override
    public void close() throws IOException {
        key.cancel();
        channel.close();
    }
}
