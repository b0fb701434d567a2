package io.quorumlock.torture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.quorumlock.FencedLease;
import io.quorumlock.Lease;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.MariaDbServer;
import io.quorumlock.testkit.PostgresServer;
import io.quorumlock.testkit.TestTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Each client reaches the servers through proxies of its own: a partition cuts off one client, a slow node slows all. */
class TargetIT {

    private static final Duration TTL = Duration.ofSeconds(2);
    private static final Duration WAIT = Duration.ofSeconds(1);

    @ParameterizedTest
    @EnumSource(
            value = Strategy.class,
            names = {"REDIS", "REDLOCK", "ZOOKEEPER", "ETCD", "POSTGRES", "MARIADB"})
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void aPartitionCutsOffOneClientWhileTheOtherStillTakesTheLock(Strategy strategy, @TempDir Path dir)
            throws Exception {
        assumeAvailable(strategy);
        // pick 1 of 2 clients: the second one (index 1) is cut off
        Fault partition = new Fault(FaultKind.PARTITION, 0, 2 * TTL.toMillis(), 1);
        try (Target target = Target.start(strategy, dir, 2, Duration.ofSeconds(2));
                ClientLock reached = ClientLock.open(strategy, target.endpoints(1), TTL.toMillis());
                ClientLock cutOff = ClientLock.open(strategy, target.endpoints(2), TTL.toMillis())) {
            assertThat(target.endpoints(1)).isNotEqualTo(target.endpoints(2));
            String resource = "target-" + strategy.option();
            // Connected before the partition: a cold client's first grant can take seconds on a busy machine.
            cutOff.warmUp(resource, TestTime.scaled(Duration.ofSeconds(30)));

            long start = System.nanoTime();
            assertThat(target.start(partition))
                    .hasValueSatisfying(label -> assertThat(label).startsWith("partition client-2 from "));
            CompletableFuture<Lease> cutOffAcquire =
                    CompletableFuture.supplyAsync(() -> cutOff.lock().acquire(resource, TTL, WAIT));
            // The cut-off client's attempts may still reach a minority of Redis nodes: retry.
            TestTime.await(
                    Duration.ofSeconds(10),
                    () -> tryAcquireAndRelease(reached, resource),
                    "the other client to take the lock during the partition");
            // Till near the heal: a client that found its way round its proxies (as ZooKeeper's does
            // when it follows the ensemble's config to the servers' own ports) reconnects within it.
            long nearTheHeal = partition.durationMillis() - 500 - (System.nanoTime() - start) / 1_000_000;
            Thread.sleep(Math.max(0, nearTheHeal));
            assertThat(cutOffAcquire)
                    .as("the cut-off client is granted nothing during the partition")
                    .satisfiesAnyOf(
                            f -> assertThat(f).isNotDone(), f -> assertThat(f).isCompletedExceptionally());

            target.heal(partition);
            // An acquire that waited through the partition may be granted after the heal: give it back.
            Lease late = cutOffAcquire.handle((lease, e) -> lease).get(30, TimeUnit.SECONDS);
            if (late != null) {
                late.close();
            }
            TestTime.await(
                    Duration.ofSeconds(30),
                    () -> tryAcquireAndRelease(cutOff, resource),
                    "the cut-off client to take the lock after the heal");
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Strategy.class,
            names = {"REDIS"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aSlowNodeIsSlowForEveryClientUntilCleared(Strategy strategy, @TempDir Path dir) throws Exception {
        // 300 ms round trips: far beyond the Redis lock's 50 ms node timeout
        Fault slow = new Fault(FaultKind.SLOW, 0, 1_000, 0, 300);
        try (Target target = Target.start(strategy, dir, 2, Duration.ofSeconds(2));
                ClientLock first = ClientLock.open(strategy, target.endpoints(1), TTL.toMillis());
                ClientLock second = ClientLock.open(strategy, target.endpoints(2), TTL.toMillis())) {
            acquireAndRelease(first, "slow");

            assertThat(target.start(slow)).contains("slow +300ms redis-1");
            assertThat(tryAcquireAndRelease(first, "slow")).isFalse();
            assertThat(tryAcquireAndRelease(second, "slow")).isFalse();

            target.heal(slow);
            TestTime.await(Duration.ofSeconds(10), () -> tryAcquireAndRelease(first, "slow"), "first after the heal");
            TestTime.await(Duration.ofSeconds(10), () -> tryAcquireAndRelease(second, "slow"), "second after the heal");
        }
    }

    /**
     * A frozen database answers nothing: no client is granted the lock, and the holder's lease
     * runs out unrenewed; once thawed, the database grants the lock again, with a newer token.
     */
    @ParameterizedTest
    @EnumSource(
            value = Strategy.class,
            names = {"POSTGRES", "MARIADB"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aFrozenDatabaseGrantsNothingUntilThawed(Strategy strategy, @TempDir Path dir) throws Exception {
        assumeAvailable(strategy);
        Fault freeze = new Fault(FaultKind.FREEZE, 0, 1_000, 0);
        try (Target target = Target.start(strategy, dir, 2, Duration.ofSeconds(2));
                ClientLock holder = ClientLock.open(strategy, target.endpoints(1), TTL.toMillis());
                ClientLock other = ClientLock.open(strategy, target.endpoints(2), TTL.toMillis())) {
            String resource = "freeze-" + strategy.option();
            FencedLease held = (FencedLease) holder.lock().acquire(resource, TTL, WAIT);
            other.warmUp(resource + "-warm-up", TestTime.scaled(Duration.ofSeconds(30)));

            assertThat(target.start(freeze))
                    .contains("freeze " + (strategy == Strategy.POSTGRES ? "pg" : "mariadb") + "-1");
            // at once: an attempt waits for its request timeout (5 s), the lease ends within its TTL
            CompletableFuture<Boolean> free =
                    CompletableFuture.supplyAsync(() -> tryAcquireAndRelease(other, resource + "-free"));
            assertThat(held.lost()).succeedsWithin(TestTime.scaled(TTL.multipliedBy(3)));
            assertThat(free)
                    .succeedsWithin(TestTime.scaled(Duration.ofSeconds(15)))
                    .isEqualTo(false);

            target.heal(freeze);
            AtomicReference<Lease> next = new AtomicReference<>();
            TestTime.await(
                    Duration.ofSeconds(30),
                    () -> {
                        try {
                            other.lock().tryAcquire(resource, TTL).ifPresent(next::set);
                        } catch (RuntimeException e) {
                            // not answering yet
                        }
                        return next.get() != null;
                    },
                    "the other client to take the lock after the thaw");
            assertThat(((FencedLease) next.get()).fencingToken()).isGreaterThan(held.fencingToken());
            next.get().close();
        }
    }

    private static void assumeAvailable(Strategy strategy) {
        assumeTrue(strategy != Strategy.ETCD || EtcdCluster.available(), "no etcd binary");
        assumeTrue(
                strategy.servers() != Strategy.Servers.POSTGRES || PostgresServer.available(),
                () -> PostgresServer.unavailableReason().orElse("no PostgreSQL"));
        assumeTrue(
                strategy.servers() != Strategy.Servers.MARIADB || MariaDbServer.available(),
                () -> MariaDbServer.unavailableReason().orElse("no MariaDB"));
    }

    private static void acquireAndRelease(ClientLock lock, String resource) {
        assertThat(tryAcquireAndRelease(lock, resource))
                .as("acquired " + resource)
                .isTrue();
    }

    private static boolean tryAcquireAndRelease(ClientLock lock, String resource) {
        Optional<? extends Lease> lease;
        try {
            lease = lock.lock().tryAcquire(resource, TTL);
        } catch (RuntimeException e) {
            return false;
        }
        lease.ifPresent(Lease::close);
        return lease.isPresent();
    }
}
