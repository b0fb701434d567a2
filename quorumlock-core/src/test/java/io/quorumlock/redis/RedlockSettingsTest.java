package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.IllegalSettingException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every refusal of the builder and of a call names the setting, and the entry of a list. No node is contacted. */
class RedlockSettingsTest {

    private static final int WHOLE = -1;
    private static final Path PEM = Path.of("/nonexistent/file.pem");

    static Stream<Arguments> refusals() {
        return Stream.of(
                refusal("nodes", WHOLE, b -> {}),
                refusal("nodes", 1, b -> b.node("redis://h:1").node("h:2")),
                refusal(
                        "nodes",
                        2,
                        b -> b.node("redis://h:1").node("redis://h:2").node("redis://h:1/3")),
                refusal("nodeTimeout", WHOLE, b -> b.node("redis://h:1").nodeTimeout(null)),
                refusal("nodeTimeout", WHOLE, b -> b.node("redis://h:1").nodeTimeout(Duration.ofNanos(10))),
                refusal("connectTimeout", WHOLE, b -> b.node("redis://h:1").connectTimeout(Duration.ofMillis(10))),
                refusal("clockDriftFactor", WHOLE, b -> b.node("redis://h:1").clockDriftFactor(0.5)),
                refusal("retry", WHOLE, b -> b.node("redis://h:1").retry(null)),
                refusal("listener", WHOLE, b -> b.node("redis://h:1").listener(null)),
                refusal("holder", WHOLE, b -> b.node("redis://h:1").holder("tab\there")),
                refusal(
                        "maxConnectionsPerNode",
                        WHOLE,
                        b -> b.node("redis://h:1").maxConnectionsPerNode(0)),
                refusal("tlsCaBundle", WHOLE, b -> b.node("redis://h:1").tlsCaBundle(PEM)),
                refusal(
                        "tlsClientCertificate",
                        WHOLE,
                        b -> b.node("redis://h:1").tlsClientCertificate(PEM, PEM)),
                refusal(
                        "insecureTrustAllCertificates",
                        WHOLE,
                        b -> b.node("rediss://h:1")
                                .insecureTrustAllCertificates()
                                .tlsCaBundle(PEM)),
                refusal("tlsClientCertificate", 0, b -> b.node("rediss://h:1").tlsClientCertificate(null, PEM)),
                refusal("tlsClientCertificate", 1, b -> b.node("rediss://h:1").tlsClientCertificate(PEM, null)),
                refusal("tlsCaBundle", WHOLE, b -> b.node("rediss://h:1").tlsCaBundle(PEM)),
                refusal("tlsClientCertificate", 0, b -> b.node("rediss://h:1").tlsClientCertificate(PEM, PEM)));
    }

    private static Arguments refusal(String setting, int index, Consumer<Redlock.Builder> config) {
        return Arguments.of(setting, index, config);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("refusals")
    void theBuilderNamesTheSetting(String setting, int index, Consumer<Redlock.Builder> config) {
        Redlock.Builder builder = Redlock.builder();
        config.accept(builder);
        IllegalSettingException e = catchThrowableOfType(IllegalSettingException.class, builder::build);
        assertThat(e).as("refused").isNotNull();
        assertThat(e.setting()).as(e.getMessage()).isEqualTo(setting);
        assertThat(e.index()).as(e.getMessage()).isEqualTo(index < 0 ? OptionalInt.empty() : OptionalInt.of(index));
    }

    @Test
    void twoEntriesThatReachOneAddressNameTheLater() {
        IllegalSettingException e = catchThrowableOfType(
                IllegalSettingException.class,
                () -> Redlock.builder()
                        .node("redis://127.0.0.1:1")
                        .node("redis://[::ffff:127.0.0.1]:1")
                        .build());
        assertThat(e).hasMessageContaining("are the same server");
        assertThat(e.index()).isEqualTo(OptionalInt.of(1));
    }

    @Test
    void theArgumentsOfACallAreNamedByTheirParameter() {
        try (Redlock redlock = Redlock.builder().node("redis://127.0.0.1:1").build()) {
            Duration ttl = Duration.ofSeconds(1);
            assertThat(setting(() -> redlock.tryAcquire("", ttl))).isEqualTo("resource");
            assertThat(setting(() -> redlock.acquire(null, ttl, Duration.ZERO))).isEqualTo("resource");
            assertThat(setting(() -> redlock.tryAcquire("r", Duration.ofMillis(100))))
                    .isEqualTo("ttl");
            assertThat(setting(() -> redlock.tryAcquire("r", null))).isEqualTo("ttl");
            assertThat(setting(() -> redlock.lossNotice(Duration.ZERO))).isEqualTo("ttl");
            assertThat(setting(() -> redlock.acquire("r", ttl, Duration.ofMillis(-1))))
                    .isEqualTo("maxWait");
        }
    }

    private static String setting(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        IllegalSettingException e = catchThrowableOfType(IllegalSettingException.class, call);
        assertThat(e).as("refused").isNotNull();
        return e.setting();
    }
}
