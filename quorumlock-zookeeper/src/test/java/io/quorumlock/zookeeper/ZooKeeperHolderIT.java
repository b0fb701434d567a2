package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.FencedLease;
import io.quorumlock.LockHolder;
import io.quorumlock.QuorumlockException;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link ZooKeeperLock#holder}: the first lock node of the queue, on one real ZooKeeper server. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ZooKeeperHolderIT {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration SESSION = Duration.ofSeconds(4);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(10));

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

    private ZooKeeperLock lock(String holder) {
        return lock(holder, server.getConnectString());
    }

    private ZooKeeperLock lock(String holder, String connectString) {
        ZooKeeperLock lock = ZooKeeperLock.builder()
                .connectString(connectString)
                .sessionTimeout(SESSION)
                .connectionTimeout(SESSION.dividedBy(2))
                .holder(holder)
                .build();
        locks.add(lock);
        return lock;
    }

    private static int contenders(ZooKeeperLock lock, String resource) {
        try {
            String dir = ZooKeeperLock.DEFAULT_BASE_PATH + "/" + resource;
            return lock.client().checkExists().forPath(dir) == null
                    ? 0
                    : lock.client().getChildren().forPath(dir).size();
        } catch (Exception e) {
            return -1;
        }
    }

    @Test
    void freeThenTheHolderWithItsTokenThenFreeAfterTheRelease() {
        ZooKeeperLock billing = lock("billing-worker-1");
        ZooKeeperLock observer = lock("observer");
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
    void aWaiterIsUndisturbedAndAnExpiredHoldersSuccessorIsTheHolder() throws Exception {
        ZooKeeperLock billing = lock("billing-worker-1");
        ZooKeeperLock waiting = lock("billing-worker-2");
        ZooKeeperLock observer = lock("observer");
        FencedLease held = billing.acquire("expiry", TTL, WAIT);
        CompletableFuture<FencedLease> waiter =
                CompletableFuture.supplyAsync(() -> waiting.acquire("expiry", TTL, Duration.ofSeconds(30)), executor);
        TestTime.await(WAIT, () -> contenders(observer, "expiry") == 2, "the waiter to queue");
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
    void aLockNodeWhoseDataIsNoHolderNameIsAnUnnamedHolder() throws Exception {
        ZooKeeperLock observer = lock("observer");
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
    void noEnsembleIsAnOutageWithinTheConnectionTimeout() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort(); // closed again: nothing listens there
        }
        ZooKeeperLock nowhere = lock("observer", "127.0.0.1:" + port);
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
