package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.FencedLease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockHolder;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.LeaseTimes;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.KillSession;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fenced ZooKeeper lock against one real ZooKeeper server: exclusion, tokens, session loss. */
class ZooKeeperLockIT {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration SESSION = Duration.ofSeconds(4);
    private static final Duration WAIT = Duration.ofSeconds(10);

    static {
        // The server deletes empty lock containers every 100 ms instead of every minute, so the
        // tests meet the cleanup (and its race with a new contender) as production does, only sooner.
        System.setProperty("znode.container.checkIntervalMs", "100");
    }

    @TempDir
    static Path dataDir;

    private static TestingServer server;

    private final List<ZooKeeperLock> locks = new ArrayList<>();
    private final ExecutorService executor = Executors.newCachedThreadPool();

    @BeforeAll
    static void startServer() throws Exception {
        server = ZooKeeperServers.server(dataDir);
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void closeLocks() throws InterruptedException {
        executor.shutdownNow();
        locks.forEach(ZooKeeperLock::close);
        assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private ZooKeeperLock newLock() {
        return newLock(SESSION);
    }

    private ZooKeeperLock newLock(Duration sessionTimeout) {
        ZooKeeperLock lock = TestLocks.lock(server.getConnectString(), sessionTimeout);
        locks.add(lock);
        return lock;
    }

    private static int contenders(ZooKeeperLock lock, String resource) throws Exception {
        String dir = ZooKeeperLock.DEFAULT_BASE_PATH + "/" + resource;
        try {
            return lock.client().getChildren().forPath(dir).size();
        } catch (KeeperException.NoNodeException e) {
            return 0; // never made, or an empty container the server has removed
        }
    }

    private void awaitContenders(ZooKeeperLock lock, String resource, int count) {
        TestTime.await(
                Duration.ofSeconds(5),
                () -> {
                    try {
                        return contenders(lock, resource) == count;
                    } catch (Exception e) {
                        return false;
                    }
                },
                count + " contenders for '" + resource + "'");
    }

    /** A job that checks once whether it may run, right after building its lock (a cron job's first call). */
    @Test
    void aMaxWaitOfZeroOnALockJustBuiltWaitsForTheConnectionAndGetsAFreeLock() {
        ZooKeeperLock cold = newLock();
        try (FencedLease lease = cold.acquire("cold-start", TTL, Duration.ZERO)) {
            assertThat(lease.isValid()).isTrue();
        }
    }

    @Test
    void oneHolderAtATimeAndReleaseLetsTheNextIn() throws Exception {
        ZooKeeperLock a = newLock();
        ZooKeeperLock b = newLock();

        FencedLease first = a.acquire("exclusion", TTL, WAIT);
        assertThat(first.isValid()).isTrue();
        assertThat(first.resource()).isEqualTo("exclusion");
        assertThat(first.validity()).as("the negotiated session timeout").isEqualTo(SESSION);
        assertThat(first.remaining())
                .as("counted from the grant's read, less the drift allowance")
                .isPositive()
                .isLessThanOrEqualTo(SESSION.minusNanos(LeaseTimes.driftNanos(SESSION.toNanos())));
        assertThat(b.tryAcquire("exclusion", TTL)).isEmpty();
        assertThat(a.tryAcquire("exclusion", TTL)).as("not reentrant").isEmpty();

        assertThatThrownBy(() -> b.acquire("exclusion", TTL, Duration.ofMillis(200)))
                .isInstanceOfSatisfying(LockUnavailableException.class, e -> {
                    assertThat(e.resource()).isEqualTo("exclusion");
                    assertThat(e.lastAttempt()).singleElement().satisfies(outcome -> {
                        assertThat(outcome.kind()).isEqualTo(ServerAnswer.Kind.HELD_BY_OTHER);
                        assertThat(outcome.server()).startsWith("zookeeper://127.0.0.1:");
                        assertThat(outcome.detail())
                                .contains(
                                        "holder ",
                                        "@",
                                        "token " + ZooKeeperLease.hex(first.fencingToken()),
                                        "0 other contenders waiting");
                    });
                    // One authority, no votes: the message names the holder as its lock node's data does.
                    assertThat(e.getMessage())
                            .matches("could not acquire 'exclusion' within \\d+ ms \\(1 attempt\\): held by "
                                    + Pattern.quote(
                                            ManagementFactory.getRuntimeMXBean().getName())
                                    + " \\(lock node _c_[0-9a-f-]+-lock-\\d{10}, session 0x[0-9a-f]+, token "
                                    + ZooKeeperLease.hex(first.fencingToken())
                                    + "; 0 other contenders waiting\\) on zookeeper://127\\.0\\.0\\.1:\\d+"
                                    + ZooKeeperLock.DEFAULT_BASE_PATH
                                    // both clients are of this process, whose name the lock nodes hold
                                    + "\\. Leases are not reentrant: .* use asLock\\(resource, ttl\\).*")
                            .doesNotContain("votes");
                });
        // Failed attempts leave no node: each deletes its own as it returns, in the background
        // (guaranteed by Curator), so the holder's is soon the only one.
        awaitContenders(a, "exclusion", 1);

        CompletableFuture<FencedLease> waiting =
                CompletableFuture.supplyAsync(() -> b.acquire("exclusion", TTL, WAIT), executor);
        awaitContenders(a, "exclusion", 2);
        assertThat(waiting).isNotDone();

        first.release();
        FencedLease second = waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        assertThat(second.isValid()).isTrue();
        assertThat(first.isValid()).isFalse();
        assertThat(first.remaining()).isZero();
        assertThatCode(first::release).as("release is idempotent").doesNotThrowAnyException();
        assertThatThrownBy(() -> first.extend(TTL)).isInstanceOf(IllegalStateException.class);
        assertThat(second.extend(TTL))
                .as("nothing to extend: the session keeps it")
                .isTrue();
        assertThat(first.lost()).as("a released lease is never lost").isNotDone();

        second.close();
        assertThat(a.tryAcquire("exclusion", TTL)).hasValueSatisfying(FencedLease::release);
    }

    @Test
    void neverTwoHoldersAndTokensIncreaseInGrantOrder() throws Exception {
        List<ZooKeeperLock> clients = List.of(newLock(), newLock(), newLock());
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 6; t++) {
            ZooKeeperLock lock = clients.get(t % clients.size());
            workers.add(executor.submit(() -> {
                for (int i = 0; i < 10; i++) {
                    try (FencedLease lease = lock.acquire("contended", TTL, WAIT)) {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        tokens.add(lease.fencingToken());
                        Thread.yield();
                        inside.decrementAndGet();
                    }
                }
                return null;
            }));
        }
        for (Future<?> worker : workers) {
            worker.get(30, TimeUnit.SECONDS);
        }
        assertThat(overlaps).hasValue(0);
        assertThat(tokens).hasSize(60).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
    }

    @Test
    void tokensIncreaseAcrossContainerCleanupAndClientRestart() throws Exception {
        List<ZooKeeperLock> clients = new ArrayList<>(List.of(newLock(), newLock(), newLock()));
        List<Long> tokens = new ArrayList<>();
        List<Long> sequences = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            grant(clients.get(i % 3), tokens, sequences);
        }
        // The server may already have cleaned the container up between two of these grants (it
        // empties after every release), so the suffixes so far prove nothing; the forced cleanup
        // below does.

        // ZooKeeper deletes the empty container: the node sequence starts again from zero.
        String dir = ZooKeeperLock.DEFAULT_BASE_PATH + "/tokens";
        CuratorFramework admin = clients.get(0).client();
        TestTime.await(
                Duration.ofSeconds(10),
                () -> {
                    try {
                        return admin.checkExists().forPath(dir) == null;
                    } catch (Exception e) {
                        return false;
                    }
                },
                "the server to delete the empty container " + dir);
        for (int i = 0; i < 3; i++) {
            grant(clients.get(i % 3), tokens, sequences);
        }
        assertThat(sequences.get(9))
                .as("the suffix restarted: it cannot be the token")
                .isZero();
        assertThat(tokens.get(9)).as("while the token kept growing").isGreaterThan(tokens.get(8));

        // A client restart: a new process would have a new session and nothing else in common.
        clients.remove(0).close();
        clients.add(newLock());
        for (int i = 0; i < 3; i++) {
            grant(clients.get(i % 3), tokens, sequences);
        }
        assertThat(tokens).hasSize(15).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
    }

