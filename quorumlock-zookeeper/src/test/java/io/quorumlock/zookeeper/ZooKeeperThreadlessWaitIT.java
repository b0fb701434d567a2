package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.DistributedReadWriteLock;
import io.quorumlock.DistributedSemaphore;
import io.quorumlock.FencedLease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.WaitingThreads;
import io.quorumlock.testkit.ZooKeeperServers;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ZooKeeper's {@code acquireAsync} waits in the queue with no thread, on whatever Java runs it
 * (these tests run on the build's Java 17): waiters on many resources, semaphores or read-write
 * locks add no thread per waiter; a cancelled wait deletes its node; a wait that passes, or a
 * lock closed meanwhile, ends the future; a wait for a lost connection goes on once it is back.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ZooKeeperThreadlessWaitIT {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperThreadlessWaitIT.class);

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration SESSION = Duration.ofSeconds(10);
    private static final Duration LONG_WAIT = Duration.ofSeconds(90);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(20));

    @TempDir
    static Path dataDir;

    private static TestingServer server;
    private static CuratorFramework reader;

    private final List<ZooKeeperLock> locks = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        server = ZooKeeperServers.server(dataDir);
        reader = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
        reader.start();
    }

    @AfterAll
    static void stop() throws Exception {
        reader.close();
        server.close();
    }

    @AfterEach
    void close() {
        locks.forEach(ZooKeeperLock::close);
    }

    private ZooKeeperLock lock(String connectString) {
        ZooKeeperLock lock = TestLocks.lock(connectString, SESSION);
        locks.add(lock);
        return lock;
    }

    private ZooKeeperLock lock() {
        return lock(server.getConnectString());
    }

    private static int threads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }

    /** How many contenders' nodes the queue of {@code resource} has. */
    private static int queued(String resource) {
        try {
            String dir = ZooKeeperLock.DEFAULT_BASE_PATH + "/" + resource;
            return reader.checkExists().forPath(dir) == null
                    ? 0
                    : reader.getChildren().forPath(dir).size();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void waitersOnManyResourcesHoldNoThreadEachAndAreAllGrantedOnRelease() throws Exception {
        int resources = 200;
        ZooKeeperLock holder = lock();
        ZooKeeperLock waiters = lock();
        List<FencedLease> held = new ArrayList<>();
        for (int r = 0; r < resources; r++) {
            held.add(holder.acquire("many-" + r, TTL, Duration.ZERO));
        }
        List<FencedLease> granted = waitWithoutThreads(
                resources + " resources",
                held,
                waiters,
                () -> IntStream.range(0, resources)
                        .mapToObj(r -> waiters.acquireAsync("many-" + r, TTL, LONG_WAIT))
                        .collect(Collectors.toList()),
                () -> IntStream.range(0, resources).allMatch(r -> queued("many-" + r) == 2));
        for (int r = 0; r < resources; r++) {
            assertThat(granted.get(r).fencingToken())
                    .as("the waiter's token on many-%d", r)
                    .isGreaterThan(held.get(r).fencingToken());
        }
        assertThat(IntStream.range(0, resources).allMatch(r -> queued("many-" + r) == 0))
                .as("every queue empty once released")
                .isTrue();
    }

    @Test
    void waitersOnManySemaphoresHoldNoThreadEachAndAreAllGrantedOnRelease() throws Exception {
        int semaphores = 60;
        ZooKeeperLock holder = lock();
        ZooKeeperLock waiters = lock();
        List<FencedLease> held = new ArrayList<>();
        List<DistributedSemaphore<FencedLease>> waited = new ArrayList<>();
        for (int s = 0; s < semaphores; s++) {
            DistributedSemaphore<FencedLease> semaphore = DistributedSemaphore.of(holder, "backups-" + s, 2);
            held.add(semaphore.acquire(TTL, Duration.ZERO));
            held.add(semaphore.acquire(TTL, Duration.ZERO));
            waited.add(DistributedSemaphore.of(waiters, "backups-" + s, 2));
        }
        // Each semaphore's waiter waits on both permits at once: a node in each permit's queue.
        waitWithoutThreads(
                semaphores + " semaphores of 2 permits",
                held,
                waiters,
                () -> waited.stream().map(w -> w.acquireAsync(TTL, LONG_WAIT)).collect(Collectors.toList()),
                () -> IntStream.range(0, semaphores)
                        .allMatch(s -> queued("backups-" + s + "#1") == 2 && queued("backups-" + s + "#2") == 2));
    }

    @Test
    void readersAndWritersOfManyReadWriteLocksHoldNoThreadEachAndAreAllGrantedOnRelease() throws Exception {
        int locks = 40;
        ZooKeeperLock holder = lock();
        ZooKeeperLock waiters = lock();
        List<FencedLease> held = new ArrayList<>();
        List<DistributedReadWriteLock<FencedLease>> waited = new ArrayList<>();
        for (int l = 0; l < locks; l++) {
            held.add(DistributedReadWriteLock.of(holder, "catalog-" + l, 2).acquireWrite(TTL, Duration.ZERO));
            waited.add(DistributedReadWriteLock.of(waiters, "catalog-" + l, 2));
        }
        // Even locks get a reader, waiting for a permit the writer holds; odd ones a writer.
        waitWithoutThreads(
                locks + " read-write locks, half readers and half writers",
                held,
                waiters,
                () -> IntStream.range(0, locks)
                        .mapToObj(l -> l % 2 == 0
                                ? waited.get(l).acquireReadAsync(TTL, LONG_WAIT)
                                : waited.get(l).acquireWriteAsync(TTL, LONG_WAIT))
                        .collect(Collectors.toList()),
                () -> IntStream.range(0, locks)
                        .allMatch(l -> l % 2 == 0
                                ? queued("catalog-" + l + "#read#1") == 2
                                : queued("catalog-" + l + "#write") == 2));
    }

    /**
     * Asks for leases on what {@code held} holds, with the futures {@code ask} gives, waits until
     * {@code waiting} says they all wait in the queues, and checks that no thread per waiter was
     * added meanwhile; then releases the holds and takes every lease, which it returns released.
     */
    private List<FencedLease> waitWithoutThreads(
            String what,
            List<FencedLease> held,
            ZooKeeperLock waiters,
            Supplier<List<CompletableFuture<FencedLease>>> ask,
            BooleanSupplier waiting)
            throws Exception {
        waiters.acquireAsync("warm-up", TTL, WAIT)
                .get(WAIT.toMillis(), TimeUnit.MILLISECONDS)
                .release();
        return WaitingThreads.grantedWithoutThreadEach(
                what, ask, waiting, () -> held.forEach(FencedLease::release), FencedLease::release);
    }

    @Test
    void aCancelledWaitDeletesItsNodeAndTakesNoLease() throws Exception {
        ZooKeeperLock holder = lock();
        ZooKeeperLock waiter = lock();
        FencedLease held = holder.acquire("cancelled", TTL, Duration.ZERO);
        CompletableFuture<FencedLease> waiting = waiter.acquireAsync("cancelled", TTL, LONG_WAIT);
        TestTime.await(WAIT, () -> queued("cancelled") == 2, "the waiter in the queue");

        assertThat(waiting.cancel(true)).isTrue();
        TestTime.await(WAIT, () -> queued("cancelled") == 1, "the waiter's node deleted");
        held.release();
        // The next contender is not held up by the cancelled one, which took nothing.
        try (FencedLease next = holder.acquire("cancelled", TTL, Duration.ZERO)) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
        assertThatThrownBy(waiting::join).isInstanceOf(CancellationException.class);
    }

    @Test
    void aWaitThatPassesEndsRefusedNamingTheHolderAndLeavesTheQueue() throws Exception {
        ZooKeeperLock holder = lock();
        ZooKeeperLock waiter = lock();
        try (FencedLease held = holder.acquire("passes", TTL, Duration.ZERO)) {
            Duration maxWait = Duration.ofMillis(700);
            long start = System.nanoTime();
            CompletableFuture<FencedLease> waiting = waiter.acquireAsync("passes", TTL, maxWait);
            assertThatThrownBy(() -> waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(LockUnavailableException.class)
                    .hasMessageContaining("lock node");
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertThat(took)
                    .isGreaterThanOrEqualTo(maxWait)
                    .isLessThan(maxWait.plus(AcquireLoop.overrun(SESSION.dividedBy(2)))
                            .plus(TestTime.scaled(Duration.ofMillis(500))));
            TestTime.await(WAIT, () -> queued("passes") == 1, "the waiter's node deleted");
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void closingTheLockEndsItsWaitsAtOnce() throws Exception {
        ZooKeeperLock holder = lock();
        ZooKeeperLock waiter = lock();
        try (FencedLease held = holder.acquire("closed", TTL, Duration.ZERO)) {
            CompletableFuture<FencedLease> waiting = waiter.acquireAsync("closed", TTL, LONG_WAIT);
            TestTime.await(WAIT, () -> queued("closed") == 2, "the waiter in the queue");
            waiter.close();
            assertThatThrownBy(() -> waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class);
            TestTime.await(WAIT, () -> queued("closed") == 1, "the waiter's node gone with its session");
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void aWaitForTheConnectionGoesOnOnceItIsBack() throws Exception {
        try (FaultProxy proxy = FaultProxy.start("127.0.0.1", server.getPort())) {
            ZooKeeperLock waiter = lock(proxy.address());
            waiter.acquire("warm-up", TTL, WAIT).release();
            proxy.refuseConnections().reset();
            TestTime.await(WAIT, () -> !waiter.isConnected(), "the connection lost");
            CompletableFuture<FencedLease> waiting = waiter.acquireAsync("reconnects", TTL, LONG_WAIT);
            assertThat(waiting).isNotDone();
            proxy.acceptConnections();
            try (FencedLease lease = waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                assertThat(lease.isValid()).isTrue();
                assertThat(queued("reconnects")).isEqualTo(1);
            }
        }
    }
}
