package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lease follows the connection: the server stops (SUSPENDED) and comes back within the
 * session timeout (valid again), or stays away longer (LOST). Each test has its own server,
 * because it stops it.
 */
class ZooKeeperSuspensionIT {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dataDir;

    private TestingServer server;
    private final List<ZooKeeperLock> locks = new ArrayList<>();

    @BeforeEach
    void startServer() throws Exception {
        server = ZooKeeperServers.server(dataDir);
    }

    @AfterEach
    void stop() throws Exception {
        locks.forEach(ZooKeeperLock::close);
        server.close();
    }

    private ZooKeeperLock newLock(Duration sessionTimeout) {
        ZooKeeperLock lock = TestLocks.lock(server.getConnectString(), sessionTimeout);
        locks.add(lock);
        return lock;
    }

    @Test
    void invalidWhileDisconnectedAndValidAgainWhenTheServerReturnsWithinTheSessionTimeout() throws Exception {
        ZooKeeperLock a = newLock(Duration.ofSeconds(10));
        FencedLease held = a.acquire("suspended", TTL, WAIT);

        server.stop();
        TestTime.await(Duration.ofSeconds(5), () -> !held.isValid(), "the lease to be suspended");
        assertThat(held.remaining()).isZero();
        assertThat(held.lost()).as("suspended is not lost").isNotDone();

        server.restart();
        TestTime.await(Duration.ofSeconds(8), held::isValid, "the lease to be valid again after reconnection");
        assertThat(held.lost()).isNotDone();
        assertThat(((ZooKeeperLease) held).sessionId())
                .as("the same session")
                .isEqualTo(a.client().getZookeeperClient().getZooKeeper().getSessionId());

        ZooKeeperLock b = newLock(Duration.ofSeconds(4));
        assertThat(b.tryAcquire("suspended", TTL)).as("A still holds it").isEmpty();
        held.release();
        try (FencedLease next = b.acquire("suspended", TTL, WAIT)) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
    }

    @Test
    void tryAcquireIsEmptyWhenTheLockIsHeldAndThrowsWhenTheServerIsDown() throws Exception {
        ZooKeeperLock a = newLock(Duration.ofSeconds(10));
        ZooKeeperLock b = newLock(Duration.ofSeconds(4));
        FencedLease held = a.acquire("down", TTL, WAIT);
        assertThat(b.tryAcquire("down", TTL)).as("held by another client").isEmpty();
        held.release();

        server.stop();
        io.quorumlock.LockUnavailableException down = org.junit.jupiter.api.Assertions.assertThrows(
                io.quorumlock.LockUnavailableException.class,
                () -> b.tryAcquire("down", TTL),
                "tryAcquire with the server down");
        assertThat(down.busy()).isFalse();
        assertThat(down.lastAttempt())
                .singleElement()
                .extracting(io.quorumlock.ServerAnswer::kind)
                .as("no connection, or a request sent before the client saw it break")
                .isIn(io.quorumlock.ServerAnswer.Kind.UNREACHABLE, io.quorumlock.ServerAnswer.Kind.TIMED_OUT);
        server.restart();
    }

    @Test
    void asLockKeepsAHoldWhoseLeaseIsValidAgainAfterTheServerReturnsWithinTheSessionTimeout() throws Exception {
        ZooKeeperLock a = newLock(Duration.ofSeconds(10));
        io.quorumlock.DistributedReentrantLock<FencedLease> lock = a.asLock("doubted", TTL);
        lock.lock();
        FencedLease held = lock.lease().orElseThrow();

        server.stop();
        TestTime.await(Duration.ofSeconds(5), () -> !held.isValid(), "the lease to be suspended");
        server.restart();
        TestTime.await(Duration.ofSeconds(8), held::isValid, "the lease to be valid again after reconnection");

        lock.lock(); // reentrant: the lease is held again, not lost
        assertThat(lock.getHoldCount()).isEqualTo(2);
        lock.unlock();
        lock.unlock(); // releases the lease, without LeaseLostException
        assertThat(held.lost()).isNotDone();
        ZooKeeperLock b = newLock(Duration.ofSeconds(4));
        try (FencedLease next = b.acquire("doubted", TTL, WAIT)) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
    }

    @Test
    void withLockStopsTheWorkWhenTheConnectionIsSuspendedNotASessionTimeoutLater() throws Exception {
        Duration session = Duration.ofSeconds(10);
        ZooKeeperLock a = newLock(session);
        java.util.concurrent.CountDownLatch working = new java.util.concurrent.CountDownLatch(1);
        long[] interruptedAfter = {-1};
        java.util.concurrent.CompletableFuture<Throwable> outcome =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        a.runWithLease("in-doubt", TTL, WAIT, lease -> {
                            working.countDown();
                            long start = System.nanoTime();
                            try {
                                Thread.sleep(
                                        TestTime.scaled(Duration.ofSeconds(30)).toMillis());
                            } catch (InterruptedException e) {
                                interruptedAfter[0] = (System.nanoTime() - start) / 1_000_000;
                            }
                        });
                        return null;
                    } catch (Throwable t) {
                        return t;
                    }
                });
        assertThat(working.await(10, TimeUnit.SECONDS)).isTrue();
        long stopped = System.nanoTime();
        server.stop();
        Throwable failure = outcome.get(TestTime.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS);
        long took = (System.nanoTime() - stopped) / 1_000_000;
        // The ensemble may expire the session about a third of the session timeout after Curator
        // reports SUSPENDED: the work must stop at SUSPENDED, not at LOST a session timeout later.
        assertThat(failure).isInstanceOf(io.quorumlock.LeaseLostException.class).hasMessageContaining("SUSPENDED");
        assertThat(interruptedAfter[0]).as("the work was interrupted").isNotNegative();
        assertThat(took).as("ms from the server's stop to the end of withLock").isLessThan(session.toMillis());
        server.restart();
    }

    @Test
    void lostWhenTheServerStaysAwayLongerThanTheSessionTimeout() throws Exception {
        ZooKeeperLock a = newLock(Duration.ofSeconds(2));
        FencedLease held = a.acquire("gone", TTL, WAIT);

        server.stop();
        TestTime.await(Duration.ofSeconds(5), () -> !held.isValid(), "the lease to be suspended");
        // Lost when no heartbeat could be sent before its end drew near (a tenth of the session
        // timeout left), or when Curator reported the session's end, whichever came first.
        assertThat(held.lost()
                        .get(TestTime.scaled(Duration.ofSeconds(6)).toMillis(), TimeUnit.MILLISECONDS)
                        .getMessage())
                .containsAnyOf("not valid at its renewal", "session ended")
                .contains("disconnected for", "session " + ZooKeeperLease.hex(((ZooKeeperLease) held).sessionId()));
        assertThat(held.isValid()).isFalse();

        // The restarted server restores A's old session and expires it a session timeout later.
        server.restart();
        ZooKeeperLock b = newLock(Duration.ofSeconds(4));
        try (FencedLease next = b.acquire("gone", TTL, WAIT)) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
        held.release();
    }
}
