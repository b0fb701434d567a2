package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.LockUnavailableException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.ServerAnswer;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;

/**
 * Bad configuration and bad input fail fast, naming the setting and the remedy; an ensemble that
 * cannot be reached is reported with evidence. No ZooKeeper server runs here.
 */
class ZooKeeperLockConfigTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    private static void rejects(Consumer<ZooKeeperLockBuilder> config, String... message) {
        ZooKeeperLockBuilder builder = ZooKeeperLock.builder();
        config.accept(builder);
        assertThatThrownBy(builder::build)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContainingAll(message);
    }

    /** A loopback port where nothing listens. */
    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static ZooKeeperLock unreachable() throws IOException {
        return ZooKeeperLock.builder()
                .connectString("127.0.0.1:" + closedPort())
                .sessionTimeout(Duration.ofSeconds(2))
                .connectTimeout(Duration.ofMillis(300))
                .build();
    }

    @Test
    void noEnsemble() {
        rejects(b -> {}, "no ensemble", "connectString(\"zk1:2181,zk2:2181,zk3:2181\")", "client(...)");
        rejects(b -> b.connectString("  "), "no ensemble");
    }

    @Test
    void badConnectString() {
        rejects(
                b -> b.connectString("zk1:notaport"),
                "connectString 'zk1:notaport' is not a ZooKeeper connect string",
                "host:port,host:port[/chroot]");
        rejects(b -> b.connectString("zk1:99999"), "port out of range");
        rejects(b -> b.connectString(","), "it names no server");
        rejects(b -> b.connectString(":2181"), "is not host:port");
        rejects(b -> b.connectString("zk1:2181/bad//chroot"), "Invalid path string");
    }

    @Test
    void badTimeouts() {
        rejects(
                b -> b.connectString("zk1:2181").sessionTimeout(Duration.ZERO),
                "sessionTimeout must be positive, was 0 ms (the default is 10 s)");
        rejects(
                b -> b.connectString("zk1:2181").connectTimeout(Duration.ofMillis(-5)),
                "connectTimeout must be positive, was -5 ms (the default is 5 s)");
        rejects(b -> b.connectString("zk1:2181").sessionTimeout(Duration.ofDays(30)), "sessionTimeout must be at most");
        rejects(
                b -> b.connectString("zk1:2181")
                        .sessionTimeout(Duration.ofSeconds(2))
                        .connectTimeout(Duration.ofSeconds(3)),
                "connectTimeout (3000 ms) must not be longer than sessionTimeout (2000 ms)",
                "lower connectTimeout or raise sessionTimeout");
    }

    @Test
    void aShortSessionTimeoutAloneShortensTheDefaultConnectTimeout() {
        try (ZooKeeperLock lock = ZooKeeperLock.builder()
                .connectString("127.0.0.1:1")
                .sessionTimeout(Duration.ofSeconds(2))
                .build()) {
            assertThat(lock.client().getZookeeperClient().getConnectionTimeoutMs())
                    .isEqualTo(2000);
        }
    }

    @Test
    void badBasePathAndRetry() {
        rejects(b -> b.connectString("zk1:2181").basePath("locks"), "basePath 'locks' is not usable", "start with '/'");
        rejects(b -> b.connectString("zk1:2181").basePath("/"), "basePath '/' is not usable");
        rejects(b -> b.connectString("zk1:2181").basePath("/locks/"), "must not end with '/'");
        rejects(b -> b.connectString("zk1:2181").basePath("/zookeeper/locks"), "ZooKeeper reserves /zookeeper");
        rejects(b -> b.connectString("zk1:2181").basePath("/a//b"), "empty node name");
        rejects(b -> b.connectString("zk1:2181").basePath(null), "basePath null", ZooKeeperLock.DEFAULT_BASE_PATH);
        rejects(b -> b.connectString("zk1:2181").retry(null), "retry must not be null");
    }

    @Test
    void aSuppliedClientMustBeStartedAndAlone() {
        try (CuratorFramework client = CuratorFrameworkFactory.newClient("127.0.0.1:1", new RetryOneTime(10))) {
            rejects(b -> b.client(client), "is LATENT, not STARTED", "call client.start() before build()");
            rejects(b -> b.client(client).connectString("zk1:2181"), "both connectString and client are set");
            rejects(
                    b -> b.client(client).sessionTimeout(Duration.ofSeconds(3)),
                    "with client(...) set them on that CuratorFramework instead");
        }
        CuratorFramework closed = CuratorFrameworkFactory.newClient("127.0.0.1:1", new RetryOneTime(10));
        closed.start();
        closed.close();
        rejects(b -> b.client(closed), "is STOPPED", "pass an open client");
    }

    @Test
    void badInputToAnAttempt() throws IOException {
        try (ZooKeeperLock lock = unreachable()) {
            assertThatThrownBy(() -> lock.tryAcquire("", TTL))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("resource must not be empty");
            assertThatThrownBy(() -> lock.tryAcquire("orders/42", TTL))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("without '/'", "use another separator");
            assertThatThrownBy(() -> lock.tryAcquire("..", TTL)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> lock.tryAcquire("bad\u0001name", TTL))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not a valid ZooKeeper node name");
            assertThatThrownBy(() -> lock.tryAcquire("job", Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("ttl must be positive, was 0 ms", "lives as long as its session");
            assertThatThrownBy(() -> lock.acquire("job", TTL, Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("maxWait must not be negative");
        }
    }

    @Test
    void anUnreachableEnsembleIsReportedWithinTheWait() throws IOException {
        try (ZooKeeperLock lock = unreachable()) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> lock.tryAcquire("job", TTL))
                    .isInstanceOf(LockUnavailableException.class)
                    .hasMessageContaining("no connection to the ensemble within the connect timeout");
            assertThatThrownBy(() -> lock.acquire("job", TTL, Duration.ofMillis(300)))
                    .isInstanceOfSatisfying(
                            LockUnavailableException.class,
                            e -> assertThat(e.lastAttempt()).singleElement().satisfies(outcome -> {
                                assertThat(outcome.kind()).isEqualTo(ServerAnswer.Kind.UNREACHABLE);
                                assertThat(outcome.server()).startsWith("zookeeper://127.0.0.1:");
                                assertThat(outcome.server()).endsWith(ZooKeeperLock.DEFAULT_BASE_PATH);
                            }))
                    .hasMessageContaining("no connection to the ensemble");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        }
    }

    @Test
    void theSessionTimeoutIsEmptyWhileTheEnsembleCannotBeReached() throws IOException {
        try (ZooKeeperLock lock = unreachable()) {
            assertThat(lock.sessionTimeout()).isEmpty();
        }
    }

    @Test
    void aClosedLockRefusesWork() throws IOException {
        ZooKeeperLock lock = unreachable();
        lock.close();
        lock.close();
        assertThatThrownBy(() -> lock.acquire("job", TTL, Duration.ZERO))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(lock::sessionTimeout)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void curatorRetriesFollowTheBackoffForAtMostTheLimit() {
        CuratorRetry retry = new CuratorRetry(
                RetryPolicy.jitteredBackoff(Duration.ofMillis(10), Duration.ofMillis(10)), Duration.ofMillis(100));
        long[] slept = new long[1];
        assertThat(retry.allowRetry(0, 0, (time, unit) -> slept[0] = unit.toMillis(time)))
                .isTrue();
        assertThat(slept[0]).isEqualTo(10);
        assertThat(retry.allowRetry(5, 95, (time, unit) -> {}))
                .as("past the limit")
                .isFalse();
    }
}
