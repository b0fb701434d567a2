package io.quorumlock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** A blocking TCP server on 127.0.0.1 that sends back every byte it receives and counts them. */
final class EchoServer implements AutoCloseable {

    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Thread> threads = new CopyOnWriteArrayList<>();
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicLong received = new AtomicLong();

    private EchoServer(ServerSocket server) {
        this.server = server;
        Thread acceptor = new Thread(this::accept, "echo-server-" + server.getLocalPort());
        acceptor.setDaemon(true);
        threads.add(acceptor);
        acceptor.start();
    }

    static EchoServer start() throws IOException {
        return new EchoServer(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
    }

    int port() {
        return server.getLocalPort();
    }

    /** How many connections it accepted. */
    int accepted() {
        return accepted.get();
    }

    /** How many of its connections are still open. */
    int open() {
        return open.get();
    }

    /** How many bytes it received, over all connections. */
    long received() {
        return received.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                sockets.add(socket);
                accepted.incrementAndGet();
                open.incrementAndGet();
                Thread echo = new Thread(() -> echo(socket), "echo-" + socket.getPort());
                echo.setDaemon(true);
                threads.add(echo);
                echo.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void echo(Socket socket) {
        try (socket) {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] buffer = new byte[8192];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                received.addAndGet(n);
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // the peer reset the connection, or the server closed
        } finally {
            open.decrementAndGet();
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket socket : sockets) {
            socket.close();
        }
        for (Thread thread : threads) {
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
