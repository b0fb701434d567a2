package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Bad settings and bad arguments fail at once, naming the setting and the remedy; no etcd needed. */
class EtcdLockBuilderTest {

    private static final String LOCAL = "http://127.0.0.1:2379";

    @Test
    void endpointsOrAClientAreRequiredButNotBoth() {
        assertThatThrownBy(() -> EtcdLock.builder().build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no etcd endpoints")
                .hasMessageContaining("endpoints(\"http://host:2379\", ...)");
        try (Client client = Client.builder().endpoints(LOCAL).build()) {
            assertThatThrownBy(() ->
                            EtcdLock.builder().client(client).endpoints(LOCAL).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("both endpoints(...) and client(...)");
            // A given client is not closed by the lock.
            EtcdLock.builder().client(client).build().close();
            assertThat(client.getKVClient()).isNotNull();
        }
    }

    @Test
    void endpointsMustBePlainHttpUrlsOfDistinctMembers() {
        assertThatThrownBy(() -> build("127.0.0.1:2379"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must start with http://")
                .hasMessageContaining("such as http://127.0.0.1:2379");
        assertThatThrownBy(() -> build("ftp://10.0.0.1:2379"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must start with http:// (or https:// for TLS)");
        assertThatThrownBy(() -> build("http://10.0.0.1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must name a host and a port");
        assertThatThrownBy(() -> build("http://user:secret@10.0.0.1:2379"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("credentials go to your own jetcd Client");
        assertThatThrownBy(() -> build(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("endpoint must not be empty");
        assertThatThrownBy(() -> build("http://bad host:2379"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not a URL");
        assertThatThrownBy(() -> EtcdLock.builder()
                        .endpoints(List.of("http://10.0.0.1:2379", "http://10.0.0.1:2379/"))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is listed twice");
    }

    @Test
    void tlsSettingsAgreeWithTheEndpointsAndNameReadableFiles(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path ca = java.nio.file.Files.writeString(dir.resolve("ca.pem"), "not a certificate");
        EtcdLock.builder().endpoints("https://10.0.0.1:2379").build().close(); // the JDK trust store
        assertThatThrownBy(() ->
                        EtcdLock.builder().endpoints(LOCAL).tlsCaBundle(ca).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tlsCaBundle set, but no endpoint is https://");
        assertThatThrownBy(() -> EtcdLock.builder()
                        .endpoints("https://10.0.0.1:2379", "http://10.0.0.2:2379")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("with TLS (https://) or to none");
        assertThatThrownBy(() -> EtcdLock.builder()
                        .endpoints("https://10.0.0.1:2379")
                        .tlsCaBundle(dir.resolve("missing.pem"))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tlsCaBundle")
                .hasMessageContaining("cannot read " + dir.resolve("missing.pem"));
        assertThatThrownBy(() -> EtcdLock.builder()
                        .endpoints("https://10.0.0.1:2379")
                        .tlsCaBundle(ca)
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("tlsCaBundle")
                .hasMessageContaining("-----BEGIN CERTIFICATE-----");
        assertThatThrownBy(() -> EtcdLock.builder()
                        .endpoints("https://10.0.0.1:2379")
                        .tlsClientCertificate(ca, null)
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tlsClientCertificate needs the client certificate and its key: give both");
    }

    @Test
    void otherSettingsAreChecked() {
        assertThatThrownBy(
                        () -> EtcdLock.builder().endpoints(LOCAL).keyPrefix("").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keyPrefix must not be empty")
                .hasMessageContaining("/quorumlock/locks/");
        assertThatThrownBy(() -> EtcdLock.builder().endpoints(LOCAL).retry(null).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("RetryPolicy.DEFAULT");
        assertThatThrownBy(() -> EtcdLock.builder()
                        .endpoints(LOCAL)
                        .requestTimeout(Duration.ZERO)
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("requestTimeout must be positive, was 0 ms (the default is 5 s)");
        assertThatThrownBy(() -> EtcdLock.builder()
                        .endpoints(LOCAL)
                        .tryAcquireWait(Duration.ofMillis(-1))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tryAcquireWait must be positive, was -1 ms (the default is 100 ms)");
    }

    @Test
    void badArgumentsFailBeforeAnyRequest() {
        try (EtcdLock lock = EtcdLock.builder().endpoints("http://127.0.0.1:1").build()) {
            Duration ttl = Duration.ofSeconds(5);
            assertThatThrownBy(() -> lock.acquire("", ttl, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("resource must not be empty");
            assertThatThrownBy(() -> lock.tryAcquire("job", Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("ttl must be positive, was 0 ms");
            assertThatThrownBy(() -> lock.acquire("job", ttl, Duration.ofMillis(-5)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("maxWait must not be negative, was -5 ms");
            assertThatThrownBy(() -> lock.tryAcquire("job", Duration.ofSeconds(EtcdLock.MAX_TTL_SECONDS + 1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("etcd's limit");
        }
    }

    @Test
    void theTtlIsRoundedUpToWholeSeconds() {
        assertThat(EtcdLock.ttlSeconds(Duration.ofMillis(1))).isEqualTo(1);
        assertThat(EtcdLock.ttlSeconds(Duration.ofMillis(2001))).isEqualTo(3);
        assertThat(EtcdLock.ttlSeconds(Duration.ofSeconds(30))).isEqualTo(30);
    }

    @Test
    void resourceNamesAreEscapedSoThatNoLockFallsInsideAnother() {
        assertThat(EtcdLock.escape("order/42")).isEqualTo("order%2F42");
        assertThat(EtcdLock.escape("100%/x")).isEqualTo("100%25%2Fx");
        assertThat(EtcdLock.escape("stock:sku-42")).isEqualTo("stock:sku-42");
    }

    private static void build(String endpoint) {
        EtcdLock.builder().endpoints(endpoint).build().close();
    }
}
