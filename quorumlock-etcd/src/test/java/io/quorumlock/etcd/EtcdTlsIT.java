package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.FencedLease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.EtcdTlsExtension;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The lock over TLS to real etcd members: a CA bundle and a client certificate from PEM files. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EtcdTlsIT {

    private static final Duration TTL = Duration.ofSeconds(5);
    private static final Duration WAIT = Duration.ofSeconds(5);

    @RegisterExtension
    static final EtcdTlsExtension etcd = new EtcdTlsExtension();

    @Test
    void locksOverTlsWithTheGivenCa() {
        try (EtcdLock lock = EtcdLock.builder()
                .endpoints(etcd.server().tls().endpoint())
                .tlsCaBundle(etcd.server().material().caCertificate())
                .build()) {
            FencedLease lease = lock.acquire("tls:job", TTL, WAIT);
            assertThat(lease.fencingToken()).isPositive();
            assertThat(lock.tryAcquire("tls:job", TTL)).isEmpty();
            lease.release();
            lock.tryAcquire("tls:job", TTL).orElseThrow().release();
        }
    }

    @Test
    void mutualTlsWithTheClientCertificate() {
        try (EtcdLock lock = EtcdLock.builder()
                .endpoints(etcd.server().mutual().endpoint())
                .tlsCaBundle(etcd.server().material().caCertificate())
                .tlsClientCertificate(
                        etcd.server().material().clientCertificate(),
                        etcd.server().material().clientKey())
                .build()) {
            lock.acquire("tls:mutual", TTL, WAIT).release();
        }
    }

    @Test
    void aMemberWhoseCertificateTheJdkTrustStoreRefusesIsUnreachableInPlainWords() {
        try (EtcdLock lock = EtcdLock.builder()
                .endpoints(etcd.server().tls().endpoint())
                .connectTimeout(Duration.ofSeconds(2))
                .build()) {
            LockUnavailableException e = catchThrowableOfType(
                    () -> lock.acquire("tls:untrusted", TTL, Duration.ZERO), LockUnavailableException.class);
            ServerAnswer answer = e.lastAttempt().get(0);
            assertThat(answer.kind()).isIn(ServerAnswer.Kind.UNREACHABLE, ServerAnswer.Kind.TIMED_OUT);
            assertThat(e.getMessage())
                    .as("no class names of the client's libraries in the evidence")
                    .doesNotContainPattern("\\b(io|java|javax|sun)\\.[a-z]+\\.")
                    .doesNotContain("Exception")
                    .doesNotContain("Pipeline")
                    .contains("TLS handshake failed (unable to find valid certification path to requested target)");
        }
    }
}
