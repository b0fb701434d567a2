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
}
