package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.AcquireLoop;
import io.quorumlock.FencedLease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An acquire through a silent partition (the fault proxy holds the bytes, resets nothing) returns
 * within its wait and the documented overrun, and leaves no lock node that the ensemble would
 * grant to nobody while the session lives.
 */
@Timeout(40)
class ZooKeeperMaxWaitIT {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperMaxWaitIT.class);

    private static final Duration TTL = Duration.ofSeconds(30);
    /** Longer than the test: the session outlives the partition, so only a delete removes a node. */
    private static final Duration SESSION = Duration.ofSeconds(8);

    private static final Duration MAX_WAIT = Duration.ofSeconds(1);
    /** For the test's own scheduling on a loaded machine (a late caller thread, a GC pause). */
    private static final Duration JITTER = Duration.ofMillis(400);

    @TempDir
    Path dataDir;

    private TestingServer server;
    private FaultProxy proxy;
    private final List<ZooKeeperLock> locks = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = ZooKeeperServers.server(dataDir);
        proxy = FaultProxy.start("127.0.0.1", server.getPort());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        locks.forEach(ZooKeeperLock::close);
        server.close();
    }

    private ZooKeeperLock newLock(String connectString) {
        ZooKeeperLock lock = TestLocks.lock(connectString, SESSION);
        locks.add(lock);
        return lock;
    }

    private static Duration bound() {
        return MAX_WAIT.plus(AcquireLoop.overrun(SESSION.dividedBy(2))).plus(TestTime.scaled(JITTER));
    }

    @Test
    void anAcquireThroughASilentPartitionReturnsWithinItsWait() throws Exception {
        ZooKeeperLock cutOff = newLock(proxy.address());
        ZooKeeperLock direct = newLock(server.getConnectString());
        cutOff.acquire("warm-up", TTL, Duration.ofSeconds(10)).release();
        long session = cutOff.currentSessionId();

        proxy.partition();
        long start = System.nanoTime();
        LockUnavailableException refused =
                catchThrowableOfType(LockUnavailableException.class, () -> cutOff.acquire("stock", TTL, MAX_WAIT));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        log.info(
                "ZooKeeper: acquire(maxWait {} ms) through a silent partition returned after {} ms",
                MAX_WAIT.toMillis(),
                took.toMillis());
        assertThat(refused).as("refused within the wait").isNotNull();
        assertThat(refused).hasMessageContaining("within the wait");
        assertThat(took).isLessThanOrEqualTo(bound());

        proxy.heal();
        // The create sent into the partition reaches the server now; its node is deleted, not left to the session.
        TestTime.await(Duration.ofSeconds(3), () -> nodes(direct, "stock") == 0, "the given-up node to go");
        try (FencedLease lease = direct.acquire("stock", TTL, Duration.ofSeconds(2))) {
            assertThat(lease.isValid()).isTrue();
        }
        assertThat(cutOff.currentSessionId()).as("the same session").isEqualTo(session);
        cutOff.acquire("stock", TTL, Duration.ofSeconds(3)).release();
    }

    @Test
    void aWaiterGivenUpInASilentPartitionLeavesNoNodeForTheNextHolder() throws Exception {
        ZooKeeperLock cutOff = newLock(proxy.address());
        ZooKeeperLock direct = newLock(server.getConnectString());
        ZooKeeperLock next = newLock(server.getConnectString());
        cutOff.acquire("warm-up", TTL, Duration.ofSeconds(10)).release();
        long session = cutOff.currentSessionId();
        FencedLease held = direct.acquire("queue", TTL, Duration.ofSeconds(5));

        long start = System.nanoTime();
        CompletableFuture<Throwable> waiting = CompletableFuture.supplyAsync(() ->
                catchThrowableOfType(LockUnavailableException.class, () -> cutOff.acquire("queue", TTL, MAX_WAIT)));
        TestTime.await(Duration.ofSeconds(2), () -> nodes(direct, "queue") == 2, "the cut-off client to queue");
        proxy.partition();
        Throwable refused = waiting.get(30, TimeUnit.SECONDS);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        log.info(
                "ZooKeeper: acquire(maxWait {} ms) queued behind a holder, then cut off, returned after {} ms",
                MAX_WAIT.toMillis(),
                took.toMillis());
        assertThat(refused).as("refused within the wait").isNotNull();
        assertThat(took).isLessThanOrEqualTo(bound());

        proxy.heal();
        long healed = System.nanoTime();
        TestTime.await(Duration.ofSeconds(3), () -> nodes(direct, "queue") == 1, "the given-up waiter's node to go");
        held.release();
        try (FencedLease lease = next.acquire("queue", TTL, Duration.ofSeconds(2))) {
            assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
        }
        Duration after = Duration.ofNanos(System.nanoTime() - healed);
        log.info(
                "ZooKeeper: after the heal the next client got the lock in {} ms (session {} ms)",
                after.toMillis(),
                SESSION.toMillis());
        assertThat(cutOff.currentSessionId()).as("the same session").isEqualTo(session);
        assertThat(after).isLessThan(SESSION);
    }

    /** The lock nodes of {@code resource}: the holder's and the waiters'. */
    private static int nodes(ZooKeeperLock lock, String resource) {
        try {
            return lock.client()
                    .getChildren()
                    .forPath(ZooKeeperLock.DEFAULT_BASE_PATH + "/" + resource)
                    .size();
        } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
            return 0;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
