package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.IllegalSettingException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every refusal of the builder and of a call names the setting, and the entry of a list. No node is contacted. */
class RedlockSettingsTest {

    private static final Path PEM = Path.of("/nonexistent/file.pem");

    static Stream<Arguments> refusals() {
        return Stream.of(
                refusal("nodes", b -> {}),
                refusal("nodes[1]", b -> b.node("redis://h:1").node("h:2")),
                refusal(
                        "nodes[2]",
                        b -> b.node("redis://h:1").node("redis://h:2").node("redis://h:1/3")),
                refusal("nodeTimeout", b -> b.node("redis://h:1").nodeTimeout(null)),
                refusal("nodeTimeout", b -> b.node("redis://h:1").nodeTimeout(Duration.ofNanos(10))),
                refusal("connectTimeout", b -> b.node("redis://h:1").connectTimeout(Duration.ofMillis(10))),
                refusal("clockDriftFactor", b -> b.node("redis://h:1").clockDriftFactor(0.5)),
                refusal("retry", b -> b.node("redis://h:1").retry(null)),
                refusal("listener", b -> b.node("redis://h:1").listener(null)),
                refusal("holder", b -> b.node("redis://h:1").holder("tab\there")),
                refusal("maxConnectionsPerNode", b -> b.node("redis://h:1").maxConnectionsPerNode(0)),
                refusal("tlsCaBundle", b -> b.node("redis://h:1").tlsCaBundle(PEM)),
                refusal("tlsClientCertificate", b -> b.node("redis://h:1").tlsClientCertificate(PEM, PEM)),
                refusal(
                        "insecureTrustAllCertificates",
                        b -> b.node("rediss://h:1")
                                .insecureTrustAllCertificates()
                                .tlsCaBundle(PEM)),
                refusal("tlsClientCertificate[0]", b -> b.node("rediss://h:1").tlsClientCertificate(null, PEM)),
                refusal("tlsClientCertificate[1]", b -> b.node("rediss://h:1").tlsClientCertificate(PEM, null)),
                refusal("tlsCaBundle", b -> b.node("rediss://h:1").tlsCaBundle(PEM)),
                refusal("tlsClientCertificate[0]", b -> b.node("rediss://h:1").tlsClientCertificate(PEM, PEM)));
    }

    private static Arguments refusal(String named, Consumer<RedlockBuilder> config) {
        return Arguments.of(named, config);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void theBuilderNamesTheSetting(String named, Consumer<RedlockBuilder> config) {
        RedlockBuilder builder = Redlock.builder();
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
            assertThat(refusal(() -> redlock.tryAcquire("", ttl)).setting()).isEqualTo("resource");
            assertThat(refusal(() -> redlock.acquire(null, ttl, Duration.ZERO)).setting())
                    .isEqualTo("resource");
            assertThat(refusal(() -> redlock.tryAcquire("r", Duration.ofMillis(100)))
                            .setting())
                    .isEqualTo("ttl");
            assertThat(refusal(() -> redlock.tryAcquire("r", null)).setting()).isEqualTo("ttl");
            assertThat(refusal(() -> redlock.lossNotice(Duration.ZERO)).setting())
                    .isEqualTo("ttl");
            assertThat(refusal(() -> redlock.acquire("r", ttl, Duration.ofMillis(-1)))
                            .setting())
                    .isEqualTo("maxWait");
        }
    }

    private static IllegalSettingException refusal(ThrowingCallable call) {
        IllegalSettingException e = catchThrowableOfType(IllegalSettingException.class, call);
        assertThat(e).as("refused").isNotNull();
        return e;
    }
}
