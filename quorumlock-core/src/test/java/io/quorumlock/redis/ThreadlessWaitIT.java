package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.DistributedReadWriteLock;
import io.quorumlock.DistributedSemaphore;
import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.WaitingThreads;
import java.lang.management.ManagementFactory;
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
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Jedis;

/**
 * Redlock's {@code acquireAsync} waits with no thread, on whatever Java runs it (these tests run
 * on the build's Java 17): waiters on many resources or semaphores add no thread per resource, keep their turn
 * among the waiters of other clients, and a cancelled one leaves the line on the nodes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ThreadlessWaitIT {

    private static final Logger log = LoggerFactory.getLogger(ThreadlessWaitIT.class);

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration LONG_WAIT = Duration.ofSeconds(90);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(20));
    private static final RetryPolicy SLOW_POLL =
            RetryPolicy.jitteredBackoff(Duration.ofSeconds(5), Duration.ofSeconds(5));

    private final List<Redlock> clients = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void close() {
        threads.shutdownNow();
        clients.forEach(Redlock::close);
    }

    private Redlock client() {
        Redlock redlock = Redlock.builder()
                .nodes(redis.uris())
                .restartGuard(false)
                .retry(SLOW_POLL)
                .recheck(Duration.ofSeconds(60))
                .build();
        clients.add(redlock);
        return redlock;
    }

    private static int threads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }

    /** How many waiters are in the line of {@code resource} on node {@code i}. */
    private static long inLine(Jedis jedis, String resource) {
        return jedis.zcard(Scripts.line(resource));
    }

    private static boolean inLineEverywhere(String resource, long waiters) {
        for (int i = 0; i < 3; i++) {
            try (Jedis jedis = redis.get(i).connect(Duration.ofSeconds(2))) {
                if (inLine(jedis, resource) != waiters) {
                    return false;
                }
            }
        }
        return true;
    }

    @Test
    void waitersOnManyResourcesHoldNoThreadEachAndAreAllGrantedOnRelease() throws Exception {
        int resources = 300;
        Redlock holder = client();
        Redlock waiters = client();
        List<Lease> held = new ArrayList<>();
        for (int r = 0; r < resources; r++) {
            held.add(holder.acquire("many:" + r, TTL, Duration.ZERO));
        }
        waitWithoutThreads(
                resources + " resources",
                held,
                waiters,
                () -> IntStream.range(0, resources)
                        .mapToObj(r -> waiters.acquireAsync("many:" + r, TTL, LONG_WAIT))
                        .collect(Collectors.toList()),
                () -> {
                    try (Jedis node0 = redis.get(0).connect(Duration.ofSeconds(2))) {
                        return IntStream.range(0, resources).allMatch(r -> inLine(node0, "many:" + r) == 1);
                    }
                });
    }

    @Test
    void waitersOnManySemaphoresHoldNoThreadEachAndAreAllGrantedOnRelease() throws Exception {
        int semaphores = 100;
        Redlock holder = client();
        Redlock waiters = client();
        List<Lease> held = new ArrayList<>();
        List<DistributedSemaphore<Lease>> waited = new ArrayList<>();
        for (int s = 0; s < semaphores; s++) {
            DistributedSemaphore<Lease> semaphore = DistributedSemaphore.of(holder, "backups-" + s, 2);
            held.add(semaphore.acquire(TTL, Duration.ZERO));
            held.add(semaphore.acquire(TTL, Duration.ZERO));
            waited.add(DistributedSemaphore.of(waiters, "backups-" + s, 2));
        }
        // The waits go from permit to permit: each semaphore's waiter in some permit's line.
        waitWithoutThreads(
                semaphores + " semaphores of 2 permits",
                held,
                waiters,
                () -> waited.stream().map(w -> w.acquireAsync(TTL, LONG_WAIT)).collect(Collectors.toList()),
                () -> {
                    try (Jedis node0 = redis.get(0).connect(Duration.ofSeconds(2))) {
                        return IntStream.range(0, semaphores)
                                .allMatch(
                                        s -> inLine(node0, "backups-" + s + "#1") + inLine(node0, "backups-" + s + "#2")
                                                > 0);
                    }
                });
    }

    @Test
    void readersAndWritersOfManyReadWriteLocksHoldNoThreadEachAndAreAllGrantedOnRelease() throws Exception {
        int locks = 60;
        Redlock holder = client();
        Redlock waiters = client();
        List<Lease> held = new ArrayList<>();
        List<DistributedReadWriteLock<Lease>> waited = new ArrayList<>();
        for (int l = 0; l < locks; l++) {
            held.add(DistributedReadWriteLock.of(holder, "catalog-" + l, 2).acquireWrite(TTL, Duration.ZERO));
            waited.add(DistributedReadWriteLock.of(waiters, "catalog-" + l, 2));
        }
        // Even locks get a reader, in line for the permits the writer holds; odd ones a writer.
        waitWithoutThreads(
                locks + " read-write locks, half readers and half writers",
                held,
                waiters,
                () -> IntStream.range(0, locks)
                        .mapToObj(l -> l % 2 == 0
                                ? waited.get(l).acquireReadAsync(TTL, LONG_WAIT)
                                : waited.get(l).acquireWriteAsync(TTL, LONG_WAIT))
                        .collect(Collectors.toList()),
                () -> {
                    try (Jedis node0 = redis.get(0).connect(Duration.ofSeconds(2))) {
                        return IntStream.range(0, locks)
                                .allMatch(l -> l % 2 == 0
                                        ? inLine(node0, "catalog-" + l + "#read#1") == 1
                                        : inLine(node0, "catalog-" + l + "#write") == 1);
                    }
                });
    }

    /**
     * Asks for leases on what {@code held} holds, with the futures {@code ask} gives, waits until
     * {@code waiting} says they all wait on the nodes, and checks that no thread per waiter was
     * added meanwhile; then releases the holds and takes every lease.
     */
    private void waitWithoutThreads(
            String what,
            List<Lease> held,
            Redlock waiters,
            Supplier<List<CompletableFuture<Lease>>> ask,
            BooleanSupplier waiting)
            throws Exception {
        waiters.tryAcquireAsync("warm-up", TTL)
                .get(10, TimeUnit.SECONDS)
                .orElseThrow()
                .release();
        WaitingThreads.grantedWithoutThreadEach(what, ask, waiting, () -> held.forEach(Lease::release), Lease::release);
    }

    @ParameterizedTest(name = "asynchronous: {0}")
    @ValueSource(booleans = {false, true})
    void aSemaphoreWaiterWaitsOnEveryPermitAndTakesTheFirstReleased(boolean asynchronous) throws Exception {
        String name = "reports-" + asynchronous;
        DistributedSemaphore<Lease> held = DistributedSemaphore.of(client(), name, 3);
        List<Lease> permits = new ArrayList<>();
        for (int p = 0; p < 3; p++) {
            permits.add(held.acquire(TTL, Duration.ZERO));
        }
        DistributedSemaphore<Lease> semaphore = DistributedSemaphore.of(client(), name, 3);
        CompletableFuture<Lease> waiter = asynchronous
                ? semaphore.acquireAsync(TTL, LONG_WAIT)
                : CompletableFuture.supplyAsync(() -> semaphore.acquire(TTL, LONG_WAIT), threads);
        TestTime.await(
                WAIT,
                () -> IntStream.rangeClosed(1, 3).allMatch(p -> inLineEverywhere(name + "#" + p, 1)),
                "the waiter in line on every permit at once");

        Lease released = permits.remove(1);
        int permit = held.permitOf(released);
        released.release();
        try (Lease lease = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(semaphore.permitOf(lease)).as("the permit released").isEqualTo(permit);
            TestTime.await(
                    WAIT,
                    () -> IntStream.rangeClosed(1, 3).allMatch(p -> inLineEverywhere(name + "#" + p, 0)),
                    "the waiter out of every permit's line once granted");
        }
        permits.forEach(Lease::release);
    }

    @Test
    void anAsynchronousWaiterKeepsItsTurnAmongTheWaitersOfOtherClients() throws Exception {
        Redlock holder = client();
        Lease held = holder.acquire("turns", TTL, Duration.ZERO);
        List<Integer> served = new CopyOnWriteArrayList<>();

        CompletableFuture<Void> first =
                client().acquireAsync("turns", TTL, LONG_WAIT).thenAccept(lease -> serve(served, 1, lease));
        TestTime.await(WAIT, () -> inLineEverywhere("turns", 1), "the first waiter in line");
        Redlock second = client();
        Future<?> blocking = threads.submit(() -> {
            serve(served, 2, second.acquire("turns", TTL, LONG_WAIT));
            return null;
        });
        TestTime.await(WAIT, () -> inLineEverywhere("turns", 2), "the second waiter in line");
        CompletableFuture<Void> third =
                client().acquireAsync("turns", TTL, LONG_WAIT).thenAccept(lease -> serve(served, 3, lease));
        TestTime.await(WAIT, () -> inLineEverywhere("turns", 3), "the third waiter in line");

        held.release();
        first.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        blocking.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        third.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(served).containsExactly(1, 2, 3);
    }

    private static void serve(List<Integer> served, int number, Lease lease) {
        try (lease) {
            served.add(number);
        }
    }

    @Test
    void aCancelledWaitLeavesTheLineOnEveryNodeAndTakesNoLease() throws Exception {
        Redlock holder = client();
        Redlock waiter = client();
        Lease held = holder.acquire("cancelled", TTL, Duration.ZERO);
        CompletableFuture<Lease> future = waiter.acquireAsync("cancelled", TTL, LONG_WAIT);
        TestTime.await(WAIT, () -> inLineEverywhere("cancelled", 1), "the waiter in line");

        assertThat(future.cancel(true)).isTrue();
        TestTime.await(WAIT, () -> inLineEverywhere("cancelled", 0), "the cancelled waiter out of the line");
        assertThatThrownBy(future::get).isInstanceOf(CancellationException.class);
        held.release();
        holder.acquire("cancelled", TTL, Duration.ZERO).release(); // free: nobody took it after the cancel
    }

    @Test
    void closingTheLockEndsItsWaitsAtOnceBlockingAsynchronousOrAsAWriter() throws Exception {
        Redlock holder = client();
        Lease held = holder.acquire("closing", TTL, Duration.ZERO);
        Lease written = DistributedReadWriteLock.of(holder, "closing-rw", 2).acquireWrite(TTL, Duration.ZERO);
        Redlock waiter = client(); // rechecks every 60 s: only the close ends the waits in time
        CompletableFuture<Lease> asynchronous = waiter.acquireAsync("closing", TTL, LONG_WAIT);
        Future<Lease> blocking = threads.submit(() -> waiter.acquire("closing", TTL, LONG_WAIT));
        CompletableFuture<Lease> writer =
                DistributedReadWriteLock.of(waiter, "closing-rw", 2).acquireWriteAsync(TTL, LONG_WAIT);
        TestTime.await(
                WAIT,
                () -> waiter.waiting("closing") == 2
                        && inLineEverywhere("closing", 1)
                        && inLineEverywhere("closing-rw#write", 1),
                "both waiters in the client's line, the first in the nodes', and the writer in line");

        waiter.close();
        assertThatThrownBy(() -> writer.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        written.release();
        assertThatThrownBy(() -> asynchronous.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> blocking.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        held.release();
    }

    @Test
    void aWaitThatPassesEndsRefusedWithTheVotesAndLeavesTheLine() throws Exception {
        Redlock holder = client();
        Lease held = holder.acquire("passes", TTL, Duration.ZERO);
        CompletableFuture<Lease> future = client().acquireAsync("passes", TTL, Duration.ofMillis(700));

        assertThatThrownBy(() -> future.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("'passes'")
                .hasMessageContaining("held by another owner");
        TestTime.await(WAIT, () -> inLineEverywhere("passes", 0), "the waiter out of the line");
        held.release();
    }
}
