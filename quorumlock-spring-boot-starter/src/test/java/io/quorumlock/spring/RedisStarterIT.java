package io.quorumlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisCluster;
import io.quorumlock.testkit.RedisSentinels;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The auto-configured Redis lock and its health, in real application contexts over three real redis-server nodes. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisStarterIT {

    private static final Duration TTL = Duration.ofSeconds(10);
    private static final String SECRET = "n0t-in-any-0utput";

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        QuorumlockAutoConfiguration.class, QuorumlockHealthAutoConfiguration.class))
                .withPropertyValues(
                        "quorumlock.redis.nodes=" + String.join(",", redis.uris()),
                        // Nodes just started without fsync: the guard would keep them out of the vote for a TTL.
                        "quorumlock.redis.restart-guard=false",
                        "quorumlock.redis.node-timeout=200ms");
    }

    @Test
    void theBeanLocksAndReleasesOnTheNodes() {
        runner().run(context -> {
            assertThat(context).hasSingleBean(Redlock.class);
            @SuppressWarnings("unchecked")
            DistributedLock<Lease> lock = context.getBean(DistributedLock.class);
            assertThat(lock).isSameAs(context.getBean(Redlock.class));
            assertThat(context.getBean(Redlock.class).quorum()).isEqualTo(2);

            Lease lease = lock.acquire("invoice-run", TTL, Duration.ofSeconds(5));
            assertThat(lock.tryAcquire("invoice-run", TTL))
                    .as("held by the first lease")
                    .isEmpty();
            long holding = redis.servers().servers().stream()
                    .filter(node -> {
                        try (var jedis = node.connect(Duration.ofSeconds(2))) {
                            return !jedis.keys("*invoice-run*").isEmpty();
                        }
                    })
                    .count();
            assertThat(holding).as("nodes holding the key").isEqualTo(3);

            lease.release();
            Optional<Lease> again = lock.tryAcquire("invoice-run", TTL);
            assertThat(again).as("free again after the release").isPresent();
            again.get().release();
        });
    }

    /**
     * quorumlock.redis.sentinel.*: the single-node lock on the master the sentinels name; set beside
     * quorumlock.redis.nodes, or without sentinels, the start fails naming the properties.
     */
    @Test
    void theSentinelPropertiesPutTheLockOnTheMasterTheSentinelsName() {
        try (RedisSentinels sentinels = RedisSentinels.start()) {
            String nodes = String.join(
                    ",",
                    sentinels.sentinels().stream()
                            .map(s -> s.host() + ":" + s.port())
                            .toList());
            ApplicationContextRunner sentinelRunner = new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(QuorumlockAutoConfiguration.class))
                    .withPropertyValues(
                            "quorumlock.redis.sentinel.master=" + RedisSentinels.MASTER_NAME,
                            "quorumlock.redis.node-timeout=200ms");
            sentinelRunner
                    .withPropertyValues("quorumlock.redis.sentinel.nodes=" + nodes)
                    .run(context -> {
                        Redlock lock = context.getBean(Redlock.class);
                        assertThat(lock.quorum()).isEqualTo(1);
                        Lease lease = lock.acquire("sentinel-run", TTL, Duration.ofSeconds(5));
                        try (var jedis = sentinels.master().connect(Duration.ofSeconds(2))) {
                            assertThat(jedis.exists("sentinel-run")).isTrue();
                        }
                        lease.release();
                    });
            sentinelRunner
                    .withPropertyValues(
                            "quorumlock.redis.sentinel.nodes=" + nodes, "quorumlock.redis.wait-for-replicas=2")
                    .run(context -> assertThatThrownBy(
                                    () -> context.getBean(Redlock.class).acquire("sentinel-run", TTL, Duration.ZERO))
                            .hasMessageContaining("NOREPLICAS 1 of 2 replica(s) acknowledged the write within 100 ms"));
            sentinelRunner.run(context -> assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageStartingWith("quorumlock.redis.sentinel.nodes is empty: list the sentinels"));
            sentinelRunner
                    .withPropertyValues(
                            "quorumlock.redis.sentinel.nodes=" + nodes, "quorumlock.redis.nodes=redis://127.0.0.1:1")
                    .run(context -> assertThat(context.getStartupFailure())
                            .rootCause()
                            .hasMessageContaining(
                                    "quorumlock.redis.nodes and quorumlock.redis.sentinel.master are both" + " set"));
            sentinelRunner
                    .withPropertyValues("quorumlock.redis.sentinel.nodes=127.0.0.1:0")
                    .run(context -> assertThat(context.getStartupFailure())
                            .hasStackTraceContaining("quorumlock.redis.sentinel.nodes")
                            .hasStackTraceContaining("the port must be between 1 and 65535"));
        }
    }

    /**
     * quorumlock.redis.cluster.nodes: the single-node lock on a Redis Cluster, each resource on the
     * master of its slot; set beside quorumlock.redis.nodes, the start fails naming both.
     */
    @Test
    void theClusterPropertiesPutTheLockOnTheMasterOfEachResourcesSlot() {
        try (RedisCluster cluster = RedisCluster.start(3, 0)) {
            String seed = cluster.masters().get(0).host() + ":"
                    + cluster.masters().get(0).port();
            ApplicationContextRunner clusterRunner = new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(QuorumlockAutoConfiguration.class))
                    .withPropertyValues("quorumlock.redis.node-timeout=200ms");
            clusterRunner
                    .withPropertyValues("quorumlock.redis.cluster.nodes=" + seed)
                    .run(context -> {
                        Redlock lock = context.getBean(Redlock.class);
                        for (String resource : List.of("cluster-run-1", "cluster-run-2", "cluster-run-3")) {
                            Lease lease = lock.acquire(resource, TTL, Duration.ofSeconds(5));
                            try (var jedis = cluster.masterOf(resource).connect(Duration.ofSeconds(2))) {
                                assertThat(jedis.exists(resource)).isTrue();
                            }
                            lease.release();
                        }
                    });
            clusterRunner
                    .withPropertyValues(
                            "quorumlock.redis.cluster.nodes=" + seed, "quorumlock.redis.nodes=redis://127.0.0.1:1")
                    .run(context -> assertThat(context.getStartupFailure())
                            .rootCause()
                            .hasMessageStartingWith(
                                    "quorumlock.redis.cluster.nodes and quorumlock.redis.nodes are" + " both set"));
            clusterRunner
                    .withPropertyValues("quorumlock.redis.cluster.nodes=127.0.0.1:0")
                    .run(context -> assertThat(context.getStartupFailure())
                            .hasStackTraceContaining("quorumlock.redis.cluster.nodes")
                            .hasStackTraceContaining("the port must be between 1 and 65535"));
        }
    }

    /** Many callers of the bean share at most max-connections-per-node connections per node. */
    @Test
    void theCallersShareTheConnectionsPerNodeSet() {
        runner().withPropertyValues("quorumlock.redis.max-connections-per-node=2")
                .run(context -> {
                    Redlock lock = context.getBean(Redlock.class);
                    java.util.concurrent.ExecutorService callers = java.util.concurrent.Executors.newFixedThreadPool(8);
                    try {
                        List<java.util.concurrent.Future<Integer>> done = new java.util.ArrayList<>();
                        for (int t = 0; t < 8; t++) {
                            String resource = "shared-" + t;
                            done.add(callers.submit(() -> {
                                int granted = 0;
                                for (int i = 0; i < 200; i++) {
                                    Optional<Lease> lease = lock.tryAcquire(resource, TTL);
                                    if (lease.isPresent()) {
                                        granted++;
                                        lease.get().release();
                                    }
                                }
                                return granted;
                            }));
                        }
                        for (java.util.concurrent.Future<Integer> f : done) {
                            assertThat(f.get(60, TimeUnit.SECONDS))
                                    .as("grants of one caller")
                                    .isPositive();
                        }
                    } finally {
                        callers.shutdownNow();
                    }
                    for (var node : redis.servers()) {
                        assertThat(node.connectionsNamed("quorumlock"))
                                .as("connections to " + node.uri())
                                .isBetween(1, 2);
                    }
                });
    }

    @Test
    void closingTheContextClosesTheLock() {
        AtomicReference<Redlock> lock = new AtomicReference<>();
        runner().run(context -> {
            lock.set(context.getBean(Redlock.class));
            lock.get().tryAcquire("close-me", TTL).orElseThrow().release();
        });
        assertThatThrownBy(() -> lock.get().tryAcquire("close-me", TTL)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void healthIsUpWithThreeNodesAndDownWithTwoOfThemFrozen() {
        runner().run(context -> {
            HealthIndicator health = context.getBean(QuorumlockHealthAutoConfiguration.BEAN, HealthIndicator.class);
            Health up = health.health();
            System.out.println("health with 3 nodes: " + up);
            assertThat(up.getStatus()).isEqualTo(Status.UP);
            assertThat(up.getDetails()).containsEntry("quorum", 2).containsEntry("answered", 3);
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> nodes =
                    (List<Map<String, Object>>) up.getDetails().get("nodes");
            assertThat(nodes)
                    .hasSize(3)
                    .allSatisfy(node -> assertThat(node.get("role")).isEqualTo("master"));
            try {
                redis.get(0).pause();
                redis.get(1).pause();
                long start = System.nanoTime();
                Health down = health.health();
                long tookMillis = (System.nanoTime() - start) / 1_000_000;
                System.out.println("health with 2 of 3 nodes frozen (" + tookMillis + " ms): " + down);
                assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                assertThat(down.getDetails()).containsEntry("answered", 1);
                assertThat(tookMillis)
                        .as("the check is bounded by the node timeouts")
                        .isLessThan(5_000);
            } finally {
                redis.get(0).resume();
                redis.get(1).resume();
            }
            // The thawed nodes first answer what they owe, then vote in the check again.
            TestTime.await(
                    Duration.ofSeconds(5),
                    () -> health.health().getStatus().equals(Status.UP),
                    "the health to be up again once the nodes are resumed");
        });
    }

    @Test
    void thePasswordIsInNoHealthDetailAndNoMessage() {
        runner().withPropertyValues("quorumlock.redis.password=" + SECRET).run(context -> {
            Redlock lock = context.getBean(Redlock.class);
            Health health = context.getBean(QuorumlockHealthAutoConfiguration.BEAN, HealthIndicator.class)
                    .health();
            // The nodes have no password: AUTH is refused, and the refusal is reported without the password.
            assertThat(health.toString()).doesNotContain(SECRET);
            assertThat(lock.checkNodes().toString()).doesNotContain(SECRET);
            Throwable refused = org.assertj.core.api.Assertions.catchThrowable(
                    () -> lock.acquire("secret", TTL, Duration.ofMillis(500)));
            assertThat(refused).isNotNull();
            assertThat(QuorumlockConfigurationTest.messages(refused)).doesNotContain(SECRET);
        });
    }
}
