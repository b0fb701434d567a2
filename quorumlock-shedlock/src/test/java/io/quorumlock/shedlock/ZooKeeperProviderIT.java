package io.quorumlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The provider over fenced leases of a real ZooKeeper server: the token, and lockAtLeastFor. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZooKeeperProviderIT {

    @TempDir
    static Path dir;

    private static TestingServer zookeeper;

    private static final Duration AT_MOST = TestTime.scaled(Duration.ofSeconds(10));

    private TwoClients clients;
    private QuorumlockLockProvider a;
    private QuorumlockLockProvider b;

    @BeforeAll
    static void start() throws Exception {
        zookeeper = ZooKeeperServers.server(dir);
    }

    @AfterAll
    static void stop() throws Exception {
        zookeeper.close();
    }

    @BeforeEach
    void clients() {
        clients = new TwoClients(ZooKeeperProviderIT::lock);
        a = clients.a;
        b = clients.b;
    }

    @AfterEach
    void close() {
        clients.close();
    }

    private static ZooKeeperLock lock() {
        return ZooKeeperLock.builder()
                .connectString(zookeeper.getConnectString())
                .sessionTimeout(TestTime.scaled(Duration.ofSeconds(6)))
                .connectTimeout(TestTime.scaled(Duration.ofSeconds(3)))
                .build();
    }

    private static LockConfiguration job(String name, Duration atLeast) {
        return new LockConfiguration(Instant.now(), name, AT_MOST, atLeast);
    }

    @Test
    void theRunningTaskSeesTheFencingTokenOfItsLeaseAndEachRunALargerOne() {
        assertThat(QuorumlockLockProvider.currentFencingToken()).isEmpty();

        SimpleLock first = a.lock(job("stock", Duration.ZERO)).orElseThrow();
        FencedLease lease = (FencedLease) QuorumlockLockProvider.currentLease().orElseThrow();
        long token = QuorumlockLockProvider.currentFencingToken().orElseThrow();
        assertThat(token).isPositive().isEqualTo(lease.fencingToken());
        assertThat(b.lock(job("stock", Duration.ZERO))).as("held by a").isEmpty();
        first.unlock();
        assertThat(lease.isValid()).as("released").isFalse();
        assertThat(QuorumlockLockProvider.currentFencingToken())
                .as("cleared on unlock")
                .isEmpty();

        SimpleLock second = b.lock(job("stock", Duration.ZERO)).orElseThrow();
        assertThat(QuorumlockLockProvider.currentFencingToken().orElseThrow()).isGreaterThan(token);
        second.unlock();
        assertThat(QuorumlockLockProvider.currentFencingToken()).isEmpty();
    }

    @Test
    void theTokenIsOnlyOnTheThreadThatHoldsTheLock() throws Exception {
        SimpleLock held = a.lock(job("stock", Duration.ZERO)).orElseThrow();
        long[] seen = {-1};
        Thread other = new Thread(
                () -> seen[0] = QuorumlockLockProvider.currentFencingToken().orElse(0));
        other.start();
        other.join(TestTime.scaled(Duration.ofSeconds(5)).toMillis());
        assertThat(seen[0]).isZero();
        held.unlock();
    }

    @Test
    void nestedLocksShowTheInnermostTokenAndThenTheOuterOneAgain() {
        SimpleLock outer = a.lock(job("outer", Duration.ZERO)).orElseThrow();
        long outerToken = QuorumlockLockProvider.currentFencingToken().orElseThrow();
        SimpleLock inner = a.lock(job("inner", Duration.ZERO)).orElseThrow();
        assertThat(QuorumlockLockProvider.currentFencingToken().orElseThrow()).isNotEqualTo(outerToken);
        inner.unlock();
        assertThat(QuorumlockLockProvider.currentFencingToken()).hasValue(outerToken);
        outer.unlock();
        assertThat(QuorumlockLockProvider.currentLease()).isEmpty();
    }

    @Test
    void unlockBeforeLockAtLeastForReleasesTheSessionLeaseWhenItIsOver() {
        Duration atLeast = TestTime.scaled(Duration.ofMillis(1500));
        long start = System.nanoTime();
        SimpleLock held = a.lock(job("report", atLeast)).orElseThrow();
        FencedLease lease = (FencedLease) QuorumlockLockProvider.currentLease().orElseThrow();
        held.unlock();
        assertThat(QuorumlockLockProvider.currentLease()).as("the task is over").isEmpty();
        assertThat(lease.isValid()).as("kept for lockAtLeastFor").isTrue();
        assertThat(b.lock(job("report", Duration.ZERO))).isEmpty();

        TestTime.await(atLeast.plusSeconds(3), () -> !lease.isValid(), "the kept lease to be released");
        long releasedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(releasedAfter).isGreaterThanOrEqualTo(atLeast.toMillis());
        // The lease ends here before its node's delete has reached the ensemble: b's grant is awaited.
        SimpleLock[] next = new SimpleLock[1];
        TestTime.await(
                Duration.ofSeconds(5),
                () -> (next[0] = b.lock(job("report", Duration.ZERO)).orElse(null)) != null,
                "the released lock to be granted to b");
        next[0].unlock();
    }

    @Test
    void closingTheProviderReleasesTheLeasesKeptForLockAtLeastFor() {
        SimpleLock held = a.lock(job("report", AT_MOST)).orElseThrow();
        FencedLease lease = (FencedLease) QuorumlockLockProvider.currentLease().orElseThrow();
        held.unlock();
        assertThat(lease.isValid()).isTrue();
        a.close();
        assertThat(lease.isValid()).isFalse();
        assertThat(b.lock(job("report", Duration.ZERO))).isPresent().get().satisfies(SimpleLock::unlock);
    }
}
