package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.LockHolder;
import io.quorumlock.testkit.TestTime;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ZooKeeperLock} beside Curator's own {@link InterProcessMutex} on one real ZooKeeper
 * server, as during a rolling migration from one to the other: a mutex on the path {@code
 * <basePath>/<resource>} and the lock of {@code resource} are one queue of lock nodes, so each
 * waits for the other's holder and takes the lock at its release.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CuratorMutexIT extends BesideCurator {

    private static final String RESOURCE = "invoices";
    private static final String PATH = ZooKeeperLock.DEFAULT_BASE_PATH + "/" + RESOURCE;

    @Test
    void whileCuratorsMutexHoldsThePathTheLockIsHeldAndTakenAtItsRelease() throws Exception {
        InterProcessMutex mutex = new InterProcessMutex(curator, PATH);
        mutex.acquire();

        assertThat(lock.tryAcquire(RESOURCE, TTL))
                .as("one attempt while the mutex holds")
                .isEmpty();
        assertThat(lock.holder(RESOURCE))
                .as("the mutex's node, named by its data")
                .hasValueSatisfying(holder -> assertThat(holder.name()).isEqualTo(CURATOR_DATA));

        CompletableFuture<FencedLease> waiter =
                CompletableFuture.supplyAsync(() -> lock.acquire(RESOURCE, TTL, WAIT), threads);
        TestTime.await(WAIT, () -> lockNodes() == 2, "the lock's node to queue behind the mutex's");
        assertThat(waiter).isNotDone();

        mutex.release();
        try (FencedLease lease = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(lock.holder(RESOURCE)).contains(new LockHolder(HOLDER, OptionalLong.of(lease.fencingToken())));
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
