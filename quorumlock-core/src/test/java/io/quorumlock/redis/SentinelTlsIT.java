package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.testkit.RedisSentinels;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.TlsMaterial;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code rediss-sentinel://}: the sentinels and the master they name are reached over TLS, both
 * checked against the CA given; sentinels whose certificates that CA did not issue name no master,
 * a configuration error as a node's untrusted certificate is.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SentinelTlsIT {

    private static final Duration TTL = Duration.ofSeconds(30);

    @Test
    void theSentinelsAndTheMasterAreReachedOverTlsAndAnUntrustedSentinelNamesNoMaster() {
        try (TlsMaterial tls = TlsMaterial.generate();
                TlsMaterial other = TlsMaterial.generate();
                RedisSentinels redis = RedisSentinels.startTls(tls)) {
            assertThat(redis.uri()).startsWith("rediss-sentinel://");
            try (Redlock lock =
                    builder(redis.uri()).tlsCaBundle(tls.caCertificate()).build()) {
                Lease lease = lock.acquire("r", TTL, Duration.ZERO);
                assertThat(lease.isValid()).isTrue();
                lease.release();
                assertThat(lock.checkNodes().nodes().get(0).findings())
                        .anyMatch(f -> f.contains("the master 127.0.0.1:"
                                + redis.master().port() + ", named by the sentinel 127.0.0.1:"));

                // The lock follows a failover over TLS too. Until the old master, now a replica, has
                // synced, a grant waits for it in vain (NOREPLICAS): asked again.
                RedisServer promoted = redis.failOver();
                TestTime.await(
                        Duration.ofSeconds(20),
                        () -> {
                            try {
                                lock.acquire("after", TTL, Duration.ZERO).release();
                                return true;
                            } catch (LockUnavailableException notYet) {
                                return false;
                            }
                        },
                        "a grant on the promoted master " + promoted.uri());
            }
            try (Redlock lock =
                    builder(redis.uri()).tlsCaBundle(other.caCertificate()).build()) {
                assertThatThrownBy(() -> lock.acquire("r", TTL, Duration.ZERO))
                        .isInstanceOf(LockConfigurationException.class)
                        .hasMessageContaining("1 of 1 node refused with a configuration error")
                        .hasMessageContaining("no sentinel named the master mymaster: 127.0.0.1:"
                                + redis.sentinels().get(0).port()
                                + ": TLS: untrusted certificate (subject CN=127.0.0.1,"
                                + " issuer CN=" + tls.caName() + ")");
            }
        }
    }

    private static RedlockBuilder builder(String uri) {
        return Redlock.builder()
                .node(uri)
                .nodeTimeout(TestTime.scaled(Duration.ofMillis(200)))
                .connectTimeout(TestTime.scaled(Duration.ofSeconds(2)));
    }
}
