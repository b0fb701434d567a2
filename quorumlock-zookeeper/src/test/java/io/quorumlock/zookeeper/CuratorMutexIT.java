package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.LockHolder;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ZooKeeperLock} beside Curator's own {@link InterProcessMutex} on one real ZooKeeper
 * server, as during a rolling migration from one to the other: a mutex on the path {@code
 * <basePath>/<resource>} and the lock of {@code resource} are one queue of lock nodes, so each
 * waits for the other's holder and takes the lock at its release.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CuratorMutexIT {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration SESSION = Duration.ofSeconds(4);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(10));
    private static final String RESOURCE = "invoices";
    /** Where Curator's mutex of the resource lives: the lock's default base path and the resource. */
    private static final String PATH = ZooKeeperLock.DEFAULT_BASE_PATH + "/" + RESOURCE;

    @TempDir
    Path dataDir;

    private TestingServer server;
    private CuratorFramework curator;
    private ZooKeeperLock lock;
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeEach
    void start() throws Exception {
        server = ZooKeeperServers.server(dataDir);
        // The data of Curator's lock nodes: its client's IP address unless set, here a name to find.
        curator = CuratorFrameworkFactory.builder()
                .connectString(server.getConnectString())
                .retryPolicy(new RetryOneTime(100))
                .sessionTimeoutMs((int) SESSION.toMillis())
                .defaultData("billing-v1".getBytes(StandardCharsets.UTF_8))
                .build();
        curator.start();
        assertThat(curator.blockUntilConnected((int) WAIT.toSeconds() + 1, TimeUnit.SECONDS))
                .isTrue();
        lock = ZooKeeperLock.builder()
                .connectString(server.getConnectString())
                .sessionTimeout(SESSION)
                .holder("billing-v2")
                .build();
    }

    @AfterEach
    void stop() throws Exception {
        threads.shutdownNow();
        lock.close();
        curator.close();
        server.close();
    }

    @Test
    void whileCuratorsMutexHoldsThePathTheLockIsHeldAndTakenAtItsRelease() throws Exception {
        InterProcessMutex mutex = new InterProcessMutex(curator, PATH);
        mutex.acquire();

        assertThat(lock.tryAcquire(RESOURCE, TTL))
                .as("one attempt while the mutex holds")
                .isEmpty();
        assertThat(lock.holder(RESOURCE))
                .as("the mutex's node, named by its data")
                .hasValueSatisfying(holder -> assertThat(holder.name()).isEqualTo("billing-v1"));

        CompletableFuture<FencedLease> waiter =
                CompletableFuture.supplyAsync(() -> lock.acquire(RESOURCE, TTL, WAIT), threads);
        TestTime.await(WAIT, () -> lockNodes() == 2, "the lock's node to queue behind the mutex's");
        assertThat(waiter).isNotDone();

        mutex.release();
        try (FencedLease lease = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(lock.holder(RESOURCE))
                    .contains(new LockHolder("billing-v2", OptionalLong.of(lease.fencingToken())));
        }
    }

    @Test
    void whileTheLockHoldsCuratorsMutexWaitsAndTakesItAtTheRelease() throws Exception {
        FencedLease lease = lock.acquire(RESOURCE, TTL, WAIT);
        InterProcessMutex mutex = new InterProcessMutex(curator, PATH);
        assertThat(mutex.acquire(100, TimeUnit.MILLISECONDS))
                .as("the mutex while the lock holds")
                .isFalse();

        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(
                () -> {
                    try {
                        boolean got = mutex.acquire(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                        if (got) {
                            mutex.release();
                        }
                        return got;
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                },
                threads);
        TestTime.await(WAIT, () -> lockNodes() == 2, "the mutex's node to queue behind the lock's");
        assertThat(waiter).isNotDone();

        lease.release();
        assertThat(waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                .as("the mutex, taken at the lock's release")
                .isTrue();
        try (FencedLease next = lock.acquire(RESOURCE, TTL, WAIT)) {
            assertThat(next.fencingToken())
                    .as("the tokens still grow across the mutex's holds")
                    .isGreaterThan(lease.fencingToken());
        }
    }

    /** How many lock nodes, of the mutex or of the lock, are queued on the resource's path. */
    private int lockNodes() {
        try {
            return curator.getChildren().forPath(PATH).size();
        } catch (KeeperException.NoNodeException e) {
            return 0; // never made, or an empty container the server has removed
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
