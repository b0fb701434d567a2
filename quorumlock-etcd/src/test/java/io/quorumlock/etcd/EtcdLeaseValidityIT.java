package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.LeaseOption;
import io.quorumlock.FencedLease;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.FaultProxy.Direction;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A lease never believes it has more time left than etcd gives it: what {@link
 * FencedLease#remaining()} says is compared with etcd's own time to live of the lease, read by
 * another client that reaches etcd directly.
 */
@Timeout(90)
class EtcdLeaseValidityIT {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    /**
     * The answers to the holder's renewals come 3 s late (a slow link, a client kept off the CPU):
     * etcd renewed the lease when the request came, so a renewal counted from when its answer
     * arrived would make the lease believe in seconds that etcd does not give it.
     */
    @Test
    void aLeaseWhoseRenewalAnswersComeLateNeverBelievesInMoreTimeThanEtcdGivesIt() throws Exception {
        // Longer than a third of the TTL and an answer's delay: renewals are answered late meanwhile.
        holdOverASlowLink(Duration.ofSeconds(30), Duration.ofSeconds(3), Duration.ofSeconds(20));
    }

    /**
     * Answers that come later than half the TTL still renew the lease, which etcd keeps alive: the
     * lease is not given up while etcd has it, and believes in no more time than etcd gives it.
     */
    @Test
    void aLeaseWhoseRenewalsAreAnsweredAfterHalfItsTtlIsKept() throws Exception {
        holdOverASlowLink(Duration.ofSeconds(8), Duration.ofMillis(3_500), Duration.ofSeconds(14));
    }

    /**
     * Holds a lease through a link whose answers come {@code late}, for {@code window}, comparing
     * all along what the lease believes it has left with what etcd gives it.
     */
    private static void holdOverASlowLink(Duration ttl, Duration late, Duration window) throws Exception {
        try (FaultProxies proxies = FaultProxies.inFrontOf(etcd.cluster());
                EtcdLock lock = EtcdLock.builder().endpoints(proxies.uris()).build();
                Client direct = Client.builder()
                        .endpoints(etcd.endpoints().toArray(String[]::new))
                        .build()) {
            FencedLease lease = lock.acquire("slow-link", ttl, Duration.ofSeconds(10));
            long leaseId = ((EtcdLease) lease).leaseId();
            proxies.get(0).latency(Direction.SERVER_TO_CLIENT, late, Duration.ZERO);

            long end = System.nanoTime() + window.toNanos();
            long worstExcess = Long.MIN_VALUE;
            String worst = "";
            int samples = 0;
            while (System.nanoTime() - end < 0) {
                // etcd first: the lease's own view, read after, can only have less time left.
                long ttlLeft = direct.getLeaseClient()
                        .timeToLive(leaseId, LeaseOption.DEFAULT)
                        .get(TestTime.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS)
                        .getTTL();
                Duration remaining = lease.remaining();
                // etcd rounds its time left down to whole seconds: it has less than ttlLeft + 1 s.
                // A lease etcd no longer knows (-1) has nothing left.
                long etcdBound = ttlLeft < 0 ? 0 : TimeUnit.SECONDS.toNanos(ttlLeft + 1);
                long excess = remaining.toNanos() - etcdBound;
                if (excess > worstExcess) {
                    worstExcess = excess;
                    worst = "remaining() " + remaining.toMillis() + " ms while etcd gave the lease " + ttlLeft
                            + " s (less than " + etcdBound / 1_000_000 + " ms)";
                }
                samples++;
                Thread.sleep(50); // the pace of the samples, not a wait for anything
            }
            System.out.printf(
                    "etcd: TTL %d s, %d samples with answers %d ms late; closest to etcd's time left: %s%n",
                    ttl.toSeconds(), samples, late.toMillis(), worst);
            assertThat(worstExcess)
                    .as("the lease believed in more time than etcd gave it: %s", worst)
                    .isLessThanOrEqualTo(0L);
            assertThat(lease.lost())
                    .as("kept alive over the slow link: %s", lease)
                    .isNotDone();
            proxies.clearFaults();
            lease.release();
        }
    }
}
