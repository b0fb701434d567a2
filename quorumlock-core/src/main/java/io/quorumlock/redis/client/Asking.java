package io.quorumlock.redis.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

/**
 * A few questions to one server on a blocking connection of its own, off the callers' path: to a
 * sentinel for its master, to a cluster node for the cluster's layout. The connection is opened
 * (over TLS if the address says so), authenticated with the address's user and password, and the
 * questions are pipelined; every answer is read within the reader's bounds and one deadline for
 * the whole exchange. A server with no password of its own answers AUTH so, and is asked all the
 * same.
 */
final class Asking implements AutoCloseable {

    private final Socket socket;
    private final InputStream in;
    private final long deadline;
    private final RespReader reader = new RespReader();
    private final byte[] chunk = new byte[4096];
    private ByteBuffer buffer = ByteBuffer.allocate(4096);

    private Asking(Socket socket, long deadline) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.deadline = deadline;
    }

    /**
     * Connects to {@code server} within {@code timeoutMillis}, sends AUTH if {@code credentials}
     * has a password and then {@code questions}, and checks the answer to AUTH; the answers to
     * the questions are read with {@link #next()}, all within {@code timeoutMillis} from now.
     *
     * @throws IOException if the server cannot be reached, refuses AUTH or is too slow
     */
    static Asking open(
            InetSocketAddress server, NodeAddress credentials, TlsConfig tls, int timeoutMillis, String[]... questions)
            throws IOException, RespReader.ProtocolException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        InetSocketAddress target = new InetSocketAddress(server.getHostString(), server.getPort());
        if (target.isUnresolved()) {
            throw new IOException("unknown host " + server.getHostString());
        }
        Socket plain = new Socket();
        try {
            plain.connect(target, timeoutMillis);
            plain.setSoTimeout(timeoutMillis);
            plain.setTcpNoDelay(true);
            Socket socket = credentials.tls() ? tls.socket(plain, server.getHostString(), server.getPort()) : plain;
            ByteBuffer out = ByteBuffer.allocate(256);
            boolean auth = credentials.password().isPresent();
            if (auth) {
                out = credentials.user().isPresent()
                        ? Resp.command(
                                out,
                                "AUTH",
                                credentials.user().get(),
                                credentials.password().get())
                        : Resp.command(out, "AUTH", credentials.password().get());
            }
            for (String[] question : questions) {
                out = Resp.command(out, question);
            }
            socket.getOutputStream().write(out.array(), 0, out.position());
            socket.getOutputStream().flush();
            Asking asking = new Asking(socket, deadline);
            if (auth
                    && asking.next() instanceof Reply.Error error
                    && !error.message().contains("without any password")) {
                throw new IOException("refused AUTH: "
                        + NodeErrors.shortened(credentials
                                .password()
                                .map(p -> error.message().replace(p, "***"))
                                .orElse(error.message())));
            }
            return asking;
        } catch (IOException | RespReader.ProtocolException | RuntimeException e) {
            plain.close();
            throw e;
        }
    }

    /** The next answer, in the order of the questions. */
    Reply next() throws IOException, RespReader.ProtocolException {
        while (true) {
            buffer.flip();
            Reply reply = reader.next(buffer);
            buffer.compact();
            if (reply != null) {
                return reply;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new SocketTimeoutException("no whole answer in time");
            }
            int read = in.read(chunk);
            if (read < 0) {
                throw new IOException("closed the connection before answering");
            }
            if (buffer.remaining() < read) {
                if (buffer.capacity() >= RespReader.MAX_BUFFER) {
                    throw new IOException("sent an answer larger than " + RespReader.MAX_BUFFER + " bytes");
                }
                ByteBuffer bigger = ByteBuffer.allocate(Math.min(RespReader.MAX_BUFFER, buffer.capacity() * 2));
                buffer.flip();
                bigger.put(buffer);
                buffer = bigger;
            }
            buffer.put(chunk, 0, read);
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
