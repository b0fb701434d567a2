package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.RetryPolicy;
import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Bad configuration and bad input fail fast, naming the setting and the remedy. No node is contacted. */
class RedlockConfigTest {

    private static void rejects(Consumer<RedlockBuilder> config, String... message) {
        RedlockBuilder builder = Redlock.builder();
        config.accept(builder);
        assertThatThrownBy(builder::build)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContainingAll(message);
    }

    @Test
    void noNodes() {
        rejects(b -> {}, "no nodes", "node(\"redis://host:port\")");
    }

    @Test
    void sameNodeTwice() {
        rejects(
                b -> b.node("redis://127.0.0.1:7001")
                        .node("redis://127.0.0.1:7002")
                        .node("redis://127.0.0.1:7001/3"),
                "127.0.0.1:7001 is listed twice",
                "each Redis server may vote only once");
    }

    @Test
    void unparseableUri() {
        rejects(b -> b.node("127.0.0.1:7001"), "invalid node URI '127.0.0.1:7001'", "redis://");
    }

    @Test
    void badNodeTimeoutAndDrift() {
        rejects(b -> b.node("redis://h:1").nodeTimeout(Duration.ZERO), "nodeTimeout must be positive, was 0 ms");
        rejects(b -> b.node("redis://h:1").nodeTimeout(null), "nodeTimeout must be positive, was null");
        rejects(
                b -> b.node("redis://h:1").clockDriftFactor(0.7),
                "clockDriftFactor must be at least 0 and below 0.5, was 0.7");
        rejects(b -> b.node("redis://h:1").clockDriftFactor(Double.NaN), "clockDriftFactor");
        rejects(b -> b.node("redis://h:1").maxConnectionsPerNode(0), "maxConnectionsPerNode must be at least 1");
        rejects(b -> b.node("redis://h:1").retry(null), "retry must not be null");
    }

    @Test
    void badRetryPolicy() {
        assertThatThrownBy(() -> RetryPolicy.jitteredBackoff(Duration.ofMillis(100), Duration.ofMillis(10)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("retry maxDelay (10 ms) must not be shorter than minDelay (100 ms)");
    }

    @Test
    void retryDelaysGrowWithJitterWithinBounds() {
        RetryPolicy policy = RetryPolicy.jitteredBackoff(Duration.ofMillis(10), Duration.ofMillis(200));
        for (int attempt = 1; attempt < 40; attempt++) {
            Duration d = policy.delayAfter(attempt);
            assertThat(d).isBetween(Duration.ofMillis(10), Duration.ofMillis(Math.min(200, 10L << (attempt - 1))));
        }
        long distinct = java.util.stream.IntStream.range(0, 50)
                .mapToObj(i -> policy.delayAfter(5))
                .distinct()
                .count();
        assertThat(distinct).as("jittered").isGreaterThan(10);
    }

    @Test
    void badInputToAnAttempt() {
        try (Redlock redlock = Redlock.builder()
                .node("redis://127.0.0.1:1")
                .nodeTimeout(Duration.ofMillis(50))
                .build()) {
            assertThatThrownBy(() -> redlock.tryAcquire("", Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("resource must not be empty");
            assertThatThrownBy(() -> redlock.tryAcquire(null, Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("resource must not be empty");
            assertThatThrownBy(() -> redlock.tryAcquire("r", Duration.ofMillis(-5)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("ttl must be positive, was -5 ms");
            assertThatThrownBy(() -> redlock.tryAcquire("r", Duration.ofMillis(120)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(
                            "ttl must be longer than 3 x nodeTimeout (150 ms), was 120 ms: raise the ttl or lower nodeTimeout");
            assertThat(redlock.ttlFloor()).isEqualTo(Duration.ofMillis(150));
            assertThatThrownBy(() -> redlock.tryAcquire("r", redlock.ttlFloor()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("ttl must be longer than 3 x nodeTimeout (150 ms), was 150 ms");
            assertThatThrownBy(() -> redlock.acquire("r", Duration.ofSeconds(1), Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("maxWait must not be negative, was -1 ms");
        }
    }

    @Test
    void tlsSettingsWithoutATlsNode() {
        rejects(
                b -> b.node("redis://127.0.0.1:6379").tlsCaBundle(java.nio.file.Path.of("ca.pem")),
                "tlsCaBundle set, but no node is rediss://",
                "rediss://host:port");
    }

    @Test
    void tlsSettingsThatContradictEachOther() throws Exception {
        javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getDefault();
        rejects(
                b -> b.node("rediss://127.0.0.1:6379").tls(context).tlsCaBundle(java.nio.file.Path.of("ca.pem")),
                "tls(SSLContext) and tlsCaBundle set",
                "drop tls(SSLContext)");
        rejects(
                b -> b.node("rediss://127.0.0.1:6379")
                        .insecureTrustAllCertificates()
                        .tlsCaBundle(java.nio.file.Path.of("ca.pem")),
                "insecureTrustAllCertificates() and tlsCaBundle set");
        rejects(
                b -> b.node("rediss://127.0.0.1:6379").tlsClientCertificate(java.nio.file.Path.of("c.pem"), null),
                "tlsClientCertificate needs both files");
        rejects(
                b -> b.node("rediss://127.0.0.1:6379").tlsCaBundle(java.nio.file.Path.of("/nonexistent/ca.pem")),
                "tlsCaBundle: cannot read /nonexistent/ca.pem");
    }
}
