package io.quorumlock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP server on 127.0.0.1 that answers every connection with what a {@link Script} sends, at the
 * pace it sends it: a hostile or broken node for the tests of a client (a reply that never ends, a
 * huge array, garbage, a flood of forged replies, a node that accepts and never answers). Each
 * connection runs on a daemon thread of its own; {@link #close()} closes them all.
 *
 * <pre>{@code
 * try (ScriptedServer node = ScriptedServer.start(ScriptedServer.sends("*2147483647\r\n"))) {
 *     Redlock redlock = Redlock.builder().node(node.uri()).build();
 *     // ... the attempt fails with a protocol error for that node, within the node timeout
 * }
 * }</pre>
 */
public final class ScriptedServer implements AutoCloseable {

    /** What the server does with one connection; it may read the client's bytes from {@code in}. */
    @FunctionalInterface
    public interface Script {
        void serve(InputStream in, OutputStream out) throws IOException, InterruptedException;
    }

    private final ServerSocket server;
    private final Script script;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();
    private final Thread acceptor;
    private volatile boolean closed;

    private ScriptedServer(ServerSocket server, Script script) {
        this.server = server;
        this.script = script;
        this.acceptor = new Thread(this::accept, "scripted-server-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Starts a server on a free port of 127.0.0.1.
     *
     * @throws IllegalStateException if no port could be bound
     */
    public static ScriptedServer start(Script script) {
        try {
            return new ScriptedServer(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()), script);
        } catch (IOException e) {
            throw new IllegalStateException("cannot bind a scripted server on 127.0.0.1", e);
        }
    }

    /** A script that sends {@code text} at once on every connection, then keeps it open and reads on. */
    public static Script sends(String text) {
        return sends(text.getBytes(StandardCharsets.ISO_8859_1));
    }

    /** A script that sends {@code bytes} at once on every connection, then keeps it open and reads on. */
    public static Script sends(byte[] bytes) {
        return (in, out) -> {
            out.write(bytes);
            out.flush();
            drain(in);
        };
    }

    /** A script that sends {@code reply} {@code times} times over at once, as fast as the client takes it. */
    public static Script floods(String reply, int times) {
        return sends(reply.repeat(times));
    }

    /** A script that sends {@code head} at once, then one {@code filler} byte every {@code pause}, forever. */
    public static Script trickles(String head, char filler, Duration pause) {
        return (in, out) -> {
            out.write(head.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            while (true) {
                Thread.sleep(pause.toMillis());
                out.write(filler);
                out.flush();
            }
        };
    }

    /** A script that accepts and never answers: it reads what the client sends and says nothing. */
    public static Script silent() {
        return (in, out) -> drain(in);
    }

    private static void drain(InputStream in) throws IOException {
        byte[] sink = new byte[4096];
        while (in.read(sink) >= 0) {
            // discard
        }
    }

    /** {@return the port it listens on} */
    public int port() {
        return server.getLocalPort();
    }

    /** {@return its address as {@code redis://127.0.0.1:PORT}} */
    public String uri() {
        return "redis://127.0.0.1:" + port();
    }

    /** {@return how many connections it accepted so far} */
    public int connections() {
        return connections.get();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket socket = server.accept();
                sockets.add(socket);
                connections.incrementAndGet();
                Thread serving = new Thread(() -> serve(socket), "scripted-connection-" + socket.getPort());
                serving.setDaemon(true);
                serving.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket socket) {
        try (socket) {
            script.serve(socket.getInputStream(), socket.getOutputStream());
        } catch (IOException e) {
            // the client hung up, or the server closed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops accepting and closes every connection. Idempotent. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        for (Socket socket : sockets) {
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
        try {
            acceptor.join(Duration.ofSeconds(5).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "ScriptedServer[127.0.0.1:" + port() + ", " + connections() + " connections]";
    }
}
