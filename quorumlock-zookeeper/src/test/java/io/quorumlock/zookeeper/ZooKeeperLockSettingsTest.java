package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.IllegalSettingException;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every refusal of the builder and of a call names the setting. No ZooKeeper server runs here. */
class ZooKeeperLockSettingsTest {

    /** Never started: the builder refuses it, or refuses the settings beside it first. */
    private static final CuratorFramework LATENT =
            CuratorFrameworkFactory.newClient("127.0.0.1:1", new RetryOneTime(10));

    private static final String ENSEMBLE = "127.0.0.1:2181";

    @AfterAll
    static void closeClient() {
        LATENT.close();
    }

    static Stream<Arguments> refusals() {
        return Stream.of(
                refusal("connectString", b -> {}),
                refusal("connectString", b -> b.connectString(" ")),
                refusal("connectString", b -> b.connectString("zk1:notaport")),
                refusal("connectString", b -> b.connectString("user:pw@zk1:2181")),
                refusal("sessionTimeout", b -> b.connectString(ENSEMBLE).sessionTimeout(Duration.ofSeconds(-1))),
                refusal("sessionTimeout", b -> b.connectString(ENSEMBLE).sessionTimeout(Duration.ofDays(25))),
                refusal("connectTimeout", b -> b.connectString(ENSEMBLE).connectTimeout(Duration.ZERO)),
                refusal(
                        "connectTimeout",
                        b -> b.connectString(ENSEMBLE)
                                .sessionTimeout(Duration.ofSeconds(2))
                                .connectTimeout(Duration.ofSeconds(3))),
                refusal("basePath", b -> b.connectString(ENSEMBLE).basePath("relative")),
                refusal("retry", b -> b.connectString(ENSEMBLE).retry(null)),
                refusal("listener", b -> b.connectString(ENSEMBLE).listener(null)),
                refusal("connectString", b -> b.client(LATENT).connectString(ENSEMBLE)),
                refusal("sessionTimeout", b -> b.client(LATENT).sessionTimeout(Duration.ofSeconds(3))),
                refusal("connectTimeout", b -> b.client(LATENT).connectTimeout(Duration.ofSeconds(3))),
                refusal("client", b -> b.client(LATENT)));
    }

    private static Arguments refusal(String named, Consumer<ZooKeeperLockBuilder> config) {
        return Arguments.of(named, config);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void theBuilderNamesTheSetting(String named, Consumer<ZooKeeperLockBuilder> config) {
        ZooKeeperLockBuilder builder = ZooKeeperLock.builder();
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
    void theArgumentsOfACallAreNamedByTheirParameter() throws IOException {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        try (ZooKeeperLock lock = ZooKeeperLock.builder()
                .connectString("127.0.0.1:" + closed)
                .connectTimeout(Duration.ofMillis(300))
                .build()) {
            Duration ttl = Duration.ofSeconds(30);
            assertThat(refusal(() -> lock.tryAcquire("", ttl)).setting()).isEqualTo("resource");
            assertThat(refusal(() -> lock.tryAcquire("a/b", ttl)).setting()).isEqualTo("resource");
            assertThat(refusal(() -> lock.tryAcquire("bad\u0001name", ttl)).setting())
                    .isEqualTo("resource");
            assertThat(refusal(() -> lock.tryAcquire("job", Duration.ZERO)).setting())
                    .isEqualTo("ttl");
            assertThat(refusal(() -> lock.acquire("job", ttl, Duration.ofMillis(-1)))
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
