package io.quorumlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One etcd member that serves its clients over TLS only, at {@code https://127.0.0.1:PORT}, with
 * the server certificate of a {@link TlsMaterial}; with {@code clientCertificates}, it also requires
 * a client certificate issued by the material's CA ({@code --client-cert-auth}). For tests of TLS to
 * etcd: its own temporary directory (data and log), deleted by {@link #close()}, which kills it.
 *
 * <pre>{@code
 * try (TlsMaterial tls = TlsMaterial.generate();
 *         EtcdTlsServer etcd = EtcdTlsServer.start(tls, false)) {
 *     EtcdLock lock = EtcdLock.builder().endpoints(etcd.endpoint()).tlsCaBundle(tls.caCertificate()).build();
 * }
 * }</pre>
 */
public final class EtcdTlsServer implements AutoCloseable {

    private static final String HOST = EtcdServer.HOST;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(15);
    private static final int LOG_TAIL_LINES = 15;

    private final Path dir;
    private final int clientPort;
    private final Process process;

    private EtcdTlsServer(Path dir, int clientPort, Process process) {
        this.dir = dir;
        this.clientPort = clientPort;
        this.process = process;
    }

    /**
     * Starts the member and waits, up to 15 s scaled by {@link TestTime#scale()}, until it answers
     * {@code /health} over TLS.
     *
     * @throws IllegalStateException if there is no etcd binary, or the member does not come up in
     *     time (the message carries the end of its log); nothing is left running then
     */
    public static EtcdTlsServer start(TlsMaterial material, boolean clientCertificates) {
        Path dir;
        try {
            dir = Files.createTempDirectory("quorumlock-etcd-tls-");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create a temporary directory for an etcd member", e);
        }
        int clientPort = Processes.freePort(HOST);
        String peer = "http://" + HOST + ":" + Processes.freePort(HOST);
        String client = "https://" + HOST + ":" + clientPort;
        List<String> command = new ArrayList<>(List.of(
                EtcdBinary.path().toString(),
                "--name",
                "tls",
                "--data-dir",
                dir.resolve("data").toString(),
                "--listen-client-urls",
                client,
                "--advertise-client-urls",
                client,
                "--listen-peer-urls",
                peer,
                "--initial-advertise-peer-urls",
                peer,
                "--initial-cluster",
                "tls=" + peer,
                "--cert-file",
                material.serverCertificate().toString(),
                "--key-file",
                material.serverKey().toString(),
                "--logger",
                "zap",
                "--log-outputs",
                "stderr"));
        if (clientCertificates) {
            command.addAll(List.of(
                    "--client-cert-auth",
                    "--trusted-ca-file",
                    material.caCertificate().toString()));
        }
        Path log = dir.resolve("etcd.log");
        Process process;
        try {
            process = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
        } catch (IOException e) {
            Processes.deleteTree(dir);
            throw new UncheckedIOException("Cannot run " + command.get(0), e);
        }
        Processes.register(process, dir);
        EtcdTlsServer server = new EtcdTlsServer(dir, clientPort, process);
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .sslContext(material.clientContext())
                .connectTimeout(Duration.ofMillis(500))
                .build();
        ServerWait wait = ServerWait.start("etcd member with TLS at " + client, "healthy", READY_TIMEOUT);
        while (!server.healthy(http)) {
            if (!process.isAlive() || wait.expired()) {
                String tail = Processes.tail(log, 0, LOG_TAIL_LINES);
                server.close();
                throw new IllegalStateException(
                        (process.isAlive() ? wait.failure() : "etcd member with TLS at " + client + " exited") + "\n"
                                + tail);
            }
            wait.pause(50);
        }
        wait.done();
        return server;
    }

    private boolean healthy(HttpClient http) {
        try {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create(endpoint() + "/health"))
                            .timeout(ServerWait.probeTimeout(Duration.ofMillis(500)))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 && response.body().contains("\"health\":\"true\"");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for etcd with TLS", e);
        }
    }

    /** {@return the client URL, {@code https://127.0.0.1:PORT}} */
    public String endpoint() {
        return "https://" + HOST + ":" + clientPort;
    }

    /** Kills the member and deletes its directory. Idempotent. */
    @Override
    public void close() {
        Processes.kill(process, Duration.ofSeconds(5));
        Processes.deleteTree(dir);
    }

    @Override
    public String toString() {
        return "EtcdTlsServer[" + endpoint() + "]";
    }
}
