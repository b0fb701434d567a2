package io.quorumlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumlock.FencedLease;
import io.quorumlock.Lease;
import io.quorumlock.etcd.EtcdLock;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The meters of a Redlock on five real redis-server nodes, and of an EtcdLock on a real etcd member. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class QuorumlockMetricsIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(5);

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    private static final Duration TTL = TestTime.scaled(Duration.ofSeconds(1));
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(5));

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private Redlock redlock(QuorumlockMetrics metrics) {
        return Redlock.builder()
                .nodes(redis.uris())
                .restartGuard(false)
                .nodeTimeout(TestTime.scaled(Duration.ofMillis(50)))
                .listener(metrics)
                .build();
    }

    private Timer acquire(String backend, String outcome) {
        return registry.get("quorumlock.acquire")
                .tag("backend", backend)
                .tag("outcome", outcome)
                .timer();
    }

    private double held(String backend) {
        Gauge gauge =
                registry.get("quorumlock.leases.held").tag("backend", backend).gauge();
        return gauge.value();
    }

    @Test
    void acquiresAreTimedByOutcomeAndTheHeldGaugeGoesUpThenDown() {
        QuorumlockMetrics metrics = new QuorumlockMetrics();
        metrics.bindTo(registry);
        try (Redlock lock = redlock(metrics)) {
            Lease first = lock.acquire("invoice", TTL, WAIT);
            Lease second = lock.acquire("report", TTL, WAIT);
            assertThat(held("redis")).isEqualTo(2);
            assertThat(lock.tryAcquire("invoice", TTL)).isEmpty();
            first.release();
            assertThat(held("redis")).isEqualTo(1);
            second.release();
            assertThat(held("redis")).isZero();
            first.release(); // idempotent: counted once

            assertThat(acquire("redis", "acquired").count()).isEqualTo(2);
            assertThat(acquire("redis", "busy").count()).isEqualTo(1);
            assertThat(acquire("redis", "unavailable").count()).isZero();
            assertThat(acquire("redis", "acquired").totalTime(TimeUnit.NANOSECONDS))
                    .isPositive()
                    .isLessThan(WAIT.toNanos());
            assertThat(held("redis")).isZero();
            assertThat(registry.find("quorumlock.acquire")
                            .tag("resource", "invoice")
                            .timers())
                    .as("no resource tag unless asked for")
                    .isEmpty();
        }
    }

    @Test
    void aLeaseLostWhenAMajorityFreezesPastTheExtensionIsCountedAndNoLongerHeld() throws Exception {
        QuorumlockMetrics metrics = new QuorumlockMetrics();
        metrics.bindTo(registry);
        try (Redlock lock = redlock(metrics)) {
            Lease lease = lock.acquire("frozen", TTL, WAIT);
            var lost = lock.keepAlive(lease, TTL);
            try (var majority = redis.servers().pause(0, 1, 2)) {
                lost.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            }
            await(() ->
                    registry.find("quorumlock.leases.lost").counters().stream().anyMatch(c -> c.count() == 1));
            lease.release();
            assertThat(registry.get("quorumlock.leases.lost")
                            .tag("backend", "redis")
                            .counter()
                            .count())
                    .isEqualTo(1);
            assertThat(held("redis")).isZero();
            assertThat(registry.get("quorumlock.extend")
                            .tag("backend", "redis")
                            .tag("outcome", "failed")
                            .timer()
                            .count())
                    .isPositive();
        }
    }

    @Test
    void extensionsAreTimedAndResourcesTaggedWhenAskedFor() throws Exception {
        QuorumlockMetrics metrics =
                QuorumlockMetrics.builder().tagResources(true).build();
        metrics.bindTo(registry);
        try (Redlock lock = redlock(metrics)) {
            Lease lease = lock.acquire("nightly", TTL, WAIT);
            assertThat(lease.extend(TTL)).isTrue();
            lease.release();
        }
        assertThat(registry.get("quorumlock.acquire")
                        .tag("backend", "redis")
                        .tag("outcome", "acquired")
                        .tag("resource", "nightly")
                        .timer()
                        .count())
                .isEqualTo(1);
        Timer extended = registry.get("quorumlock.extend")
                .tag("outcome", "extended")
                .tag("resource", "nightly")
                .timer();
        assertThat(extended.count()).isEqualTo(1);
        assertThat(extended.totalTime(TimeUnit.NANOSECONDS)).isPositive().isLessThan(WAIT.toNanos());
    }

    @Test
    void anEtcdLockIsMeteredUnderItsOwnBackendTag() {
        Assumptions.assumeTrue(EtcdCluster.available(), "no etcd binary");
        QuorumlockMetrics metrics = new QuorumlockMetrics();
        metrics.bindTo(registry);
        Duration ttl = Duration.ofSeconds(5);
        try (EtcdLock a = EtcdLock.builder()
                        .endpoints(etcd.endpoints())
                        .listener(metrics)
                        .build();
                EtcdLock b = EtcdLock.builder()
                        .endpoints(etcd.endpoints())
                        .listener(metrics)
                        .build()) {
            FencedLease lease = a.acquire("stock", ttl, WAIT);
            assertThat(held("etcd")).isEqualTo(1);
            assertThat(b.tryAcquire("stock", ttl)).isEmpty();
            lease.release();
            assertThat(held("etcd")).isZero();
        }
        assertThat(acquire("etcd", "acquired").count()).isEqualTo(1);
        assertThat(acquire("etcd", "busy").count()).isEqualTo(1);
        assertThat(registry.find("quorumlock.acquire").tag("backend", "redis").timers())
                .isEmpty();
    }

    @Test
    void aJdbcLockIsMeteredUnderItsOwnBackendTag() {
        QuorumlockMetrics metrics = new QuorumlockMetrics();
        metrics.bindTo(registry);
        org.h2.jdbcx.JdbcDataSource h2 = new org.h2.jdbcx.JdbcDataSource();
        h2.setURL("jdbc:h2:mem:metrics;DB_CLOSE_DELAY=-1");
        Duration ttl = Duration.ofSeconds(5);
        try (JdbcLock a = JdbcLock.builder()
                        .dataSource(h2)
                        .holder("a")
                        .listener(metrics)
                        .build();
                JdbcLock b = JdbcLock.builder()
                        .dataSource(h2)
                        .holder("b")
                        .listener(metrics)
                        .build()) {
            a.createTable();
            FencedLease lease = a.acquire("stock", ttl, WAIT);
            assertThat(held("jdbc")).isEqualTo(1);
            assertThat(b.tryAcquire("stock", ttl)).isEmpty();
            lease.release();
            assertThat(held("jdbc")).isZero();
        }
        assertThat(acquire("jdbc", "acquired").count()).isEqualTo(1);
        assertThat(acquire("jdbc", "busy").count()).isEqualTo(1);
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited for a condition").isLessThan(deadline);
            Thread.sleep(5);
        }
    }
}
