package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.quorumlock.FencedLease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A waiter in the lock's queue, watching the keys ahead of its own go: granted on the release of
 * the last of them, with no read; refused as soon as its own key goes; in the order of the queue;
 * and its watch cancelled whatever the outcome.
 */
class EtcdQueueWatchIT {

    private static final Duration TTL = Duration.ofSeconds(5);
    private static final Duration WAIT = Duration.ofSeconds(10);
    /** The longest a test waits for a waiter's outcome. */
    private static final Duration OUTCOME = TestTime.scaled(Duration.ofSeconds(10));

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    static EtcdLock holders;
    /** Its tryAcquire waits a minute for the holder: long enough to act on the key meanwhile. */
    static EtcdLock waiters;

    static Client admin;

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    static void connect() {
        if (!EtcdCluster.available()) {
            return; // the extension skips every test, saying why
        }
        holders = EtcdLock.builder().endpoints(etcd.endpoints()).build();
        waiters = EtcdLock.builder()
                .endpoints(etcd.endpoints())
                .tryAcquireWait(Duration.ofMinutes(1))
                .build();
        admin = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build();
        holders.acquire("warm-up", TTL, WAIT).release();
        waiters.acquire("warm-up", TTL, WAIT).release();
    }

    @AfterAll
    static void disconnect() {
        for (AutoCloseable closeable : new AutoCloseable[] {holders, waiters, admin}) {
            try {
                if (closeable != null) {
                    closeable.close();
                }
            } catch (Exception e) {
                throw new AssertionError("close failed", e);
            }
        }
    }

