package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.internal.LeaseTimes;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link FencedLease#remaining()} claims, compared with when the ensemble may expire the
 * session: one session timeout after it last heard from the client. A client cut off by a silent
 * partition (packets held, nothing reset) at T0 was last heard at T0 at the latest, so no sample
 * may put the lease's end after T0 + the session timeout (+ one tick, the ensemble's granularity).
 */
@Timeout(60)
class ZooKeeperLeaseValidityIT {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration SESSION = Duration.ofSeconds(3);
    private static final long TICK_NANOS =
            Duration.ofMillis(ZooKeeperServers.TICK_MILLIS).toNanos();

    @TempDir
    Path dataDir;

    private TestingCluster cluster;
    private FaultProxies proxies;
    private ZooKeeperLock lock;

    @AfterEach
    void stop() throws Exception {
        if (proxies != null) {
            proxies.close();
        }
        if (lock != null) {
            lock.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aPartitionedLeaseNeverClaimsTimeBeyondTheSessionsExpiry() throws Exception {
        cluster = ZooKeeperServers.cluster(dataDir, 3);
        proxies = ZooKeeperServers.proxies(cluster);
        lock = TestLocks.lock(proxies.connectString(), SESSION);
        FencedLease lease = lock.acquire("stock", TTL, Duration.ofSeconds(10));
        assertThat(lease.validity()).isEqualTo(SESSION);

        proxies.partition(0, 1, 2);
        long t0 = System.nanoTime(); // the ensemble hears nothing from the client after this
        long latestEnd = t0 + SESSION.toNanos() + TICK_NANOS;
        long[] samples = {0, 0, Long.MIN_VALUE}; // count, positive ones, latest claimed end - latestEnd (ns)
        String[] firstViolation = new String[1];
        TestTime.await(
                SESSION.multipliedBy(4),
                () -> {
                    long remaining = lease.remaining().toNanos();
                    long now = System.nanoTime(); // after: the claim ends no later than now + remaining
                    samples[0]++;
                    if (remaining == 0) {
                        return lease.lost().isDone(); // claims nothing
                    }
                    samples[1]++;
                    long excess = now + remaining - latestEnd;
                    if (excess > 0 && firstViolation[0] == null) {
                        firstViolation[0] = "at T0 + " + (now - t0) / 1_000_000 + " ms, remaining() was "
                                + remaining / 1_000_000 + " ms: the lease claimed to last until T0 + "
                                + (now + remaining - t0) / 1_000_000 + " ms, but the ensemble may expire the session"
                                + " at T0 + " + (latestEnd - t0) / 1_000_000 + " ms";
                    }
                    samples[2] = Math.max(samples[2], excess);
                    return lease.lost().isDone();
                },
                "the cut-off lease to report its loss");
        System.out.printf(
                "ZooKeeper: %d samples of remaining() after the partition, %d positive, the latest claimed end %d ms"
                        + " after T0 + session + tick (session %d ms)%n",
                samples[0], samples[1], samples[2] / 1_000_000, SESSION.toMillis());
        assertThat(firstViolation[0]).as("a claim beyond the session's expiry").isNull();
        assertThat(samples[1]).as("samples with time left after the partition").isPositive();
        assertThat(lease.remaining()).isZero();
    }

    @Test
    void aConnectedLeaseKeepsCountingFromItsLatestAnswer() throws Exception {
        cluster = ZooKeeperServers.cluster(dataDir, 3);
        proxies = ZooKeeperServers.proxies(cluster);
        lock = TestLocks.lock(proxies.connectString(), SESSION);
        long before = System.nanoTime();
        FencedLease lease = lock.acquire("stock", TTL, Duration.ofSeconds(10));
        Duration remaining = lease.remaining();
        long sampled = System.nanoTime();
        // Counted from a request sent during the acquire, less the drift allowance.
        long drift = LeaseTimes.driftNanos(SESSION.toNanos());
        assertThat(remaining).isPositive().isLessThanOrEqualTo(SESSION.minusNanos(drift));
        assertThat(sampled + remaining.toNanos()).isGreaterThanOrEqualTo(before + SESSION.toNanos() - drift);

        // Well past one session timeout, the lease's own requests have moved its end along.
        long until = System.nanoTime() + SESSION.multipliedBy(2).toNanos();
        TestTime.await(
                SESSION.multipliedBy(4),
                () -> System.nanoTime() - until >= 0 || !lease.isValid(),
                "two session timeouts to pass");
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.remaining()).isPositive().isLessThan(SESSION);
        lease.release();
        assertThat(lease.remaining()).isZero();
    }
}
