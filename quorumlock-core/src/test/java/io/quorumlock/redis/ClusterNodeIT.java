package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.Lease;
import io.quorumlock.RetryPolicy;
import io.quorumlock.redis.client.HashSlots;
import io.quorumlock.testkit.RedisCluster;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.Jedis;

/**
 * Redis Cluster nodes, three masters that share the slots: the lock's keys and its scripts as a
 * cluster node takes them. A node's scripts may touch the keys of its own slots only, so the line
 * of a resource's waiters lives in the resource's slot.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClusterNodeIT {

    private static RedisCluster cluster;

    @BeforeAll
    static void start() {
        cluster = RedisCluster.start(3, 0);
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void theClientHashesKeysToTheSlotsTheServerDoes() {
        Random random = new Random(20261206);
        String alphabet = "ab{}:é€😀 ";
        List<String> keys = new ArrayList<>(List.of("", "{", "}", "{}", "}{", "{a}", "a{b", "a}b", "a{}b", "{{a}}"));
        for (int i = 0; i < 500; i++) {
            StringBuilder key = new StringBuilder();
            int length = random.nextInt(12);
            for (int j = 0; j < length; j++) {
                key.appendCodePoint(alphabet.codePointAt(
                        alphabet.offsetByCodePoints(0, random.nextInt(alphabet.codePointCount(0, alphabet.length())))));
            }
            keys.add(key.toString());
        }
        for (String key : keys) {
            assertThat(HashSlots.of(key)).as("the slot of '%s'", key).isEqualTo(cluster.slotOf(key));
        }
    }

    @Test
    void aWaiterJoinsTheLineInTheResourcesSlotAndIsHandedTheLockByTheRelease() throws Exception {
        String resource = "lock:sku:42";
        // Waiters that retry only every 30 s: a grant within the bound below was a hand-off.
        RetryPolicy slow = RetryPolicy.jitteredBackoff(Duration.ofSeconds(30), Duration.ofSeconds(30));
        // The single-node lock on the master of the resource's slot, addressed as a plain node.
        String master = cluster.masterOf(resource).uri();
        try (Redlock a = Redlock.builder().node(master).build();
                Redlock b = Redlock.builder()
                        .node(master)
                        .retry(slow)
                        .recheck(Duration.ofSeconds(60))
                        .build()) {
            Lease held = a.acquire(resource, Duration.ofSeconds(30), Duration.ZERO);
            CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(
                    () -> b.acquire(resource, Duration.ofSeconds(30), Duration.ofSeconds(90)));
            TestTime.await(Duration.ofSeconds(10), () -> inLine(resource) == 1, "the waiter in the resource's line");
            assertThat(cluster.slotOf(Scripts.line(resource))).isEqualTo(cluster.slotOf(resource));

            held.release();
            Lease handed = waiter.get(TestTime.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(handed.isValid()).isTrue();
            handed.release();
            TestTime.await(Duration.ofSeconds(10), () -> inLine(resource) == 0, "the line to be empty");
        }
    }

    @Test
    void theSingleNodeLockOnAClusterMemberIsRefusedByTheCheckWithTheClustersShape() {
        try (Redlock lock =
                Redlock.builder().node(cluster.masters().get(2).uri()).build()) {
            NodeCheck check = lock.checkNodes().nodes().get(0);
            assertThat(check.verdict()).isEqualTo(NodeCheck.Verdict.ERROR);
            assertThat(check.findings())
                    .anyMatch(f -> f.startsWith("is a Redis Cluster member (3 master(s), 0 replica(s); this node is a"
                                    + " master of slots 10922-16383 (5462 of 16384)): given as redis://, the lock does"
                                    + " not follow the cluster's hash slots")
                            && f.endsWith("name the cluster as redis-cluster://host:port[,host:port...]"));
        }
    }

    private static long inLine(String resource) {
        try (Jedis jedis = cluster.masterOf(resource).connect(Duration.ofSeconds(2))) {
            return jedis.zcard(Scripts.line(resource));
        }
    }
}
