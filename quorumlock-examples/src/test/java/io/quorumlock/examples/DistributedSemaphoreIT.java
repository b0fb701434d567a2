package io.quorumlock.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.DistributedLock;
import io.quorumlock.DistributedSemaphore;
import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.Lease;
import io.quorumlock.PermitUnavailableException;
import io.quorumlock.jdbc.StaleTokenException;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The semaphore on every backend, on real servers: at most N holders, each permit a lease of the
 * lock with, on the fenced backends, a fencing token of its own that a storage-side fence checks
 * per permit; a release hands a permit to a waiter.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DistributedSemaphoreIT extends OnEveryBackend {

    private static final Duration TTL = Duration.ofSeconds(10);

    private final String name = "backups-" + UUID.randomUUID().toString().substring(0, 8);

    @ParameterizedTest
    @EnumSource(Backend.class)
    void eachPermitIsGrantedOnceThenNoneUntilOneIsReleased(Backend backend) throws Exception {
        DistributedSemaphore<Lease> a = DistributedSemaphore.of(lock(backend, "host-a"), name, 3);
        DistributedSemaphore<Lease> b = DistributedSemaphore.of(lock(backend, "host-b"), name, 3);

        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(a.tryAcquire(TTL).orElseThrow());
        }
        assertThat(held).extracting(Lease::resource).containsExactlyInAnyOrder(name + "#1", name + "#2", name + "#3");
        assertThat(b.tryAcquire(TTL)).isEmpty();
        assertThat(a.holders())
                .hasSize(3)
                .allSatisfy((permit, holder) -> assertThat(holder.name()).contains("host-a"));

        PermitUnavailableException refused =
                catchThrowableOfType(PermitUnavailableException.class, () -> b.acquire(TTL, Duration.ofMillis(100)));
        assertThat(refused.busy()).isTrue();
        assertThat(refused.permits()).isEqualTo(3);
        assertThat(refused.answers()).containsOnlyKeys(name + "#1", name + "#2", name + "#3");
        assertThat(refused.answers().values())
                .allSatisfy(answer -> assertThat(answer).startsWith("held by ").contains("host-a"));
        assertThat(refused.getMessage())
                .startsWith("could not acquire a permit of '" + name + "' (3 permits) within ")
                .contains(name + "#1 held by ");

        Lease second = held.get(1);
        second.release();
        Lease taken = b.tryAcquire(TTL).orElseThrow();
        assertThat(taken.resource()).isEqualTo(second.resource());
        assertThat(b.permitOf(taken)).isEqualTo(a.permitOf(second));
        if (backend.fenced()) {
            assertThat(((FencedLease) taken).fencingToken()).isGreaterThan(((FencedLease) second).fencingToken());
        }
        taken.release();
        held.forEach(Lease::release);
        assertThat(b.holders()).isEmpty();
    }

    /**
     * Six processes take a permit three times each: never more than three hold one at once, every
     * acquire is granted, and on the fenced backends each permit's tokens grow from holder to holder.
     */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void neverMoreHoldersThanPermits(Backend backend) throws Exception {
        int processes = 6;
        int rounds = 3;
        AtomicInteger holding = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        Map<String, List<Long>> tokens = new HashMap<>();
        List<DistributedSemaphore<Lease>> semaphores = new ArrayList<>();
        for (int p = 0; p < processes; p++) {
            semaphores.add(DistributedSemaphore.of(lock(backend, "host-" + p), name, 3));
        }
        ExecutorService threads = Executors.newFixedThreadPool(processes);
        try {
            List<Future<Integer>> granted = new ArrayList<>();
            for (DistributedSemaphore<Lease> semaphore : semaphores) {
                granted.add(threads.submit(() -> {
                    int count = 0;
                    for (int r = 0; r < rounds; r++) {
                        try (Lease permit = semaphore.acquire(TTL, TestTime.scaled(Duration.ofSeconds(30)))) {
                            most.accumulateAndGet(holding.incrementAndGet(), Math::max);
                            if (permit instanceof FencedLease fenced) {
                                synchronized (tokens) {
                                    tokens.computeIfAbsent(permit.resource(), k -> new ArrayList<>())
                                            .add(fenced.fencingToken());
                                }
                            }
                            Thread.sleep(20); // the work under the permit
                            holding.decrementAndGet();
                        }
                        count++;
                    }
                    return count;
                }));
            }
            for (Future<Integer> each : granted) {
                assertThat(each.get(90, TimeUnit.SECONDS)).isEqualTo(rounds);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(most.get()).isBetween(1, 3);
        if (backend.fenced()) {
            assertThat(tokens.values().stream().mapToInt(List::size).sum()).isEqualTo(processes * rounds);
            assertThat(tokens)
                    .allSatisfy((permit, inOrder) -> assertThat(inOrder)
                            .isSortedAccordingTo(Long::compare)
                            .doesNotHaveDuplicates());
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aReleaseHandsItsPermitToAWaiter(Backend backend) throws Exception {
        DistributedSemaphore<Lease> a = DistributedSemaphore.of(lock(backend, "host-a"), name, 2);
        DistributedSemaphore<Lease> b = DistributedSemaphore.of(lock(backend, "host-b"), name, 2);
        Lease first = a.acquire(TTL, Duration.ZERO);
        Lease second = a.acquire(TTL, Duration.ZERO);

        CompletableFuture<Lease> waiter =
                CompletableFuture.supplyAsync(() -> b.acquire(TTL, TestTime.scaled(Duration.ofSeconds(30))));
        long released = System.nanoTime();
        second.release();
        Lease handed = waiter.get(60, TimeUnit.SECONDS);
        long took = System.nanoTime() - released;
        closing.add(handed::release);
        assertThat(handed.resource()).isEqualTo(second.resource());
        // A waiter looks at every permit again at least once a second, and is woken at once by the
        // release of the one it waits on.
        assertThat(Duration.ofNanos(took)).isLessThan(TestTime.scaled(Duration.ofSeconds(3)));
        assertThat(first.isValid()).isTrue();
        first.release();
    }

    /**
     * A holder paused past its permit writes late with the permit's old token: the fence refuses it,
     * while the holder that took the permit over and the holders of the other permits write.
     */
    @ParameterizedTest
    @EnumSource(
            value = Backend.class,
            names = {"ZOOKEEPER", "ETCD", "POSTGRESQL", "MARIADB"})
    void theFenceRefusesALateWriteUnderAPermitTakenOver(Backend backend) throws Exception {
        FencedStore store = new FencedStore();
        DistributedSemaphore<Lease> a = DistributedSemaphore.of(lock(backend, "host-a"), name, 3);
        DistributedSemaphore<Lease> b = DistributedSemaphore.of(lock(backend, "host-b"), name, 3);
        List<FencedLease> permits = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            permits.add((FencedLease) a.acquire(TTL, Duration.ZERO));
        }
        for (FencedLease permit : permits) {
            store.write(permit.resource(), permit.fencingToken());
        }

        FencedLease paused = permits.get(0);
        long lateToken = paused.fencingToken();
        paused.release(); // as its lease ends while its holder is paused
        FencedLease takenOver = (FencedLease) b.acquire(TTL, Duration.ZERO);
        assertThat(takenOver.resource()).isEqualTo(paused.resource());
        store.write(takenOver.resource(), takenOver.fencingToken());

        assertThatThrownBy(() -> store.write(paused.resource(), lateToken)).isInstanceOf(StaleTokenException.class);
        for (FencedLease current : permits.subList(1, 3)) {
            store.write(current.resource(), current.fencingToken()); // the others still write
            current.release();
        }
        store.write(takenOver.resource(), takenOver.fencingToken());
        takenOver.release();
    }

    @Test
    void badSettingsAreRefusedNamingThem() throws Exception {
        DistributedLock<Lease> lock = lock(Backend.REDIS, "host-a");
        assertThatThrownBy(() -> DistributedSemaphore.of(lock, name, 0))
                .isInstanceOf(IllegalSettingException.class)
                .hasMessage("permits must be 1 to 64 (an acquire may try each permit), was 0");
        assertThatThrownBy(() -> DistributedSemaphore.of(lock, name, 65))
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("was 65");
        assertThatThrownBy(() -> DistributedSemaphore.of(lock, "", 3)).isInstanceOf(IllegalSettingException.class);
        DistributedSemaphore<Lease> semaphore = DistributedSemaphore.of(lock, name, 3);
        assertThatThrownBy(() -> semaphore.permit(4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("permit must be 1 to 3, was 4");
        try (Lease other = lock.acquire(name + "-other", TTL, Duration.ZERO)) {
            assertThatThrownBy(() -> semaphore.permitOf(other))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("the lease on '" + name + "-other' is no permit of DistributedSemaphore[" + name
                            + ", 3 permits]");
        }
        try (Lease permit = semaphore.tryAcquire(TTL).orElseThrow()) {
            assertThat(semaphore.permitOf(permit)).isBetween(1, 3);
        }
    }
}