    private static void grant(ZooKeeperLock lock, List<Long> tokens, List<Long> sequences) {
        try (FencedLease lease = lock.acquire("tokens", TTL, WAIT)) {
            tokens.add(lease.fencingToken());
            String node = ((ZooKeeperLease) lease).node();
            sequences.add(LockQueue.LOCK.sequence(node.substring(node.lastIndexOf('/') + 1)));
        }
    }

    /** Scenario 5, ZooKeeper half: the ensemble expires the holder's session. */
    @Test
    void sessionExpiryLosesTheLeaseAndTheNextHolderGetsALargerToken() throws Exception {
        ZooKeeperLock a = newLock();
        ZooKeeperLock b = newLock();
        FencedLease held = a.acquire("expiry", TTL, WAIT);
        CompletableFuture<FencedLease> waiting =
                CompletableFuture.supplyAsync(() -> b.acquire("expiry", TTL, Duration.ofSeconds(20)), executor);
        awaitContenders(a, "expiry", 2);

        ZooKeeperServers.expireSession(a.client(), server.getConnectString());

        LeaseLostException lost = held.lost().get(10, TimeUnit.SECONDS);
        assertThat(lost.resource()).isEqualTo("expiry");
        assertThat(lost.getMessage())
                .contains("lease on 'expiry' lost", "session", ZooKeeperLease.hex(held.fencingToken()));
        assertThat(held.isValid()).isFalse();
        assertThat(held.remaining()).isZero();

        FencedLease next = waiting.get(10, TimeUnit.SECONDS);
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(next.isValid()).isTrue();
        assertThatCode(held::release).as("release after loss").doesNotThrowAnyException();
        assertThat(next.isValid())
                .as("A's late release does not touch B's node")
                .isTrue();

        // A's client goes on with a new session.
        next.release();
        try (FencedLease again = a.acquire("expiry", TTL, WAIT)) {
            assertThat(again.fencingToken()).isGreaterThan(next.fencingToken());
        }
    }

