package io.quorumlock.bench;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The floor over N nodes: the best any client can do without deciding early. One thread, one
 * plain blocking socket per node: write {@code SET key token NX PX ttl} to every node, read every
 * reply, then write the compare-and-delete ({@code EVALSHA} of the script loaded at connect) to
 * every node and read every reply. Writes of a few bytes never block, so the N requests are in
 * flight together; the cycle waits for the slowest node twice. Bench-only code: no timeouts
 * beyond the socket's, no retry, no pool.
 */
final class RawFanout implements AutoCloseable {

    private static final int READ_TIMEOUT_MILLIS = 5_000;
    private static final byte[] CRLF = {'\r', '\n'};

    private final Socket[] sockets;
    private final OutputStream[] outs;
    private final InputStream[] ins;
    private final byte[] ttl = Long.toString(Trial.TTL.toMillis()).getBytes(StandardCharsets.US_ASCII);
    private final String sha;
    private final Request request = new Request();

    RawFanout(List<String> uris) {
        int n = uris.size();
        sockets = new Socket[n];
        outs = new OutputStream[n];
        ins = new InputStream[n];
        String loaded = null;
        try {
            for (int i = 0; i < n; i++) {
                URI uri = URI.create(uris.get(i));
                Socket socket = new Socket();
                sockets[i] = socket;
                socket.setTcpNoDelay(true);
                socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), READ_TIMEOUT_MILLIS);
                socket.setSoTimeout(READ_TIMEOUT_MILLIS);
                outs[i] = socket.getOutputStream();
                ins[i] = new BufferedInputStream(socket.getInputStream(), 512);
                request.start(3).arg("SCRIPT").arg("LOAD").arg(SequentialRedlock.UNLOCK_SCRIPT);
                request.writeTo(outs[i]);
                loaded = readReply(ins[i]);
            }
        } catch (IOException e) {
            close();
            throw new UncheckedIOException("raw-fanout: cannot connect to " + uris, e);
        }
        sha = loaded;
    }

    /** A fresh random token, as a lock's value. */
    static String token() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return Long.toHexString(random.nextLong()) + Long.toHexString(random.nextLong());
    }

    /** The quorum of N nodes. */
    int quorum() {
        return sockets.length / 2 + 1;
    }

    /**
     * One cycle on {@code key} with {@code token}: SET NX PX on all nodes, then the
     * compare-and-delete on all nodes; returns how many nodes granted the SET.
     */
    int cycle(String key, String token) {
        try {
            request.start(6).arg("SET").arg(key).arg(token).arg("NX").arg("PX").arg(ttl);
            for (OutputStream out : outs) {
                request.writeTo(out);
            }
            int granted = 0;
            for (InputStream in : ins) {
                if ("OK".equals(readReply(in))) {
                    granted++;
                }
            }
            request.start(5).arg("EVALSHA").arg(sha).arg("1").arg(key).arg(token);
            for (OutputStream out : outs) {
                request.writeTo(out);
            }
            for (InputStream in : ins) {
                readReply(in);
            }
            return granted;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Writes {@code batch} ({@code depth} requests) to every node, then reads the {@code depth}
     * replies of each: pipelined load, for the servers' own capacity.
     */
    void pipeline(Request batch, int depth) {
        try {
            for (OutputStream out : outs) {
                batch.writeTo(out);
            }
            for (InputStream in : ins) {
                for (int i = 0; i < depth; i++) {
                    readReply(in);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * One PING written to every node at once, then every reply read: the round trip (of one node;
     * of a fan-out, which waits for the slowest node).
     */
    void pingAll() {
        try {
            request.start(1).arg("PING");
            for (OutputStream out : outs) {
                request.writeTo(out);
            }
            for (InputStream in : ins) {
                readReply(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        for (Socket socket : sockets) {
            if (socket != null) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // closing a bench connection: nothing to do about it
                }
            }
        }
    }

    /**
     * Reads one RESP reply: a simple string, integer or bulk string as text, null for a nil;
     * an error reply throws.
     */
    static String readReply(InputStream in) throws IOException {
        int type = in.read();
        String line = readLine(in);
        switch (type) {
            case '+', ':' -> {
                return line;
            }
            case '-' -> throw new IOException("redis error: " + line);
            case '$' -> {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return null;
                }
                byte[] body = in.readNBytes(length + 2);
                return new String(body, 0, length, StandardCharsets.UTF_8);
            }
            case -1 -> throw new IOException("connection closed");
            default -> throw new IOException("unexpected reply type " + (char) type);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder(8);
        for (int c = in.read(); c != '\r'; c = in.read()) {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            line.append((char) c);
        }
        in.read(); // '\n'
        return line.toString();
    }

    /** A RESP array of bulk strings, built in one reusable buffer and written in one call. */
    static final class Request {
        private byte[] buffer = new byte[256];
        private int size;

        Request start(int args) {
            size = 0;
            put('*').put(Integer.toString(args)).put(CRLF);
            return this;
        }

        Request arg(String value) {
            return arg(value.getBytes(StandardCharsets.UTF_8));
        }

        Request arg(byte[] value) {
            return put('$').put(Integer.toString(value.length))
                    .put(CRLF)
                    .put(value)
                    .put(CRLF);
        }

        /** Appends {@code count} copies of the request built so far (for pipelining). */
        Request repeat(int count) {
            int one = size;
            ensure(one * count);
            for (int i = 1; i < count; i++) {
                System.arraycopy(buffer, 0, buffer, size, one);
                size += one;
            }
            return this;
        }

        void writeTo(OutputStream out) throws IOException {
            out.write(buffer, 0, size);
        }

        private Request put(char c) {
            ensure(size + 1);
            buffer[size++] = (byte) c;
            return this;
        }

        private Request put(String ascii) {
            return put(ascii.getBytes(StandardCharsets.US_ASCII));
        }

        private Request put(byte[] bytes) {
            ensure(size + bytes.length);
            System.arraycopy(bytes, 0, buffer, size, bytes.length);
            size += bytes.length;
            return this;
        }

        private void ensure(int capacity) {
            if (capacity > buffer.length) {
                buffer = Arrays.copyOf(buffer, Math.max(capacity, 2 * buffer.length));
            }
        }
    }
}