    @BeforeEach
    void noWatchLeftBefore() {
        awaitNoWatch("no watch left by the tests before");
    }

    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    @Test
    void aWaiterIsGrantedWhenTheHolderReleasesAndItsWatchIsCancelled() throws Exception {
        FencedLease holder = holders.acquire("ledger", TTL, WAIT);
        Future<FencedLease> waiting = threads.submit(() -> waiters.acquire("ledger", TTL, WAIT));
        KeyValue queued = awaitWaiter("ledger", 2);

        holder.release();
        try (FencedLease next = waiting.get(OUTCOME.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(next.isValid()).isTrue();
            assertThat(next.fencingToken())
                    .isEqualTo(queued.getCreateRevision())
                    .isGreaterThan(holder.fencingToken());
            assertThat(lockKeys("ledger"))
                    .singleElement()
                    .satisfies(kv -> assertThat(kv.getLease()).isEqualTo(((EtcdLease) next).leaseId()));
            awaitNoWatch("the granted waiter's watch cancelled");
        }
    }

    @Test
    void aWaiterWhoseKeyIsDeletedWhileWaitingIsRefusedAtOnce() throws Exception {
        Throwable refused = refusedWhileWaiting(
                "payroll", queued -> admin.getKVClient().delete(queued.getKey()).get(5, TimeUnit.SECONDS));
        assertThat(refused).isInstanceOf(LockUnavailableException.class).hasMessageContaining("was deleted");
    }

    @Test
    void aWaiterWhoseLeaseIsRevokedWhileWaitingIsRefusedAtOnce() throws Exception {
        Throwable refused = refusedWhileWaiting(
                "payout",
                queued -> admin.getLeaseClient().revoke(queued.getLease()).get(5, TimeUnit.SECONDS));
        // The watch sees the key go with the lease, or the keep-alive sees the lease go: either refuses.
        assertThat(refused)
                .isInstanceOf(LockUnavailableException.class)
                .message()
                .containsAnyOf("was deleted", "lost the lease");
    }

    /** What a waiter (its tryAcquire waiting a minute) ends with once {@code action} is done to its key. */
    private Throwable refusedWhileWaiting(String resource, KeyAction action) throws Exception {
        FencedLease holder = holders.acquire(resource, TTL, WAIT);
        try {
            Future<Optional<FencedLease>> waiting = threads.submit(() -> waiters.tryAcquire(resource, TTL));
            action.on(awaitWaiter(resource, 2));
            Throwable refused = outcomeOf(waiting);
            assertThat(holder.isValid()).isTrue();
            assertThat(lockKeys(resource))
                    .singleElement()
                    .satisfies(kv -> assertThat(kv.getCreateRevision()).isEqualTo(holder.fencingToken()));
            awaitNoWatch("the refused waiter's watch cancelled");
            return refused;
        } finally {
            holder.release();
        }
    }

    /** Something done to a waiter's key, as an operator or a failure would. */
    @FunctionalInterface
    private interface KeyAction {
        void on(KeyValue queued) throws Exception;
    }

    @Test
    void waitersAreGrantedInTheOrderTheyQueuedWithGrowingTokens() throws Exception {
        FencedLease holder = holders.acquire("batch", TTL, WAIT);
        ConcurrentLinkedQueue<Long> granted = new ConcurrentLinkedQueue<>();
        List<Long> queued = new ArrayList<>();
        List<Future<?>> waiting = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            waiting.add(threads.submit(() -> {
                try (FencedLease lease = waiters.acquire("batch", TTL, WAIT)) {
                    granted.add(lease.fencingToken());
                }
                return null;
            }));
            queued.add(awaitWaiter("batch", i + 1).getCreateRevision());
        }

        holder.release();
        for (Future<?> waiter : waiting) {
            waiter.get(OUTCOME.toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(granted).containsExactlyElementsOf(queued);
        assertThat(queued).isSorted().doesNotHaveDuplicates().allMatch(token -> token > holder.fencingToken());
        awaitNoWatch("every waiter's watch cancelled");
        assertThat(lockKeys("batch")).isEmpty();
    }

    @Test
    void aWaitThatRunsOutIsRefusedNamingTheHolderAndItsWatchIsCancelled() {
        FencedLease holder = holders.acquire("audit", TTL, WAIT);
        try (EtcdLock other = EtcdLock.builder().endpoints(etcd.endpoints()).build()) {
            LockUnavailableException refused = catchThrowableOfType(
                    LockUnavailableException.class, () -> other.acquire("audit", TTL, Duration.ofMillis(500)));
            assertThat(refused.busy()).as(refused.getMessage()).isTrue();
            assertThat(refused).hasMessageContaining("token " + holder.fencingToken());
            awaitNoWatch("the waiter's watch cancelled");
            assertThat(lockKeys("audit")).hasSize(1);
        } finally {
            holder.release();
        }
    }

    @Test
    void closingTheLockEndsTheWaitAndCancelsItsWatch() throws Exception {
        FencedLease holder = holders.acquire("archive", TTL, WAIT);
        try {
            EtcdLock closing = EtcdLock.builder().endpoints(etcd.endpoints()).build();
            Future<FencedLease> waiting = threads.submit(() -> closing.acquire("archive", TTL, WAIT));
            awaitWaiter("archive", 2);

            closing.close();
            assertThat(outcomeOf(waiting))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
            awaitNoWatch("the closed lock's watch cancelled");
            TestTime.await(Duration.ofSeconds(5), () -> lockKeys("archive").size() == 1, "the waiter's key gone");
        } finally {
            holder.release();
        }
    }

    /**
     * Waits until {@code resource} has {@code keys} keys and the member a watch for each waiter
     * (the holder has none): the last key, the last waiter's.
     */
    private static KeyValue awaitWaiter(String resource, int keys) {
        TestTime.await(
                Duration.ofSeconds(5),
                () -> lockKeys(resource).size() == keys && watchers() == keys - 1,
                "waiter " + (keys - 1) + " queued and watching");
        List<KeyValue> queue = lockKeys(resource);
        return queue.get(queue.size() - 1);
    }

    /** Waits until the member serves no watch, and no watch stream: nothing left behind. */
    private static void awaitNoWatch(String what) {
        String endpoint = etcd.endpoints().get(0);
        TestTime.await(
                Duration.ofSeconds(5),
                () -> watchers() == 0 && EtcdQueueState.watchStreams(endpoint) == 0,
                what + " (watches and their streams)");
    }

    /** What ended a waiter's call with an exception, within the outcome's bound. */
    private static Throwable outcomeOf(Future<?> waiting) {
        return catchThrowableOfType(
                        ExecutionException.class, () -> waiting.get(OUTCOME.toMillis(), TimeUnit.MILLISECONDS))
                .getCause();
    }

    private static List<KeyValue> lockKeys(String resource) {
        return EtcdQueueState.lockKeys(admin, resource);
    }

    private static long watchers() {
        return EtcdQueueState.watchers(etcd.endpoints().get(0));
    }
}