    /** The client itself declares its session dead (curator-test's KillSession); the ensemble follows later. */
    @Test
    void clientSideSessionKillLosesTheLeaseAtOnce() throws Exception {
        ZooKeeperLock a = newLock(Duration.ofSeconds(2));
        ZooKeeperLock b = newLock();
        FencedLease held = a.acquire("killed", TTL, WAIT);

        KillSession.kill(a.client().getZookeeperClient().getZooKeeper());

        assertThat(held.lost().get(5, TimeUnit.SECONDS).getMessage()).contains("session");
        assertThat(held.isValid()).isFalse();
        // The ensemble still holds the old session's node until that session times out (2 s).
        try (FencedLease next = b.acquire("killed", TTL, WAIT)) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
    }

    @Test
    void withLeaseHandsTheWorkItsFencingToken() throws Exception {
        ZooKeeperLock a = newLock();
        long first = a.withLease("fenced-work", TTL, WAIT, FencedLease::fencingToken);
        long second = a.withLease("fenced-work", TTL, WAIT, lease -> {
            assertThat(contenders(a, "fenced-work")).isEqualTo(1);
            return lease.fencingToken();
        });
        assertThat(second).isGreaterThan(first);
        assertThat(contenders(a, "fenced-work")).isZero();
    }

    @Test
    void withLockInterruptsTheWorkAndThrowsWhenTheSessionIsLost() throws Exception {
        ZooKeeperLock a = newLock();
        assertThat(a.withLock("work", TTL, WAIT, () -> "done")).isEqualTo("done");

        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        Future<String> running = executor.submit(() -> a.withLock("work", TTL, WAIT, () -> {
            started.countDown();
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                interrupted.set(true);
                throw e;
            }
            return "never";
        }));
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        ZooKeeperServers.expireSession(a.client(), server.getConnectString());

