package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.quorumlock.DistributedSemaphore;
import io.quorumlock.FencedLease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.WaitingThreads;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The etcd lock's {@code acquireAsync} waits in etcd's queue with no thread: waiters on many
 * resources add no thread per resource, a cancelled or closed wait leaves the queue, a wait that
 * passes names the holder, and the waiters of one resource are served in the order they came,
 * whether they watch the few keys ahead or wait in etcd's lock service behind a longer queue.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class EtcdThreadlessWaitIT {

    private static final Logger log = LoggerFactory.getLogger(EtcdThreadlessWaitIT.class);

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration LONG_WAIT = Duration.ofSeconds(30);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);
    /** The longest a test waits for an outcome (scaled by the kit's factor). */
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(20));
    /** For the test's own scheduling on a loaded machine (a late caller thread, a GC pause). */
    private static final Duration JITTER = Duration.ofMillis(400);

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    static Client admin;

    private final List<EtcdLock> locks = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    static void connect() {
        if (!EtcdCluster.available()) {
            return; // the extension skips every test, saying why
        }
        admin = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build();
    }

    @AfterAll
    static void disconnect() {
        if (admin != null) {
            admin.close();
        }
    }

    @AfterEach
    void close() {
        threads.shutdownNow();
        locks.forEach(EtcdLock::close);
    }

    /** A lock with its own client, warmed up. */
    private EtcdLock lock(String holder) {
        EtcdLock lock = EtcdLock.builder()
                .endpoints(etcd.endpoints())
                .holder(holder)
                .requestTimeout(REQUEST_TIMEOUT)
                .build();
        locks.add(lock);
        lock.acquire("warm-up", TTL, WAIT).release();
        return lock;
    }

    /** A lock on {@code client}, not warmed up. */
    private EtcdLock lockOn(Client client, String holder) {
        EtcdLock lock = EtcdLock.builder()
                .client(client)
                .holder(holder)
                .requestTimeout(REQUEST_TIMEOUT)
                .build();
        locks.add(lock);
        return lock;
    }

    private static int queued(String resource) {
        return EtcdQueueState.lockKeys(admin, resource).size();
    }

    /** How many lock keys are under the lock names that start with {@code resourcePrefix}. */
    private static long keysUnder(String resourcePrefix) {
        ByteSequence prefix = ByteSequence.from("/quorumlock/locks/" + resourcePrefix, StandardCharsets.UTF_8);
        try {
            return admin.getKVClient()
                    .get(
                            prefix,
                            GetOption.builder()
                                    .isPrefix(true)
                                    .withCountOnly(true)
                                    .build())
                    .get(5, TimeUnit.SECONDS)
                    .getCount();
        } catch (Exception e) {
            throw new AssertionError("cannot count the lock keys under " + resourcePrefix, e);
        }
    }

    @Test
    void waitersOnManyResourcesHoldNoThreadEachAndAreAllGrantedOnRelease() throws Exception {
        int resources = 200;
        EtcdLock holder = lock("holder");
        EtcdLock waiters = lock("waiters");
        List<FencedLease> held = new ArrayList<>();
        for (int r = 0; r < resources; r++) {
            held.add(holder.acquire("many-" + r, TTL, Duration.ZERO));
        }
        // The shared threads of the asynchronous acquires and of the client start with a few at once.
        List<CompletableFuture<FencedLease>> warmUp = IntStream.range(0, 50)
                .mapToObj(r -> waiters.acquireAsync("warm-up-" + r, TTL, LONG_WAIT))
                .collect(Collectors.toList());
        for (CompletableFuture<FencedLease> lease : warmUp) {
            lease.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).release();
        }
        List<FencedLease> granted = WaitingThreads.grantedWithoutThreadEach(
                resources + " resources",
                () -> IntStream.range(0, resources)
                        .mapToObj(r -> waiters.acquireAsync("many-" + r, TTL, LONG_WAIT))
                        .collect(Collectors.toList()),
                () -> keysUnder("many-") == 2L * resources,
                () -> held.forEach(FencedLease::release),
                FencedLease::release);
        for (int r = 0; r < resources; r++) {
            assertThat(granted.get(r).resource()).isEqualTo("many-" + r);
            assertThat(granted.get(r).fencingToken()).isGreaterThan(held.get(r).fencingToken());
        }
        TestTime.await(WAIT, () -> keysUnder("many-") == 0, "every key released");
    }

    @Test
    void waitersOnManySemaphoresWaitOnEveryPermitWithNoThreadEach() throws Exception {
        int semaphores = 40;
        EtcdLock holder = lock("holder");
        EtcdLock waiters = lock("waiters");
        List<FencedLease> held = new ArrayList<>();
        List<DistributedSemaphore<FencedLease>> waited = new ArrayList<>();
        for (int s = 0; s < semaphores; s++) {
            DistributedSemaphore<FencedLease> semaphore = DistributedSemaphore.of(holder, "backups-" + s, 2);
            held.add(semaphore.acquire(TTL, Duration.ZERO));
            held.add(semaphore.acquire(TTL, Duration.ZERO));
            waited.add(DistributedSemaphore.of(waiters, "backups-" + s, 2));
        }
        // Each waiter waits in both permits' queues at once; only the second permits are released.
        WaitingThreads.grantedWithoutThreadEach(
                semaphores + " semaphores of 2 permits",
                () -> waited.stream().map(w -> w.acquireAsync(TTL, LONG_WAIT)).collect(Collectors.toList()),
                () -> IntStream.range(0, semaphores)
                        .allMatch(s -> queued("backups-" + s + "#1") == 2 && queued("backups-" + s + "#2") == 2),
                () -> held.stream()
                        .filter(lease -> lease.resource().endsWith("#2"))
                        .forEach(FencedLease::release),
                FencedLease::release);
        held.forEach(FencedLease::release);
    }

    @Test
    void aCancelledWaitLeavesTheQueueTakesNoLeaseAndBlocksNobody() throws Exception {
        EtcdLock holder = lock("holder");
        EtcdLock waiter = lock("waiter");
        EtcdLock next = lock("next");
        FencedLease held = holder.acquire("cancelled", TTL, Duration.ZERO);
        CompletableFuture<FencedLease> future = waiter.acquireAsync("cancelled", TTL, LONG_WAIT);
        TestTime.await(WAIT, () -> queued("cancelled") == 2, "the waiter queued");
        ByteSequence waiting =
                EtcdQueueState.lockKeys(admin, "cancelled").get(1).getKey();
        Future<FencedLease> behind = threads.submit(() -> next.acquire("cancelled", TTL, LONG_WAIT));
        TestTime.await(WAIT, () -> queued("cancelled") == 3, "the next waiter queued behind it");

        assertThat(future.cancel(true)).isTrue();
        TestTime.await(WAIT, () -> queued("cancelled") == 2, "the cancelled waiter's key gone");
        assertThat(EtcdQueueState.lockKeys(admin, "cancelled"))
                .as("the queue's keys after the cancel")
                .noneMatch(kv -> kv.getKey().equals(waiting));
        assertThatThrownBy(future::get).isInstanceOf(CancellationException.class);

        held.release();
        try (FencedLease lease = behind.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
        }
        TestTime.await(WAIT, () -> queued("cancelled") == 0, "no key left");
        holder.acquire("cancelled", TTL, Duration.ZERO).release(); // free: nobody took it after the cancel
    }

    @Test
    void aWaitThatPassesEndsRefusedNamingTheHolderWithinItsWait() throws Exception {
        EtcdLock holder = lock("the-holder");
        EtcdLock waiter = lock("waiter");
        FencedLease held = holder.acquire("passes", TTL, Duration.ZERO);
        Duration maxWait = Duration.ofMillis(700);

        long start = System.nanoTime();
        CompletableFuture<FencedLease> future = waiter.acquireAsync("passes", TTL, maxWait);
        Throwable failure = null;
        try {
            future.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            failure = e.getCause();
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        log.info(
                "etcd: acquireAsync(maxWait {} ms) on a held lock ended after {} ms",
                maxWait.toMillis(),
                took.toMillis());
        assertThat(failure)
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("'passes'")
                .hasMessageContaining("held by the-holder")
                .hasMessageContaining("token " + held.fencingToken());
        assertThat(took)
                .isLessThanOrEqualTo(
                        maxWait.plus(AcquireLoop.overrun(REQUEST_TIMEOUT)).plus(TestTime.scaled(JITTER)));
        TestTime.await(WAIT, () -> queued("passes") == 1, "the waiter's key gone");
        held.release();
    }

    @Test
    void closingTheLockEndsAThreadlessWaitAtOnce() throws Exception {
        EtcdLock holder = lock("holder");
        EtcdLock waiter = lock("waiter");
        FencedLease held = holder.acquire("closing", TTL, Duration.ZERO);
        CompletableFuture<FencedLease> future = waiter.acquireAsync("closing", TTL, LONG_WAIT);
        TestTime.await(WAIT, () -> queued("closing") == 2, "the waiter queued");

        long start = System.nanoTime();
        waiter.close();
        assertThatThrownBy(() -> future.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        log.info("etcd: a threadless wait ended {} ms after its lock was closed", took.toMillis());
        assertThat(took).isLessThanOrEqualTo(TestTime.scaled(Duration.ofSeconds(2)));
        TestTime.await(WAIT, () -> queued("closing") == 1, "the closed waiter's key gone");
        held.release();
    }

    @Test
    void aShortQueueWatchedIsServedInOrderOfArrival() throws Exception {
        servedInOrder("short-queue", 4); // each waiter with 4 keys ahead at most: it watches them go
    }

    @Test
    void aLongQueueWaitingInEtcdsLockServiceIsServedInOrderOfArrival() throws Exception {
        // the waiters with more than 8 keys ahead wait in etcd's lock service
        servedInOrder("long-queue", (int) LockAttempts.MOST_AHEAD_WATCHED + 4);
    }

    /**
     * {@code count} asynchronous waiters of as many locks (on one client) queue one after the other
     * behind a holder, and are granted one after the other in that order, each with a larger token.
     */
    private void servedInOrder(String resource, int count) throws Exception {
        EtcdLock holder = lock("holder");
        Client shared = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build();
        try {
            FencedLease held = holder.acquire(resource, TTL, Duration.ZERO);
            List<Integer> served = new CopyOnWriteArrayList<>();
            List<Long> tokens = new CopyOnWriteArrayList<>();
            List<CompletableFuture<Void>> waits = new ArrayList<>();
            for (int w = 1; w <= count; w++) {
                int number = w;
                EtcdLock waiter = lockOn(shared, "waiter-" + w);
                waits.add(waiter.acquireAsync(resource, TTL, LONG_WAIT)
                        .thenAcceptAsync(
                                lease -> {
                                    try (lease) {
                                        served.add(number);
                                        tokens.add(lease.fencingToken());
                                    }
                                },
                                threads));
                TestTime.await(WAIT, () -> queued(resource) == 1 + number, "waiter " + number + " queued");
            }
            held.release();
            for (CompletableFuture<Void> wait : waits) {
                wait.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            }
            log.info("etcd: {} waiters served in order {} with tokens {}", count, served, tokens);
            assertThat(served)
                    .containsExactlyElementsOf(
                            IntStream.rangeClosed(1, count).boxed().toList());
            assertThat(tokens.get(0)).isGreaterThan(held.fencingToken());
            assertThat(tokens).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
            TestTime.await(WAIT, () -> queued(resource) == 0, "every key released");
        } finally {
            locks.forEach(EtcdLock::close);
            locks.clear();
            shared.close();
        }
    }
}
