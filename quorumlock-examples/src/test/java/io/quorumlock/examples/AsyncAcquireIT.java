package io.quorumlock.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.DistributedLock;
import io.quorumlock.DistributedSemaphore;
import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.testkit.TestTime;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code acquireAsync} on every backend, on real servers: many waiters on one resource cost one
 * thread, not one each; a wait that passes behind others ends on time; a cancelled acquire gives
 * its wait up and leaves no lease behind.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AsyncAcquireIT extends OnEveryBackend {

    private static final Logger log = LoggerFactory.getLogger(AsyncAcquireIT.class);

    private static final Duration TTL = Duration.ofSeconds(10);

    private final String resource = "stock-" + UUID.randomUUID().toString().substring(0, 8);

    private static int threads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }

    /** Waiters on a resource another client holds: a thousand on one node, two hundred elsewhere. */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void waitersOnOneResourceCostOneThreadAndAreAllServedOnceItIsReleased(Backend backend) throws Exception {
        int waiters = backend == Backend.REDIS ? 1_000 : 200;
        DistributedLock<Lease> holder = lock(backend, "holder");
        DistributedLock<Lease> lock = lock(backend, "waiters");
        Lease held = holder.acquire(resource, TTL, Duration.ZERO);
        lock.tryAcquireAsync(resource, TTL).get(30, TimeUnit.SECONDS); // the client's own threads, started
        int before = threads();

        AtomicInteger granted = new AtomicInteger();
        List<CompletableFuture<Void>> all = new ArrayList<>();
        Duration wait = TestTime.scaled(Duration.ofSeconds(120));
        for (int i = 0; i < waiters; i++) {
            all.add(lock.acquireAsync(resource, TTL, wait).thenAccept(lease -> {
                granted.incrementAndGet();
                lease.release();
            }));
        }
        int during = threads();
        assertThat(all).noneMatch(CompletableFuture::isDone);
        log.info(
                "{}: {} threads before {} asynchronous acquires, {} while they wait", backend, before, waiters, during);
        // One thread serves the line; the bound leaves room for threads that other work of this JVM
        // starts meanwhile, far below one per waiter.
        assertThat(during - before).as("threads added by %d waiters", waiters).isLessThanOrEqualTo(10);

        held.release();
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(150, TimeUnit.SECONDS);
        assertThat(granted).hasValue(waiters);
        try (Lease free = holder.acquire(resource, TTL, Duration.ZERO)) {
            assertThat(free.isValid()).as("no lease left behind").isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aWaitThatPassesBehindOthersEndsOnTimeAndACancelLeavesNoLeaseBehind(Backend backend) throws Exception {
        DistributedLock<Lease> holder = lock(backend, "holder");
        DistributedLock<Lease> lock = lock(backend, "waiters");
        Lease held = holder.acquire(resource, TTL, Duration.ZERO);
        assertThat(lock.tryAcquireAsync(resource, TTL).get(30, TimeUnit.SECONDS))
                .isEmpty();
        assertThatThrownBy(() -> lock.acquireAsync(resource, TTL, Duration.ZERO).get(30, TimeUnit.SECONDS))
                .as("a wait of zero: one attempt, refused with the lock's own evidence")
                .cause()
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("could not acquire '" + resource + "' within ")
                .hasMessageNotContaining("asynchronous");

        CompletableFuture<Lease> first = lock.acquireAsync(resource, TTL, TestTime.scaled(Duration.ofSeconds(60)));
        long start = System.nanoTime();
        CompletableFuture<Lease> behind = lock.acquireAsync(resource, TTL, Duration.ofMillis(300));
        assertThatThrownBy(() -> behind.get(30, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(LockUnavailableException.class)
                .hasMessage("could not acquire '" + resource + "' within 300 ms (0 attempts): 1 asynchronous acquire"
                        + " of this process was ahead of it, served one at a time, the first waiting for the lock");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("ended at its own wait")
                .isLessThan(TestTime.scaled(Duration.ofSeconds(3)));
        assertThat(first).isNotDone();

        CompletableFuture<Lease> queued = lock.acquireAsync(resource, TTL, TestTime.scaled(Duration.ofSeconds(60)));
        assertThat(queued.cancel(true)).isTrue();
        assertThat(first.cancel(true)).as("the one whose wait is under way").isTrue();
        assertThatThrownBy(first::join).isInstanceOf(CancellationException.class);
        held.release();

        // Neither cancelled acquire holds the lock: another client is granted it at once, and the
        // line's thread, done with them, serves a new acquire.
        awaitFree(holder, "the resource free of the cancelled acquires");
        try (Lease next = lock.acquireAsync(resource, TTL, TestTime.scaled(Duration.ofSeconds(30)))
                .get(60, TimeUnit.SECONDS)) {
            assertThat(next.isValid()).isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aSemaphoresAsynchronousAcquiresTakeEachPermitThenWaitForARelease(Backend backend) throws Exception {
        DistributedSemaphore<Lease> semaphore = DistributedSemaphore.of(lock(backend, "host-a"), resource, 3);
        Duration wait = TestTime.scaled(Duration.ofSeconds(60));
        List<CompletableFuture<Lease>> acquires = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            acquires.add(semaphore.acquireAsync(TTL, wait));
        }
        List<Lease> first = new ArrayList<>();
        for (CompletableFuture<Lease> acquire : acquires.subList(0, 3)) {
            first.add(acquire.get(60, TimeUnit.SECONDS));
        }
        assertThat(first).extracting(Lease::resource).doesNotHaveDuplicates();
        assertThat(semaphore.tryAcquireAsync(TTL).get(30, TimeUnit.SECONDS)).isEmpty();
        assertThat(acquires.get(3)).isNotDone();
        first.get(1).release();
        Lease fourth = acquires.get(3).get(60, TimeUnit.SECONDS);
        assertThat(fourth.resource()).isEqualTo(first.get(1).resource());
        fourth.release();
        first.forEach(Lease::release);
    }

    /** A Mono of the future: it takes the lease; and its timeout cancels the acquire, which leaves no lease. */
    @org.junit.jupiter.api.Test
    void aReactorMonoTakesTheFutureAndItsCancelGivesTheWaitUp() throws Exception {
        DistributedLock<Lease> holder = lock(Backend.REDIS, "holder");
        DistributedLock<Lease> lock = lock(Backend.REDIS, "reactive");
        String taken = reactor.core.publisher.Mono.fromFuture(() -> lock.acquireAsync(resource, TTL, Duration.ZERO))
                .map(lease -> {
                    lease.release();
                    return lease.resource();
                })
                .block(TestTime.scaled(Duration.ofSeconds(30)));
        assertThat(taken).isEqualTo(resource);

        Lease held = holder.acquire(resource, TTL, Duration.ZERO);
        CompletableFuture<Lease> acquire = lock.acquireAsync(resource, TTL, TestTime.scaled(Duration.ofSeconds(60)));
        assertThatThrownBy(() -> reactor.core.publisher.Mono.fromFuture(acquire, false)
                        .timeout(Duration.ofMillis(200))
                        .block(TestTime.scaled(Duration.ofSeconds(30))))
                .hasCauseInstanceOf(java.util.concurrent.TimeoutException.class);
        assertThat(acquire).as("cancelled by the Mono's timeout").isCancelled();
        held.release();
        awaitFree(holder, "the resource free of the cancelled acquire");
    }

    /** Waits until {@code holder} is granted the resource at once (and releases it): no lease is left on it. */
    private void awaitFree(DistributedLock<Lease> holder, String what) {
        TestTime.await(
                TestTime.scaled(Duration.ofSeconds(10)),
                () -> holder.tryAcquire(resource, TTL)
                        .map(lease -> {
                            lease.release();
                            return true;
                        })
                        .orElse(false),
                what);
    }
}