        assertThatThrownBy(() -> running.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("session");
        assertThat(interrupted).isTrue();
        try (FencedLease after = newLock().acquire("work", TTL, WAIT)) {
            assertThat(after.isValid()).isTrue();
        }
    }

    @Test
    void deletingTheLockNodeLosesTheLease() throws Exception {
        ZooKeeperLock a = newLock();
        FencedLease held = a.acquire("deleted", TTL, WAIT);
        a.client().delete().forPath(((ZooKeeperLease) held).node());
        assertThat(held.lost().get(5, TimeUnit.SECONDS).getMessage()).contains("was deleted");
        assertThat(held.isValid()).isFalse();
    }

    /**
     * The holder's watch is first set on the queue: another contender coming and going fires it,
     * and the holder then watches its own node, so its deletion is still reported by the watch,
     * not only by the next heartbeat ("was gone").
     */
    @Test
    void deletingTheLockNodeAfterAnotherContenderCameLosesTheLease() throws Exception {
        ZooKeeperLock a = newLock();
        ZooKeeperLock b = newLock();
        FencedLease held = a.acquire("deleted-later", TTL, WAIT);
        assertThat(b.tryAcquire("deleted-later", TTL)).isEmpty();
        awaitContenders(a, "deleted-later", 1);
        a.client().delete().forPath(((ZooKeeperLease) held).node());
        assertThat(held.lost()
                        .get(TestTime.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS)
                        .getMessage())
                .contains("was deleted");
        assertThat(held.isValid()).isFalse();
    }

    @Test
    void closingTheLockLosesItsLeasesAndFreesTheLock() throws Exception {
        ZooKeeperLock a = newLock();
        ZooKeeperLock b = newLock();
        FencedLease held = a.acquire("closing", TTL, WAIT);
        a.close();
        assertThat(held.lost()).isCompletedWithValueMatching(e -> e.getMessage().contains("was closed"));
        assertThatCode(held::release).doesNotThrowAnyException();
        assertThatThrownBy(() -> a.tryAcquire("closing", TTL)).isInstanceOf(IllegalStateException.class);
        try (FencedLease next = b.acquire("closing", TTL, WAIT)) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
    }

