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
 * server and closes the open connections, as a failover behind a virtual IP does.
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

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(target);
                pipe(client, target);
                pipe(target, client);
            } catch (IOException e) {
                // closed, or the target is down: the client sees its connection closed
            }
        }
    }

    private void pipe(Socket from, Socket to) {
        Thread thread = new Thread(
                () -> {
                    byte[] buffer = new byte[8192];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                            out.write(buffer, 0, n);
                            out.flush();
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

    private void closeAll() {
        for (Socket socket : sockets) {
            close(socket);
        }
        sockets.clear();
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
