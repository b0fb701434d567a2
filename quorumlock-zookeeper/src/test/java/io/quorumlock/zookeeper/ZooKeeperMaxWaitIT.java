package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.FencedLease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.internal.AcquireLoop;
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

    @Test
    void anAcquireInterruptedWhileItsCreateIsUnansweredLeavesNoNode() throws Exception {
        ZooKeeperLock cutOff = newLock(proxy.address());
        ZooKeeperLock direct = newLock(server.getConnectString());
        cutOff.acquire("warm-up", TTL, Duration.ofSeconds(10)).release();
        long session = cutOff.currentSessionId();

        proxy.partition();
        CompletableFuture<Boolean> keptFlag = new CompletableFuture<>();
        Thread acquirer = refusedInThread(cutOff, "interrupted", Duration.ofSeconds(20), keptFlag);
        TestTime.await(Duration.ofSeconds(3), () -> inMethod(acquirer, "create"), "the create to be unanswered");
        acquirer.interrupt();
        assertThat(keptFlag.get(5, TimeUnit.SECONDS))
                .as("the interrupt flag kept")
                .isTrue();

        proxy.heal();
        // The create sent into the partition reaches the server now; its node must go, not live with the session.
        try (FencedLease lease = direct.acquire("interrupted", TTL, Duration.ofSeconds(3))) {
            assertThat(lease.isValid()).isTrue();
        }
        TestTime.await(Duration.ofSeconds(3), () -> nodes(direct, "interrupted") == 0, "no node left");
        assertThat(cutOff.currentSessionId()).as("the same session").isEqualTo(session);
    }

    @Test
    void anAcquireInterruptedWhileItReadsTheHolderKeepsTheInterruptFlag() throws Exception {
        ZooKeeperLock slow = newLock(proxy.address());
        ZooKeeperLock direct = newLock(server.getConnectString());
        slow.acquire("warm-up", TTL, Duration.ofSeconds(10)).release();
        FencedLease held = direct.acquire("held", TTL, Duration.ofSeconds(5));
        String dir = ZooKeeperLock.DEFAULT_BASE_PATH + "/held";
        String holderNode =
                dir + "/" + direct.client().getChildren().forPath(dir).get(0);
        // A holder's data that takes the slowed replies longer than the overrun to bring back.
        direct.client().setData().forPath(holderNode, new byte[400 * 1024]);
        proxy.bandwidth(FaultProxy.Direction.SERVER_TO_CLIENT, 1024 * 1024);

        CompletableFuture<Boolean> keptFlag = new CompletableFuture<>();
        Thread acquirer = refusedInThread(slow, "held", Duration.ofMillis(1500), keptFlag);
        TestTime.await(Duration.ofSeconds(5), () -> inMethod(acquirer, "heldBy"), "the read of the holder");
        acquirer.interrupt();
        assertThat(keptFlag.get(5, TimeUnit.SECONDS))
                .as("the interrupt flag kept")
                .isTrue();
        proxy.clearBandwidth();
        TestTime.await(Duration.ofSeconds(3), () -> nodes(direct, "held") == 1, "the given-up waiter's node to go");
        held.release();
    }

    @Test
    void closingTheLockEndsAnAcquireWhoseCreateIsUnanswered() throws Exception {
        ZooKeeperLock cutOff = newLock(proxy.address());
        cutOff.acquire("warm-up", TTL, Duration.ofSeconds(10)).release();

        proxy.partition();
        CompletableFuture<Throwable> ended = CompletableFuture.supplyAsync(() -> catchThrowableOfType(
                RuntimeException.class, () -> cutOff.acquire("closing", TTL, Duration.ofSeconds(20))));
        TestTime.await(
                Duration.ofSeconds(3),
                () -> Thread.getAllStackTraces().keySet().stream().anyMatch(t -> inMethod(t, "create")),
                "the create to be unanswered");
        long closing = System.nanoTime();
        // The client's close waits for the session's end through the partition; the acquire ends with it.
        cutOff.close();
        long closed = System.nanoTime();
        Throwable thrown = ended.get(30, TimeUnit.SECONDS);
        Duration after = Duration.ofNanos(System.nanoTime() - closed);
        log.info(
                "ZooKeeper: close() through a silent partition took {} ms; the pending acquire ended {} ms after it",
                (closed - closing) / 1_000_000,
                after.toMillis());
        assertThat(thrown).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(after).isLessThan(TestTime.scaled(Duration.ofSeconds(1)));
    }

    /**
     * Starts a thread that acquires {@code resource} and is refused: {@code keptFlag} then tells
     * whether the thread's interrupt flag is set.
     */
    private static Thread refusedInThread(
            ZooKeeperLock lock, String resource, Duration maxWait, CompletableFuture<Boolean> keptFlag) {
        Thread acquirer = new Thread(() -> {
            try {
                lock.acquire(resource, TTL, maxWait).release();
                keptFlag.completeExceptionally(new AssertionError("granted '" + resource + "'"));
            } catch (QuorumlockException e) {
                keptFlag.complete(Thread.currentThread().isInterrupted());
            } catch (RuntimeException e) {
                keptFlag.completeExceptionally(e);
            }
        });
        acquirer.start();
        return acquirer;
    }

    /** Whether {@code thread} is in a method {@code method} of {@link LockAttempts} now. */
    private static boolean inMethod(Thread thread, String method) {
        for (StackTraceElement frame : thread.getStackTrace()) {
            if (frame.getClassName().startsWith(LockAttempts.class.getPackageName() + ".")
                    && frame.getMethodName().equals(method)) {
                return true;
            }
        }
        return false;
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