    @Test
    void closingTheLockEndsItsWaitingAcquireAndLeavesNoNode() throws Exception {
        ZooKeeperLock holding = newLock();
        ZooKeeperLock closing = newLock();
        FencedLease held = holding.acquire("closing-waiter", TTL, WAIT);
        Future<FencedLease> waiting =
                executor.submit(() -> closing.acquire("closing-waiter", TTL, Duration.ofSeconds(30)));
        awaitContenders(holding, "closing-waiter", 2);

        closing.close();
        long closed = System.nanoTime();
        Throwable ended = catchThrowableOfType(ExecutionException.class, () -> waiting.get(20, TimeUnit.SECONDS))
                .getCause();
        long afterClose = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closed);
        assertThat(ended).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(afterClose).isLessThan(TestTime.scaled(Duration.ofSeconds(1)).toMillis());
        awaitContenders(holding, "closing-waiter", 1);
        held.release();
    }

    @Test
    void aWaitingAcquireOfALockClosedOverASuppliedClientIsNotGrantedLater() throws Exception {
        ZooKeeperLock holding = newLock();
        try (CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(server.getConnectString())
                .sessionTimeoutMs(4000)
                .retryPolicy(new RetryOneTime(100))
                .build()) {
            client.start();
            ZooKeeperLock closing = ZooKeeperLock.builder().client(client).build();
            FencedLease held = holding.acquire("closing-shared", TTL, WAIT);
            Future<FencedLease> waiting =
                    executor.submit(() -> closing.acquire("closing-shared", TTL, Duration.ofSeconds(30)));
            awaitContenders(holding, "closing-shared", 2);

            closing.close();
            held.release(); // were the waiter still queued, it would be next now
            Throwable ended = catchThrowableOfType(ExecutionException.class, () -> waiting.get(20, TimeUnit.SECONDS))
                    .getCause();
            assertThat(ended).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            awaitContenders(holding, "closing-shared", 0);
        }
    }

    @Test
    void aHolderNodesDataIsShownOnlyWhenItIsAHolderName() throws Exception {
        ZooKeeperLock lock = newLock();
        String dir = ZooKeeperLock.DEFAULT_BASE_PATH + "/hostile-holder";
        // Another program's node in the lock's queue: 400 KB of data, with a line break and a terminal escape.
        byte[] data = ("billing-1\n\u001b[2J" + "x".repeat(400_000)).getBytes(StandardCharsets.UTF_8);
        try (CuratorFramework other = CuratorFrameworkFactory.builder()
                .connectString(server.getConnectString())
                .sessionTimeoutMs(4000)
                .retryPolicy(new RetryOneTime(100))
                .build()) {
            other.start();
            // Persistent parents. The server deletes an empty container node when it checks for
            // them (the lock's base path, from earlier tests, is one), and on a loaded machine that
            // check can fall between a parent's create and its child's: NoNode, tried again.
            for (int tries = 1; ; tries++) {
                try {
                    other.create()
                            .creatingParentsIfNeeded()
                            .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                            .forPath(dir + "/other-" + LockQueue.NODE_PREFIX, data);
                    break;
                } catch (KeeperException.NoNodeException e) {
                    if (tries == 10) {
                        throw e;
                    }
                }
            }

            LockUnavailableException refused = catchThrowableOfType(
                    LockUnavailableException.class, () -> lock.acquire("hostile-holder", TTL, Duration.ofMillis(300)));

            assertThat(refused).isNotNull();
            String evidence = refused.getMessage() + " " + refused.lastAttempt();
            assertThat(evidence.length())
                    .as(evidence.substring(0, Math.min(300, evidence.length())))
                    .isLessThan(2_000);
            assertThat(evidence).doesNotContain("\n", "\u001b", "xxxxxxxx");
            assertThat(refused.lastAttempt().get(0).detail()).contains("other-lock-", "not shown");
        }
    }

    @Test
    void sessionTimeoutIsWhatTheEnsembleGrantedAndTheLeaseLivesThatLongWhateverTheTtl() {
        // The kit's server allows sessions from 200 ms (2 ticks) to 30 s.
        ZooKeeperLock granted = newLock(Duration.ofSeconds(3));
        ZooKeeperLock clamped = newLock(Duration.ofSeconds(60));

        assertThat(granted.sessionTimeout()).contains(Duration.ofSeconds(3));
        assertThat(clamped.sessionTimeout()).contains(Duration.ofSeconds(30));
        try (FencedLease lease = granted.acquire("session-timeout", Duration.ofMinutes(5), WAIT)) {
            assertThat(lease.validity()).isEqualTo(Duration.ofSeconds(3));
        }
    }

    @Test
    void aSuppliedClientIsUsedAndLeftOpen() throws Exception {
        try (CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(server.getConnectString())
                .namespace("app")
                .sessionTimeoutMs(4000)
                .retryPolicy(new RetryOneTime(100))
                .build()) {
            client.start();
            long token;
            try (ZooKeeperLock lock = ZooKeeperLock.builder().client(client).build()) {
                assertThat(lock.ensemble()).endsWith("/app" + ZooKeeperLock.DEFAULT_BASE_PATH);
                try (FencedLease lease = lock.acquire("supplied", TTL, WAIT)) {
                    token = lease.fencingToken();
                    assertThat(client.checkExists().forPath(ZooKeeperLock.DEFAULT_BASE_PATH + "/supplied"))
                            .isNotNull();
                }
            }
            assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
            assertThat(client.checkExists().forPath("/"))
                    .as("the client still works")
                    .isNotNull();
            assertThat(token).isPositive();
        }
    }

    // ---- holder(resource) ------------------------------------------------------------------------

    private ZooKeeperLock holderLock(String holder) {
        return holderLock(holder, server.getConnectString());
    }

    private ZooKeeperLock holderLock(String holder, String connectString) {
        ZooKeeperLock lock = ZooKeeperLock.builder()
                .connectString(connectString)
                .sessionTimeout(SESSION)
                .connectTimeout(SESSION.dividedBy(2))
                .holder(holder)
                .build();
        locks.add(lock);
        return lock;
    }

    @Test
    void holderIsTheFirstLockNodeWithItsTokenAndFreeAfterTheRelease() {
        ZooKeeperLock billing = holderLock("billing-worker-1");
        ZooKeeperLock observer = holderLock("observer");
        assertThat(observer.holder("report")).as("never queued").isEmpty();

        FencedLease lease = billing.acquire("report", TTL, WAIT);
        assertThat(observer.holder("report"))
                .contains(new LockHolder("billing-worker-1", OptionalLong.of(lease.fencingToken())));
        assertThat(billing.holder("report"))
                .contains(new LockHolder("billing-worker-1", OptionalLong.of(lease.fencingToken())));
        assertThat(observer.tryAcquire("report", TTL)).as("still held").isEmpty();
        lease.release();
        assertThat(observer.holder("report")).as("released").isEmpty();

        FencedLease next = observer.acquire("report", TTL, Duration.ZERO); // the reads took nothing
        assertThat(billing.holder("report").orElseThrow().name()).isEqualTo("observer");
        next.release();
    }

    @Test
    void holderDisturbsNoWaiterAndAnExpiredHoldersSuccessorIsTheHolder() throws Exception {
        ZooKeeperLock billing = holderLock("billing-worker-1");
        ZooKeeperLock waiting = holderLock("billing-worker-2");
        ZooKeeperLock observer = holderLock("observer");
        FencedLease held = billing.acquire("expiry", TTL, WAIT);
        CompletableFuture<FencedLease> waiter =
                CompletableFuture.supplyAsync(() -> waiting.acquire("expiry", TTL, Duration.ofSeconds(30)), executor);
        awaitContenders(observer, "expiry", 2);
        for (int i = 0; i < 10; i++) {
            assertThat(observer.holder("expiry").orElseThrow().fencingToken()).hasValue(held.fencingToken());
        }
        assertThat(waiter).isNotDone();
        assertThat(contenders(observer, "expiry"))
                .as("the reads queued nothing")
                .isEqualTo(2);

        ZooKeeperServers.expireSession(billing.client(), server.getConnectString()); // ended without a release

        FencedLease next = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(observer.holder("expiry"))
                .contains(new LockHolder("billing-worker-2", OptionalLong.of(next.fencingToken())));
        next.release();
        assertThat(observer.holder("expiry")).isEmpty();
    }

    @Test
    void holderOfALockNodeWhoseDataIsNoHolderNameIsUnnamed() throws Exception {
        ZooKeeperLock observer = holderLock("observer");
        String dir = ZooKeeperLock.DEFAULT_BASE_PATH + "/foreign";
        String node = observer.client()
                .create()
                .creatingParentContainersIfNeeded()
                .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(dir + "/lock-", "\u0000 not a name".getBytes(StandardCharsets.UTF_8));
        long czxid = observer.client().checkExists().forPath(node).getCzxid();
        assertThat(observer.holder("foreign")).contains(new LockHolder("", OptionalLong.of(czxid)));
    }

    @Test
    void holderWithoutAnEnsembleIsAnOutageWithinTheConnectTimeout() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort(); // closed again: nothing listens there
        }
        ZooKeeperLock nowhere = holderLock("observer", "127.0.0.1:" + port);
        long start = System.nanoTime();
        assertThatThrownBy(() -> nowhere.holder("r"))
                .isInstanceOf(QuorumlockException.class)
                .hasMessageContaining("could not tell who holds 'r'")
                .hasMessageContaining("no connection to the ensemble");
        // The connection timeout (2 s) and the overrun, with room for a busy machine.
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isLessThan(SESSION.dividedBy(2).plus(TestTime.scaled(Duration.ofSeconds(2))));
    }

    @Test
    void theHolderNameIsChecked() {
        assertThatThrownBy(() -> ZooKeeperLock.builder()
                        .connectString(server.getConnectString())
                        .holder("")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holder");
    }
}
