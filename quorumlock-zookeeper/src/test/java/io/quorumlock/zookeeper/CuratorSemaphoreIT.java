package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LockHolder;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CuratorSemaphore} beside Curator's own {@link InterProcessSemaphoreV2} on one path of a
 * real ZooKeeper server, as during a migration from one to the other: both count the same lease
 * nodes, each waits for the other's leases, and each is woken by the other's release.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CuratorSemaphoreIT extends BesideCurator {

    private static final String PATH = "/jobs/backups";

    @Test
    void curatorsLeasesAndOursAreCountedTogether() throws Exception {
        CuratorSemaphore ours = CuratorSemaphore.of(lock, PATH, 2);
        InterProcessSemaphoreV2 theirs = new InterProcessSemaphoreV2(curator, PATH, 2);

        org.apache.curator.framework.recipes.locks.Lease curatorLease =
                theirs.acquire(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(curatorLease).isNotNull();
        FencedLease lease = ours.acquire(TTL, WAIT);
        assertThat(leaseNodes()).isEqualTo(2);
        assertThat(ours.holders())
                .extracting(LockHolder::name)
                .as("oldest first: Curator's node names its host in its data, ours its holder")
                .containsExactly(CURATOR_DATA, HOLDER);

        assertThat(ours.tryAcquire(TTL)).as("a third lease while both hold").isEmpty();
        assertThat(theirs.acquire(200, TimeUnit.MILLISECONDS))
                .as("Curator's third lease while both hold")
                .isNull();
        assertThatThrownBy(() -> ours.acquire(TTL, Duration.ofMillis(200)))
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("all 2 leases held");
        assertThat(leaseNodes()).as("no node left by the refused attempts").isEqualTo(2);

        lease.release();
        theirs.returnLease(curatorLease);
        assertThat(leaseNodes()).isZero();
    }

    @Test
    void ourWaiterIsWokenByCuratorsRelease() throws Exception {
        CuratorSemaphore ours = CuratorSemaphore.of(lock, PATH, 1);
        InterProcessSemaphoreV2 theirs = new InterProcessSemaphoreV2(curator, PATH, 1);
        org.apache.curator.framework.recipes.locks.Lease curatorLease = theirs.acquire();

        CompletableFuture<FencedLease> waiter = CompletableFuture.supplyAsync(() -> ours.acquire(TTL, WAIT), threads);
        TestTime.await(WAIT, () -> leaseNodes() == 2, "our lease node to wait beside Curator's");
        assertThat(waiter).isNotDone();

        theirs.returnLease(curatorLease);
        try (FencedLease lease = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(lease.isValid()).isTrue();
            assertThat(ours.holders())
                    .as("the lease's node and token, as the holders list them")
                    .containsExactly(new LockHolder(HOLDER, java.util.OptionalLong.of(lease.fencingToken())));
            assertThat(theirs.acquire(100, TimeUnit.MILLISECONDS))
                    .as("Curator's lease while ours holds")
                    .isNull();
        }
    }

    @Test
    void curatorsWaiterIsWokenByOurRelease() throws Exception {
        CuratorSemaphore ours = CuratorSemaphore.of(lock, PATH, 1);
        InterProcessSemaphoreV2 theirs = new InterProcessSemaphoreV2(curator, PATH, 1);
        FencedLease lease = ours.acquire(TTL, WAIT);

        Future<org.apache.curator.framework.recipes.locks.Lease> waiter =
                threads.submit(() -> theirs.acquire(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        TestTime.await(WAIT, () -> leaseNodes() == 2, "Curator's lease node to wait beside ours");
        assertThat(waiter).isNotDone();

        lease.release();
        org.apache.curator.framework.recipes.locks.Lease curatorLease =
                waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(curatorLease).as("Curator's lease, granted at our release").isNotNull();
        assertThat(ours.tryAcquire(TTL)).isEmpty();
        theirs.returnLease(curatorLease);
    }

    @Test
    void curatorsAndOurClientsTogetherNeverHoldMoreThanThePermits() throws Exception {
        int permits = 2;
        AtomicInteger holding = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger rounds = new AtomicInteger();
        List<Future<?>> clients = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            InterProcessSemaphoreV2 theirs = new InterProcessSemaphoreV2(curator, PATH, permits);
            clients.add(threads.submit(() -> {
                for (int i = 0; i < 10; i++) {
                    org.apache.curator.framework.recipes.locks.Lease l =
                            theirs.acquire(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    assertThat(l).as("Curator's lease within the wait").isNotNull();
                    hold(holding, most, rounds);
                    theirs.returnLease(l);
                }
                return null;
            }));
        }
        CuratorSemaphore ours = CuratorSemaphore.of(lock, PATH, permits);
        for (int c = 0; c < 3; c++) {
            clients.add(threads.submit(() -> {
                for (int i = 0; i < 10; i++) {
                    try (FencedLease l = ours.acquire(TTL, WAIT)) {
                        hold(holding, most, rounds);
                    }
                }
                return null;
            }));
        }
        for (Future<?> client : clients) {
            client.get(WAIT.toMillis() * 6, TimeUnit.MILLISECONDS);
        }
        assertThat(rounds).hasValue(60);
        assertThat(most.get()).as("the most holders at once").isBetween(1, permits);
        assertThat(leaseNodes()).isZero();
    }

    @Test
    void anInterruptedWaiterLeavesNoNodeAndTheNextTakesTheLease() throws Exception {
        CuratorSemaphore ours = CuratorSemaphore.of(lock, PATH, 1);
        FencedLease first = ours.acquire(TTL, WAIT);
        Future<FencedLease> waiter = threads.submit(() -> ours.acquire(TTL, WAIT));
        TestTime.await(WAIT, () -> leaseNodes() == 2, "the waiter's lease node");

        waiter.cancel(true);
        TestTime.await(WAIT, () -> leaseNodes() == 1, "the interrupted waiter's node to go");
        first.release();
        InterProcessSemaphoreV2 theirs = new InterProcessSemaphoreV2(curator, PATH, 1);
        org.apache.curator.framework.recipes.locks.Lease next = theirs.acquire(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(next).as("Curator's lease after the interrupted waiter").isNotNull();
        theirs.returnLease(next);
    }

    @Test
    void aLeaseIsLostWithItsSessionAndAcquiresGoOnAfterTheServerIsBack() throws Exception {
        CuratorSemaphore ours = CuratorSemaphore.of(lock, PATH, 1);
        FencedLease lease = ours.acquire(TTL, WAIT);

        server.stop();
        assertThat(lease.lost().get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                .as("the loss, with its evidence")
                .isNotNull();
        assertThat(lease.isValid()).isFalse();
        server.restart();

        try (FencedLease again = ours.acquire(TTL, WAIT)) {
            assertThat(again.isValid()).isTrue();
            assertThat(ours.holders()).extracting(LockHolder::name).containsExactly(HOLDER);
        }
    }

    @Test
    void severalLeasesAreTakenTogetherOrNotAtAll() {
        CuratorSemaphore ours = CuratorSemaphore.of(lock, PATH, 3);
        List<FencedLease> two = ours.acquire(2, TTL, WAIT);
        assertThat(two).hasSize(2);
        assertThatThrownBy(() -> ours.acquire(2, TTL, Duration.ofMillis(200)))
                .isInstanceOf(LockUnavailableException.class);
        assertThat(leaseNodes())
                .as("the one lease taken of the two asked for was given back")
                .isEqualTo(2);
        two.forEach(FencedLease::release);
        assertThat(leaseNodes()).isZero();
    }

    @Test
    void badSettingsAreRefusedNamingTheSetting() {
        assertThatThrownBy(() -> CuratorSemaphore.of(lock, "jobs", 3))
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("\"/jobs/backups\"");
        assertThatThrownBy(() -> CuratorSemaphore.of(lock, PATH, 0))
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("permits must be between 1");
        assertThatThrownBy(() -> CuratorSemaphore.of(lock, PATH, 2).acquire(3, TTL, WAIT))
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("count must be between 1 and the 2 permits");
        assertThat(CuratorSemaphore.of(lock, PATH, 2).toString()).contains(PATH, "2 permits");
    }

    /** Holds for a moment, counting the holders at once. */
    private static void hold(AtomicInteger holding, AtomicInteger most, AtomicInteger rounds)
            throws InterruptedException {
        int now = holding.incrementAndGet();
        most.accumulateAndGet(now, Math::max);
        Thread.sleep(5);
        holding.decrementAndGet();
        rounds.incrementAndGet();
    }

    /** How many lease nodes, Curator's or ours, the semaphore's leases directory holds. */
    private int leaseNodes() {
        try {
            return curator.getChildren().forPath(PATH + "/leases").size();
        } catch (KeeperException.NoNodeException e) {
            return 0;
        } catch (Exception e) {
            throw new QuorumlockException("could not list the leases: " + e, e);
        }
    }
}
