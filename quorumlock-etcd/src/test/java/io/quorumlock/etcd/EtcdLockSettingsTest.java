package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.etcd.jetcd.Client;
import io.quorumlock.IllegalSettingException;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every refusal of the builder and of a call names the setting, and the entry of a list; no etcd needed. */
class EtcdLockSettingsTest {

    private static final String LOCAL = "http://127.0.0.1:2379";

    /** Connects lazily: never used here. */
    private static final Client CLIENT = Client.builder().endpoints(LOCAL).build();

    @AfterAll
    static void closeClient() {
        CLIENT.close();
    }

    static Stream<Arguments> refusals() {
        return Stream.of(
                refusal("endpoints", b -> {}),
                refusal("endpoints", b -> b.client(CLIENT).endpoints(LOCAL)),
                refusal("endpoints[1]", b -> b.endpoints(LOCAL, "127.0.0.1:2380")),
                refusal("endpoints[0]", b -> b.endpoints("http://127.0.0.1:2379x", LOCAL)),
                refusal("endpoints[2]", b -> b.endpoints(LOCAL, "http://127.0.0.1:2380", LOCAL + "/")),
                refusal("endpoints[1]", b -> b.endpoints("https://127.0.0.1:2379", LOCAL)),
                refusal("tlsCaBundle", b -> b.endpoints(LOCAL).tlsCaBundle(java.nio.file.Path.of("ca.pem"))),
                refusal(
                        "tlsCaBundle",
                        b -> b.endpoints("https://127.0.0.1:2379")
                                .tlsCaBundle(java.nio.file.Path.of("missing-ca.pem"))),
                refusal(
                        "tlsClientCertificate",
                        b -> b.client(CLIENT)
                                .tlsClientCertificate(java.nio.file.Path.of("c.pem"), java.nio.file.Path.of("c.key"))),
                refusal("endpoints[1]", b -> b.endpoints(LOCAL, " ")),
                refusal("keyPrefix", b -> b.endpoints(LOCAL).keyPrefix("")),
                refusal("retry", b -> b.endpoints(LOCAL).retry(null)),
                refusal("listener", b -> b.endpoints(LOCAL).listener(null)),
                refusal("requestTimeout", b -> b.endpoints(LOCAL).requestTimeout(null)),
                refusal("tryAcquireWait", b -> b.endpoints(LOCAL).tryAcquireWait(Duration.ZERO)),
                refusal("connectTimeout", b -> b.endpoints(LOCAL).connectTimeout(Duration.ofMillis(-1))),
                refusal("connectTimeout", b -> b.client(CLIENT).connectTimeout(Duration.ofSeconds(1))));
    }

    private static Arguments refusal(String named, Consumer<EtcdLockBuilder> config) {
        return Arguments.of(named, config);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void theBuilderNamesTheSetting(String named, Consumer<EtcdLockBuilder> config) {
        EtcdLockBuilder builder = EtcdLock.builder();
        config.accept(builder);
        IllegalSettingException e = refusal(builder::build);
        assertThat(e.setting()
                        + e.index().stream()
                                .mapToObj(i -> "[" + i + "]")
                                .findFirst()
                                .orElse(""))
                .as(e.getMessage())
                .isEqualTo(named);
    }

    @Test
    void theArgumentsOfACallAreNamedByTheirParameter() {
        try (EtcdLock lock = EtcdLock.builder().endpoints("http://127.0.0.1:1").build()) {
            Duration ttl = Duration.ofSeconds(5);
            assertThat(refusal(() -> lock.acquire("", ttl, Duration.ZERO)).setting())
                    .isEqualTo("resource");
            assertThat(refusal(() -> lock.tryAcquire("job", Duration.ZERO)).setting())
                    .isEqualTo("ttl");
            assertThat(refusal(() -> lock.tryAcquire("job", Duration.ofSeconds(EtcdLock.MAX_TTL_SECONDS + 1)))
                            .setting())
                    .isEqualTo("ttl");
            assertThat(refusal(() -> lock.acquire("job", ttl, Duration.ofMillis(-5)))
                            .setting())
                    .isEqualTo("maxWait");
            assertThat(refusal(() -> lock.checkCluster(Duration.ZERO)).setting())
                    .isEqualTo("timeout");
        }
    }

    private static IllegalSettingException refusal(ThrowingCallable call) {
        IllegalSettingException e = catchThrowableOfType(IllegalSettingException.class, call);
        assertThat(e).as("refused").isNotNull();
        return e;
    }
}
