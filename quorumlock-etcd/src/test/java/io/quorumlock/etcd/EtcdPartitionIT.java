package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A client cut off by a fault proxy from a live etcd member, while another client reaches it directly. */
@Timeout(60)
class EtcdPartitionIT {

    private static final Duration TTL = Duration.ofSeconds(2);

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    @Test
    void etcdExpiresACutOffClientsLeaseAndGrantsTheLockToADirectClient() {
        try (FaultProxies proxies = FaultProxies.inFrontOf(etcd.cluster())) {
            try (EtcdLock cutOff = EtcdLock.builder().endpoints(proxies.uris()).build();
                    EtcdLock direct =
                            EtcdLock.builder().endpoints(etcd.endpoints()).build()) {
                FencedLease first = cutOff.acquire("stock", TTL, Duration.ofSeconds(10));

                proxies.partition(0);
                long start = System.nanoTime();
                try (FencedLease second = direct.acquire("stock", TTL, Duration.ofSeconds(20))) {
                    Duration waited = Duration.ofNanos(System.nanoTime() - start);
                    assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
                    // Granted once etcd expired the lease that was no longer kept alive.
                    assertThat(waited).isGreaterThanOrEqualTo(TTL.dividedBy(2));
                    TestTime.await(
                            Duration.ofSeconds(10), () -> !first.isValid(), "the cut-off client to see its lease end");
                    System.out.printf(
                            "etcd: the direct client got the lock %d ms after the partition (TTL %d ms)%n",
                            waited.toMillis(), TTL.toMillis());
                }
                proxies.heal();
            }
        }
    }

    @Test
    void aCutOffHoldersWorkIsStoppedBeforeTheDirectClientGetsTheLock() throws Exception {
        Duration ttl = Duration.ofSeconds(3);
        try (FaultProxies proxies = FaultProxies.inFrontOf(etcd.cluster());
                EtcdLock cutOff = EtcdLock.builder().endpoints(proxies.uris()).build();
                EtcdLock direct = EtcdLock.builder().endpoints(etcd.endpoints()).build()) {
            java.util.concurrent.CountDownLatch working = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.atomic.AtomicLong stoppedAt = new java.util.concurrent.atomic.AtomicLong();
            Thread holder = new Thread(() -> {
                try {
                    cutOff.runWithLease("work", ttl, Duration.ofSeconds(10), lease -> {
                        working.countDown();
                        try {
                            Thread.sleep(Duration.ofSeconds(30).toMillis());
                        } catch (InterruptedException e) {
                            stoppedAt.set(System.nanoTime());
                        }
                    });
                } catch (io.quorumlock.LeaseLostException expected) {
                    // the work was stopped: the lease was in doubt
                }
            });
            holder.start();
            assertThat(working.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

            proxies.partition(0);
            long start = System.nanoTime();
            try (FencedLease second = direct.acquire("work", ttl, Duration.ofSeconds(20))) {
                long grantedAt = System.nanoTime();
                holder.join(Duration.ofSeconds(10).toMillis());
                assertThat(stoppedAt.get())
                        .as("the cut-off holder's work was interrupted")
                        .isPositive();
                assertThat(stoppedAt.get())
                        .as("stopped before the other client's grant")
                        .isLessThan(grantedAt);
                System.out.printf(
                        "etcd: the cut-off holder's work stopped %d ms after the partition, the direct client got"
                                + " the lock %d ms after it (TTL %d ms)%n",
                        (stoppedAt.get() - start) / 1_000_000, (grantedAt - start) / 1_000_000, ttl.toMillis());
            }
            proxies.heal();
        }
    }
}
