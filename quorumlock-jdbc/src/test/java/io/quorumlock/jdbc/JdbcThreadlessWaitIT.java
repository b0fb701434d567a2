package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.DistributedSemaphore;
import io.quorumlock.FencedLease;
import io.quorumlock.RetryPolicy;
import io.quorumlock.testkit.MariaDbServerExtension;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.WaitingThreads;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A database lock's {@code acquireAsync} holds no thread between its attempts: waiters on many
 * resources or semaphores add no thread per waiter and are woken by the releases (their backoff is
 * 30 s and their recheck a minute, so a grant within the test's bound was a wake-up); a cancelled
 * wait takes no lease; closing the lock ends its waits.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class JdbcThreadlessWaitIT {

    private static final Logger log = LoggerFactory.getLogger(JdbcThreadlessWaitIT.class);

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @RegisterExtension
    static final MariaDbServerExtension mariadb = new MariaDbServerExtension();

    private static final AtomicInteger tables = new AtomicInteger();
    private static final Duration TTL = Duration.ofSeconds(60);
    private static final Duration LONG_WAIT = Duration.ofSeconds(90);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(20));

    private final List<JdbcLock> locks = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private DataSource database;
    private String table;

    @AfterEach
    void closeAll() {
        threads.shutdownNow();
        locks.forEach(JdbcLock::close);
    }

    /** The holder's lock, on a new table of {@code engine}. */
    private JdbcLock setUp(Engine engine) {
        database = engine.dataSource(postgres, mariadb);
        table = "threadless_" + tables.incrementAndGet();
        JdbcLock lock = lock("holder");
        lock.createTable();
        return lock;
    }

    /** A lock that retries only every 30 s, and rechecks while it can be woken only every minute. */
    private JdbcLock lock(String holder) {
        JdbcLock lock = JdbcLock.builder()
                .dataSource(database)
                .table(table)
                .holder(holder)
                .retry(RetryPolicy.jitteredBackoff(Duration.ofSeconds(30), Duration.ofSeconds(30)))
                .recheck(Duration.ofMinutes(1))
                .build();
        locks.add(lock);
        return lock;
    }

    private static int threads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }

    @ParameterizedTest
    @EnumSource(
            value = Engine.class,
            names = {"POSTGRESQL", "MARIADB"})
    void waitersOnManyResourcesHoldNoThreadEachAndAreWokenByTheReleases(Engine engine) throws Exception {
        int resources = 150;
        JdbcLock holder = setUp(engine);
        JdbcLock waiters = lock("waiter");
        List<FencedLease> held = new ArrayList<>();
        for (int r = 0; r < resources; r++) {
            held.add(holder.acquire("many-" + r, TTL, Duration.ZERO));
        }
        List<FencedLease> granted = waitWithoutThreads(
                engine + ", " + resources + " resources",
                held,
                waiters,
                () -> IntStream.range(0, resources)
                        .mapToObj(r -> waiters.acquireAsync("many-" + r, TTL, LONG_WAIT))
                        .collect(Collectors.toList()),
                () -> IntStream.range(0, resources).allMatch(r -> waiters.waiting("many-" + r) == 1));
        for (int r = 0; r < resources; r++) {
            assertThat(granted.get(r).fencingToken())
                    .as("the waiter's token on many-%d", r)
                    .isGreaterThan(held.get(r).fencingToken());
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Engine.class,
            names = {"POSTGRESQL", "MARIADB"})
    void waitersOnManySemaphoresHoldNoThreadEachAndAreWokenByTheReleases(Engine engine) throws Exception {
        int semaphores = 40;
        JdbcLock holder = setUp(engine);
        JdbcLock waiters = lock("waiter");
        List<FencedLease> held = new ArrayList<>();
        List<DistributedSemaphore<FencedLease>> waited = new ArrayList<>();
        for (int s = 0; s < semaphores; s++) {
            DistributedSemaphore<FencedLease> semaphore = DistributedSemaphore.of(holder, "backups-" + s, 2);
            held.add(semaphore.acquire(TTL, Duration.ZERO));
            held.add(semaphore.acquire(TTL, Duration.ZERO));
            waited.add(DistributedSemaphore.of(waiters, "backups-" + s, 2));
        }
        // Only the second permits are released: each waiter waits on both at once, and is woken.
        List<FencedLease> seconds =
                held.stream().filter(lease -> lease.resource().endsWith("#2")).collect(Collectors.toList());
        waitWithoutThreads(
                engine + ", " + semaphores + " semaphores of 2 permits",
                seconds,
                waiters,
                () -> waited.stream().map(w -> w.acquireAsync(TTL, LONG_WAIT)).collect(Collectors.toList()),
                () -> IntStream.range(0, semaphores)
                        .allMatch(s -> waiters.waiting("backups-" + s + "#1") == 1
                                && waiters.waiting("backups-" + s + "#2") == 1));
        held.forEach(FencedLease::release);
    }

    /**
     * Asks for leases on what {@code held} holds, with the futures {@code ask} gives, waits until
     * {@code waiting} says they all pause in the lock's queues, and checks that no thread per waiter
     * was added meanwhile; then releases the holds and takes every lease, which it returns released.
     */
    private List<FencedLease> waitWithoutThreads(
            String what,
            List<FencedLease> held,
            JdbcLock waiters,
            Supplier<List<CompletableFuture<FencedLease>>> ask,
            BooleanSupplier waiting)
            throws Exception {
        waiters.acquireAsync("warm-up", TTL, WAIT)
                .get(WAIT.toMillis(), TimeUnit.MILLISECONDS)
                .release();
        return WaitingThreads.grantedWithoutThreadEach(
                what, ask, waiting, () -> held.forEach(FencedLease::release), FencedLease::release);
    }

    @ParameterizedTest
    @EnumSource(
            value = Engine.class,
            names = {"POSTGRESQL", "MARIADB"})
    void aCancelledWaitTakesNoLease(Engine engine) throws Exception {
        JdbcLock holder = setUp(engine);
        JdbcLock waiter = lock("waiter");
        FencedLease held = holder.acquire("cancelled", TTL, Duration.ZERO);
        CompletableFuture<FencedLease> waiting = waiter.acquireAsync("cancelled", TTL, LONG_WAIT);
        TestTime.await(WAIT, () -> waiter.waiting("cancelled") == 1, "the waiter pausing");

        assertThat(waiting.cancel(true)).isTrue();
        TestTime.await(WAIT, () -> waiter.waiting("cancelled") == 0, "the waiter gone");
        held.release();
        try (FencedLease next = holder.acquire("cancelled", TTL, Duration.ZERO)) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
        assertThatThrownBy(waiting::join).isInstanceOf(CancellationException.class);
    }

    @ParameterizedTest
    @EnumSource(
            value = Engine.class,
            names = {"POSTGRESQL", "MARIADB"})
    void closingTheLockEndsItsWaits(Engine engine) throws Exception {
        JdbcLock holder = setUp(engine);
        JdbcLock waiter = lock("waiter");
        try (FencedLease held = holder.acquire("closed", TTL, Duration.ZERO)) {
            CompletableFuture<FencedLease> waiting = waiter.acquireAsync("closed", TTL, LONG_WAIT);
            TestTime.await(WAIT, () -> waiter.waiting("closed") == 1, "the waiter pausing");
            waiter.close();
            assertThatThrownBy(() -> waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class);
            assertThat(held.isValid()).isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Engine.class,
            names = {"POSTGRESQL", "MARIADB"})
    void closingTheLockEndsEveryWaitOfAResourceAtOnce(Engine engine) throws Exception {
        JdbcLock holder = setUp(engine);
        JdbcLock waiter = lock("waiter");
        try (FencedLease held = holder.acquire("closed-all", TTL, Duration.ZERO)) {
            List<CompletableFuture<FencedLease>> blocked = new ArrayList<>();
            for (int w = 0; w < 3; w++) {
                blocked.add(CompletableFuture.supplyAsync(() -> waiter.acquire("closed-all", TTL, LONG_WAIT), threads));
            }
            TestTime.await(WAIT, () -> waiter.waiting("closed-all") == 3, "three waiters pausing");
            waiter.close();
            for (CompletableFuture<FencedLease> wait : blocked) {
                assertThatThrownBy(() -> wait.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                        .as("a wait of the closed lock (its recheck is a minute away)")
                        .isInstanceOf(ExecutionException.class)
                        .cause()
                        .isInstanceOf(IllegalStateException.class);
            }
            assertThat(held.isValid()).isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Engine.class,
            names = {"POSTGRESQL", "MARIADB"})
    void aGrantReleasedAtOnceWakesTheNextWaiterOfTheLock(Engine engine) throws Exception {
        JdbcLock holder = setUp(engine);
        JdbcLock waiter = lock("waiter");
        FencedLease held = holder.acquire("hand-on", TTL, Duration.ZERO);
        // The first waiter's lease is released as it is granted, on the thread that grants it.
        CompletableFuture<Long> first = waiter.acquireWithoutThread("hand-on", TTL, LONG_WAIT)
                .thenApply(lease -> {
                    lease.release();
                    return lease.fencingToken();
                });
        // The lock hears the releases before the second waiter comes: an attempt made before that
        // tries again at once, and could take the lock ahead of the first waiter.
        TestTime.await(
                WAIT,
                () -> waiter.listening("hand-on") && waiter.waiting("hand-on") == 1,
                "the first waiter pausing, the releases heard");
        CompletableFuture<FencedLease> second =
                CompletableFuture.supplyAsync(() -> waiter.acquire("hand-on", TTL, LONG_WAIT), threads);
        TestTime.await(WAIT, () -> waiter.waiting("hand-on") == 2, "the second waiter behind it");

        held.release();
        long firstToken = first.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        // Woken by the first one's release, not by its recheck a minute later.
        try (FencedLease next = second.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(next.fencingToken()).isGreaterThan(firstToken);
        }
    }
}
