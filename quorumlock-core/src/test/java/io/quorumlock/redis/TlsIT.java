package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.redis.client.TlsErrors;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.TlsMaterial;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.Jedis;

/** TLS and mutual TLS on real redis-server nodes, and each misconfiguration's one-line evidence. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TlsIT {

    private static final Duration TTL = Duration.ofSeconds(10);
    private static final Duration NODE_TIMEOUT = Duration.ofMillis(200);
    /** A refusal comes within about the node timeout: the handshake's failure, not a wait. */
    private static final Duration PROMPTLY = TestTime.scaled(Duration.ofMillis(1500));

    private static TlsMaterial material;
    private static TlsMaterial otherCa;
    private static TlsMaterial otherName;
    private static final List<RedisServer> tlsNodes = new ArrayList<>();
    private static RedisServer mutual;
    private static RedisServer untrusted;
    private static RedisServer misnamed;
    private static RedisServer plain;

    @BeforeAll
    static void startNodes() {
        material = TlsMaterial.generate();
        otherCa = TlsMaterial.generate();
        otherName = TlsMaterial.generate("other.example");
        for (int i = 0; i < 4; i++) {
            tlsNodes.add(RedisServer.startTls(material, false));
        }
        mutual = RedisServer.startTls(material, true);
        untrusted = RedisServer.startTls(otherCa, false);
        misnamed = RedisServer.startTls(otherName, false);
        plain = RedisServer.start();
    }

    @AfterAll
    static void stopNodes() {
        List<AutoCloseable> all = new ArrayList<>(tlsNodes);
        all.addAll(List.of(mutual, untrusted, misnamed, plain, material, otherCa, otherName));
        for (AutoCloseable c : all) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // the others still close
            }
        }
    }

    private static RedlockBuilder builder(List<String> uris) {
        return Redlock.builder().nodes(uris).nodeTimeout(NODE_TIMEOUT).restartGuard(false);
    }

    private static String port(RedisServer node) {
        return "127.0.0.1:" + node.port();
    }

    @Test
    void threeTlsNodesLockExtendAndRelease() {
        List<String> uris =
                tlsNodes.subList(0, 3).stream().map(RedisServer::uri).toList();
        assertThat(uris).allMatch(u -> u.startsWith("rediss://"));
        try (Redlock redlock =
                builder(uris).tlsCaBundle(material.caCertificate()).build()) {
            Lease lease = redlock.acquire("tls:job", TTL, Duration.ofSeconds(5));
            try (Jedis jedis = tlsNodes.get(0).connect(Duration.ofSeconds(2))) {
                assertThat(jedis.get("tls:job")).isNotNull();
                assertThat(lease.extend(TTL)).isTrue();
                assertThat(jedis.pttl("tls:job")).isGreaterThan(TTL.toMillis() - 2_000);
                lease.release();
                // release() returns once a quorum is free; this node's delete may still be on its way.
                TestTime.await(Duration.ofSeconds(2), () -> jedis.get("tls:job") == null, "tls:job deleted on node 0");
            }
            // Connections are kept: a second cycle needs no new handshake, and works the same.
            redlock.tryAcquire("tls:job", TTL).orElseThrow().release();
        }
    }

    @Test
    void aContextOfTheUsersOwnWorks() {
        try (Redlock redlock = builder(List.of(tlsNodes.get(0).uri()))
                .tls(material.clientContext())
                .build()) {
            redlock.tryAcquire("tls:context", TTL).orElseThrow().release();
        }
    }

    @Test
    void mutualTlsRequiredAndGivenWorks() {
        try (Redlock redlock = builder(List.of(mutual.uri()))
                .tlsCaBundle(material.caCertificate())
                .tlsClientCertificate(material.clientCertificate(), material.clientKey())
                .build()) {
            redlock.tryAcquire("tls:mutual", TTL).orElseThrow().release();
        }
    }

    @Test
    void anUntrustedCertificateSaysWhose() {
        ServerAnswer outcome = refused(untrusted.uri(), b -> b.tlsCaBundle(material.caCertificate()));
        assertThat(outcome.detail())
                .startsWith("TLS: untrusted certificate (subject CN=127.0.0.1, issuer CN=" + otherCa.caName() + ")")
                .contains("tlsCaBundle", "--tls-ca");
    }

    @Test
    void theJdkTrustStoreIsTheDefaultAndRefusesATestCa() {
        ServerAnswer outcome = refused(tlsNodes.get(0).uri(), b -> {});
        assertThat(outcome.detail()).startsWith("TLS: untrusted certificate").contains(material.caName());
    }

    @Test
    void aCertificateForAnotherNameIsAHostnameMismatch() {
        ServerAnswer outcome = refused(misnamed.uri(), b -> b.tlsCaBundle(otherName.caCertificate()));
        assertThat(outcome.detail())
                .startsWith("TLS: hostname mismatch")
                .contains("is for DNS:other.example, not 127.0.0.1");
    }

    @Test
    void aNodeThatRequiresAClientCertificateSaysSo() {
        ServerAnswer outcome = refused(mutual.uri(), b -> b.tlsCaBundle(material.caCertificate()));
        assertThat(outcome.detail()).startsWith(TlsErrors.CLIENT_CERTIFICATE_REQUIRED);
    }

    @Test
    void aClientCertificateOfAnotherCaIsRefused() {
        ServerAnswer outcome = refused(
                mutual.uri(),
                b -> b.tlsCaBundle(material.caCertificate())
                        .tlsClientCertificate(otherCa.clientCertificate(), otherCa.clientKey()));
        assertThat(outcome.detail()).startsWith("TLS: the node refused our client certificate");
    }

    @Test
    void tlsToAPlainPortSaysUseRedis() {
        // A plain Redis port never answers a TLS hello (it waits for a line end): the first round
        // times out, the next one says why.
        try (Redlock redlock = builder(List.of("rediss://" + port(plain)))
                .tlsCaBundle(material.caCertificate())
                .build()) {
            ServerAnswer first =
                    timed(() -> attempt(redlock, "tls:plain")).answers().get(0);
            assertThat(first.kind()).as(first.toString()).isEqualTo(ServerAnswer.Kind.TIMED_OUT);
            ServerAnswer second =
                    timed(() -> attempt(redlock, "tls:plain")).answers().get(0);
            assertThat(second.kind()).as(second.toString()).isEqualTo(ServerAnswer.Kind.UNREACHABLE);
            assertThat(second.detail())
                    .matches("not sent: TLS handshake not answered after \\d+ ms; if the node does not serve TLS,"
                            + " use redis://");
        }
    }

    @Test
    void plainTextToATlsPortSaysUseRediss() {
        try (Redlock redlock =
                builder(List.of("redis://" + port(tlsNodes.get(0)))).build()) {
            ServerAnswer outcome =
                    timed(() -> attempt(redlock, "tls:plain")).answers().get(0);
            assertThat(outcome.kind()).isIn(ServerAnswer.Kind.ERROR, ServerAnswer.Kind.MISCONFIGURED);
            assertThat(outcome.detail()).contains("use rediss://").doesNotContain("\n");
        }
    }

    @Test
    void oneBadCertificateOfFiveStillGivesALock() {
        List<String> uris =
                new ArrayList<>(tlsNodes.stream().map(RedisServer::uri).toList());
        uris.add(untrusted.uri());
        try (Redlock redlock =
                builder(uris).tlsCaBundle(material.caCertificate()).build()) {
            RedlockAttempts.Attempt attempt = attempt(redlock, "tls:five");
            assertThat(attempt.lease()).isPresent();
            ServerAnswer bad = attempt.answers().get(4);
            // The four good nodes may decide before the bad one's handshake fails: then its reason
            // is not in this attempt's evidence, but checkNodes names it.
            assertThat(bad.kind()).as(bad.toString()).isIn(ServerAnswer.Kind.MISCONFIGURED, ServerAnswer.Kind.PENDING);
            if (bad.kind() == ServerAnswer.Kind.MISCONFIGURED) {
                assertThat(bad.detail()).startsWith("TLS: untrusted certificate");
            }
            assertThat(redlock.checkNodes().nodes().get(4).findings())
                    .anySatisfy(finding -> assertThat(finding).contains("TLS: untrusted certificate"));
            attempt.lease().get().release();
        }
    }

    @Test
    void aHandshakeThatNeverEndsCostsTheNodeTimeoutNotAHang() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                Redlock redlock = Redlock.builder()
                        .node("rediss://127.0.0.1:" + silent.getLocalPort())
                        .nodeTimeout(Duration.ofMillis(50))
                        .connectTimeout(Duration.ofMillis(50))
                        .tlsCaBundle(material.caCertificate())
                        .build()) {
            // The kernel accepts the connection; nobody ever answers the hello. Each round costs at
            // most the connect timeout (the node timeout, by default); the connection is dropped
            // after the stale limit (1 s here) and the next round starts a new one.
            long end =
                    System.nanoTime() + TestTime.scaled(Duration.ofMillis(2500)).toNanos();
            long longestOwed = 0;
            int fresh = 0;
            boolean owed = false;
            while (System.nanoTime() < end) {
                ServerAnswer outcome =
                        timed(() -> attempt(redlock, "tls:silent")).answers().get(0);
                if (outcome.kind() == ServerAnswer.Kind.TIMED_OUT) {
                    fresh += owed ? 1 : 0;
                    owed = false;
                } else {
                    assertThat(outcome.kind()).as(outcome.toString()).isEqualTo(ServerAnswer.Kind.UNREACHABLE);
                    java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                                    "not sent: TLS handshake not answered after (\\d+) ms; if the node does not"
                                            + " serve TLS, use redis://")
                            .matcher(outcome.detail());
                    assertThat(m.matches()).as(outcome.detail()).isTrue();
                    longestOwed = Math.max(longestOwed, Long.parseLong(m.group(1)));
                    owed = true;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000);
            }
            assertThat(fresh)
                    .as("rounds on a new connection after the stale one was dropped")
                    .isPositive();
            assertThat(longestOwed)
                    .isLessThan(TestTime.scaled(Duration.ofMillis(1100)).toMillis());
        }
    }

    @Test
    void theInsecureSettingWorksAndWarns() {
        PrintStream stderr = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
        Redlock redlock;
        try {
            redlock = builder(List.of(misnamed.uri()))
                    .insecureTrustAllCertificates()
                    .build();
        } finally {
            System.setErr(stderr);
        }
        try (redlock) {
            redlock.tryAcquire("tls:insecure", TTL).orElseThrow().release();
        }
        assertThat(log.toString(StandardCharsets.UTF_8))
                .contains("WARN", "insecureTrustAllCertificates()", "not verified");
    }

    @Test
    void badTlsFilesFailInBuild() {
        assertThatThrownBy(() -> builder(List.of(tlsNodes.get(0).uri()))
                        .tlsCaBundle(material.serverKey())
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tlsCaBundle: " + material.serverKey() + " holds no certificate");
        assertThatThrownBy(() -> builder(List.of(tlsNodes.get(0).uri()))
                        .tlsClientCertificate(material.clientCertificate(), otherCa.clientKey())
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not the key of the certificate");
    }

    /** The node's refusal, a configuration error, given promptly. */
    private static ServerAnswer refused(String uri, Consumer<RedlockBuilder> tls) {
        RedlockBuilder builder = builder(List.of(uri));
        tls.accept(builder);
        try (Redlock redlock = builder.build()) {
            ServerAnswer outcome = timed(() -> {
                try {
                    return redlock.tryAcquire("tls:refused", TTL)
                            .map(granted -> new ServerAnswer(uri, ServerAnswer.Kind.GRANTED, "granted"))
                            .orElseGet(() ->
                                    attempt(redlock, "tls:refused").answers().get(0));
                } catch (LockConfigurationException refusal) {
                    return refusal.lastAttempt().get(0);
                }
            });
            assertThat(outcome.kind()).as(outcome.toString()).isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
            assertThat(outcome.detail()).doesNotContain("\n");
            return outcome;
        }
    }

    /** One attempt, waiting for a lane no longer than the TTL. */
    private static RedlockAttempts.Attempt attempt(Redlock redlock, String resource) {
        return redlock.attempts().attempt(resource, TTL, 0);
    }

    private static <T> T timed(java.util.function.Supplier<T> call) {
        long start = System.nanoTime();
        T result = call.get();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took).isLessThan(PROMPTLY);
        return result;
    }

    /**
     * A caller that joins a connection still in its TLS handshake (slow here: 100 ms each way) waits
     * for it like the caller that opened it, up to the connect timeout, instead of being refused
     * as if the node owed it a reply older than the node timeout.
     */
    @Test
    void aCallerJoiningAConnectionInItsHandshakeWaitsTheConnectTimeout() throws Exception {
        try (io.quorumlock.testkit.FaultProxy proxy = io.quorumlock.testkit.FaultProxy.inFrontOf(tlsNodes.get(0))
                        .latency(Duration.ofMillis(100));
                Redlock redlock = Redlock.builder()
                        .node(proxy.uri())
                        .tls(material.clientContext())
                        .nodeTimeout(Duration.ofMillis(100))
                        .connectTimeout(Duration.ofSeconds(3))
                        .maxConnectionsPerNode(1)
                        .build()) {
            java.util.concurrent.CompletableFuture<java.util.Optional<Lease>> opener =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> redlock.tryAcquire("opener", TTL));
            Thread.sleep(150); // the server's hello comes back after 200 ms: the handshake is under way
            long joined = System.nanoTime();
            java.util.Optional<Lease> joiner = redlock.tryAcquire("joiner", TTL);
            Duration took = Duration.ofNanos(System.nanoTime() - joined);
            java.util.Optional<Lease> first = opener.get(10, TimeUnit.SECONDS);
            assertThat(first).as("the caller that opened the connection").isPresent();
            assertThat(joiner)
                    .as("the caller that joined it during the handshake")
                    .isPresent();
            assertThat(took).isLessThan(Duration.ofSeconds(3));
            first.get().release();
            joiner.get().release();
        }
    }
}
