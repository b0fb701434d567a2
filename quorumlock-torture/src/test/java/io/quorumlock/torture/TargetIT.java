package io.quorumlock.torture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.quorumlock.Lease;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.PostgresServer;
import io.quorumlock.testkit.TestTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
            names = {"REDIS", "REDLOCK", "ZOOKEEPER", "ETCD", "POSTGRES"})
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void aPartitionCutsOffOneClientWhileTheOtherStillTakesTheLock(Strategy strategy, @TempDir Path dir)
            throws Exception {
        assumeTrue(strategy != Strategy.ETCD || EtcdCluster.available(), "no etcd binary");
        assumeTrue(strategy != Strategy.POSTGRES || PostgresServer.available(), "no PostgreSQL");
        // pick 1 of 2 clients: the second one (index 1) is cut off
        Fault partition = new Fault(FaultKind.PARTITION, 0, 2 * TTL.toMillis(), 1);
        try (Target target = Target.start(strategy, dir, 2);
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
        try (Target target = Target.start(strategy, dir, 2);
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
