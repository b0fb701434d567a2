package io.quorumlock.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A plain TCP forwarder on 127.0.0.1 in front of one server, as an alias, a NAT or a VIP is: every
 * connection is piped to the current target, and {@link #switchTo} moves the forwarder to another
 * server and closes the open connections, as a failover behind a virtual IP does; {@link
 * #holdReplies} makes the way back slow for a moment.
 */
final class Forwarder implements AutoCloseable {

    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile int targetPort;
    private volatile boolean closed;

    Forwarder(int targetPort) {
        this.targetPort = targetPort;
        try {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(this::accept, "forwarder-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String uri() {
        return "redis://127.0.0.1:" + server.getLocalPort();
    }

    /** From now on connections go to {@code port}; the open ones are closed. */
    void switchTo(int port) {
        targetPort = port;
        closeAll();
    }

    /**
     * Holds back the server's replies (the client's requests still go through) until the client
     * has sent {@code writes} more times on the connection, then forwards the replies held: a slow
     * way back.
     */
    void holdReplies(int writes) {
        for (Pipe pipe : pipes) {
            pipe.hold(writes);
        }
    }

    private final List<Pipe> pipes = new CopyOnWriteArrayList<>();

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(target);
                Pipe pipe = new Pipe(client, target);
                pipes.add(pipe);
                pipe.start();
            } catch (IOException e) {
                // closed, or the target is down: the client sees its connection closed
            }
        }
    }

    /** One connection: client to target, and back. */
    private static final class Pipe {
        private final Socket client;
        private final Socket target;
        private java.io.ByteArrayOutputStream held;
        private int writesLeft;

        Pipe(Socket client, Socket target) {
            this.client = client;
            this.target = target;
        }

        synchronized void hold(int writes) {
            if (held == null) {
                held = new java.io.ByteArrayOutputStream();
            }
            writesLeft = writes;
        }

        void start() {
            copy(client, target, true);
            copy(target, client, false);
        }

        private void copy(Socket from, Socket to, boolean requests) {
            Thread thread = new Thread(
                    () -> {
                        byte[] buffer = new byte[8192];
                        try (InputStream in = from.getInputStream()) {
                            OutputStream out = to.getOutputStream();
                            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                                forward(out, buffer, n, requests);
                            }
                        } catch (IOException e) {
                            // one side closed
                        } finally {
                            close(from);
                            close(to);
                        }
                    },
                    "forwarder-pipe");
            thread.setDaemon(true);
            thread.start();
        }

        private synchronized void forward(OutputStream out, byte[] buffer, int n, boolean request) throws IOException {
            if (!request && held != null) {
                held.write(buffer, 0, n);
                return;
            }
            out.write(buffer, 0, n);
            out.flush();
            if (request && held != null && --writesLeft == 0) {
                OutputStream back = client.getOutputStream();
                held.writeTo(back);
                back.flush();
                held = null;
            }
        }
    }

    private void closeAll() {
        for (Socket socket : sockets) {
            close(socket);
        }
        sockets.clear();
        pipes.clear();
    }

    private static void close(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        closeAll();
    }
}
