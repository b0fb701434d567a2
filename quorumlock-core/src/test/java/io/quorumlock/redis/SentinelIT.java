package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.testkit.RedisSentinels;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.ScriptedServer;
import io.quorumlock.testkit.TestTime;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.Jedis;

/**
 * The single-node lock on a master that Redis Sentinel manages: the master found through the
 * sentinels, a failover followed, sentinels that are down or lie skipped, a replica refused.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SentinelIT {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration PROBE = Duration.ofSeconds(2);

    private static Redlock lock(String uri) {
        return builder(uri).build();
    }

    private static RedlockBuilder builder(String uri) {
        return Redlock.builder()
                .node(uri)
                .nodeTimeout(TestTime.scaled(Duration.ofMillis(200)))
                .connectTimeout(TestTime.scaled(Duration.ofSeconds(2)));
    }

    /**
     * By default a grant on a master behind Sentinel counts once a replica acknowledged it (WAIT):
     * with the replica cut off, none is granted, the evidence says why, and no key is left.
     */
    @Test
    void aGrantNoReplicaAcknowledgedDoesNotCountAndLeavesNoKey() {
        try (RedisSentinels redis = RedisSentinels.start();
                Redlock lock = lock(redis.uri())) {
            RedisServer master = redis.master();
            lock.acquire("warm", TTL, TestTime.scaled(Duration.ofSeconds(5))).release();
            RedisServer replica = redis.cutOffReplica();
            try {
                assertThatThrownBy(() -> lock.acquire("synced", TTL, Duration.ZERO))
                        .isInstanceOf(LockUnavailableException.class)
                        .hasMessageContaining("NOREPLICAS 0 of 1 replica(s) acknowledged the write within");
                TestTime.await(
                        Duration.ofSeconds(5),
                        () -> valueOn(master, "synced") == null,
                        "the refused grant's key to go");
            } finally {
                replica.resume();
            }
            TestTime.await(
                    Duration.ofSeconds(20),
                    () -> lock.tryAcquire("synced", TTL)
                            .map(lease -> {
                                lease.release();
                                return true;
                            })
                            .orElse(false),
                    "a grant once the replica is back");
        }
    }

    private static String valueOn(RedisServer server, String key) {
        try (Jedis jedis = server.connect(TestTime.scaled(PROBE))) {
            return jedis.get(key);
        }
    }

    @Test
    void afterAFailoverTheNewMasterIsUsedAndALeaseWhoseKeyDidNotReachItIsLostWithItsNotice() throws Exception {
        try (RedisSentinels redis = RedisSentinels.start();
                Redlock lock =
                        builder(redis.uri()).waitForReplicas(0, Duration.ZERO).build()) {
            RedisServer first = redis.master();
            // The replica does not get the key (the article's failure: replication is asynchronous),
            // which the lock, told not to wait for a replica, does not see.
            RedisServer replica = redis.cutOffReplica();
            RedlockLease held =
                    (RedlockLease) lock.acquire("job", Duration.ofSeconds(6), TestTime.scaled(Duration.ofSeconds(5)));
            CompletableFuture<LeaseLostException> lost = lock.keepAlive(held, Duration.ofSeconds(6));
            assertThat(valueOn(first, "job")).isEqualTo(held.token());
            long killed = System.nanoTime();
            first.stop();
            replica.resume();
            RedisServer promoted = redis.awaitNamedMaster(replica);
            long named = System.nanoTime();
            assertThat(valueOn(promoted, "job"))
                    .as("the key never reached the replica")
                    .isNull();

            // The next grant is on the new master, within the sentinels' refresh after they named it.
            RedlockLease next = (RedlockLease) lock.acquire("other", TTL, TestTime.scaled(Duration.ofSeconds(10)));
            long used = System.nanoTime();
            assertThat(valueOn(promoted, "other")).isEqualTo(next.token());
            System.out.printf(
                    "failover: the sentinels named the new master %d ms after the kill; the lock used it %d ms"
                            + " after that%n",
                    (named - killed) / 1_000_000, (used - named) / 1_000_000);

            // The lease kept alive on the old master is renewed on the new one, which has no key.
            LeaseLostException notice = lost.get(TestTime.scaled(TTL).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(notice).isNotNull();
            assertThat(held.isValid()).isFalse();
            next.release();
        }
    }

    @Test
    void aLeaseWhoseKeyReachedTheReplicaIsKeptThroughAManualFailover() throws Exception {
        // Without WAIT: while the replica is promoted the master has none, and an extension that no
        // replica acknowledges does not count (see aGrantNoReplicaAcknowledged...).
        try (RedisSentinels redis = RedisSentinels.start();
                Redlock lock =
                        builder(redis.uri()).waitForReplicas(0, Duration.ZERO).build()) {
            // Longer than the sentinels take to name the promoted replica (2-3 s, more on a busy
            // machine), during which nothing renews the key there.
            Duration ttl = TestTime.scaledByLoad(Duration.ofSeconds(5));
            RedlockLease held = (RedlockLease) lock.acquire("report", ttl, TestTime.scaled(Duration.ofSeconds(5)));
            long acquired = System.nanoTime();
            CompletableFuture<LeaseLostException> lost = lock.keepAlive(held, ttl);
            RedisServer old = redis.master();
            TestTime.await(
                    Duration.ofSeconds(10),
                    () -> redis.servers().stream()
                            .filter(s -> s != old)
                            .allMatch(s -> held.token().equals(valueOn(s, "report"))),
                    "the key to reach the replica");
            RedisServer promoted = redis.failOver();
            // Renewals go to the new master once the sentinels name it: the key outlives the TTL
            // it was granted with there.
            TestTime.await(
                    Duration.ofSeconds(15).plus(ttl),
                    () -> System.nanoTime() - acquired > ttl.plusSeconds(1).toNanos()
                            && held.token().equals(valueOn(promoted, "report")),
                    "a renewal on the new master");
            assertThat(lost).isNotDone();
            assertThat(held.isValid()).isTrue();
            held.release();
            assertThat(valueOn(promoted, "report")).isNull();
        }
    }

    /**
     * The lock on the master the sentinels name, released there; a sentinel that is down or lies
     * skipped; one that names a replica gets no request to it; none answering is a clear error.
     */
    @Test
    void theMasterTheSentinelsNameIsUsedAndSentinelsThatAreDownOrLieAreNot() {
        try (RedisSentinels redis = RedisSentinels.start();
                ScriptedServer liar = ScriptedServer.start(ScriptedServer.sends("*1\r\n$4\r\nhost\r\n"));
                ScriptedServer silent = ScriptedServer.start(ScriptedServer.silent())) {
            try (Redlock lock = lock(redis.uri())) {
                RedlockLease lease = (RedlockLease) lock.acquire("stock", TTL, TestTime.scaled(Duration.ofSeconds(5)));
                assertThat(valueOn(redis.master(), "stock")).isEqualTo(lease.token());
                lease.release();
                assertThat(valueOn(redis.master(), "stock")).isNull();
                RedisServer replica = redis.servers().stream()
                        .filter(server -> server != redis.master())
                        .findFirst()
                        .orElseThrow();
                NodeCheck check = lock.checkNodes().nodes().get(0);
                assertThat(check.role()).isEqualTo("master");
                assertThat(check.findings().get(0))
                        .startsWith(
                                "the master 127.0.0.1:" + redis.master().port() + ", named by the sentinel 127.0.0.1:")
                        .contains("(of 3), with 1 connected replica(s) (127.0.0.1:" + replica.port() + " online, lag ")
                        .endsWith("one that is not may be granted twice");
            }
            redis.sentinels().get(0).stop();
            String skipping = redis.uri()
                    .replace(
                            "redis-sentinel://",
                            "redis-sentinel://127.0.0.1:" + silent.port() + ",127.0.0.1:" + liar.port() + ",");
            try (Redlock lock = lock(skipping)) {
                RedlockLease lease = (RedlockLease) lock.acquire("skip", TTL, TestTime.scaled(Duration.ofSeconds(5)));
                assertThat(valueOn(redis.master(), "skip")).isEqualTo(lease.token());
                lease.release();
            }

            RedisServer master = redis.master();
            RedisServer replica = redis.servers().get(redis.servers().get(0) == master ? 1 : 0);
            String port = Integer.toString(replica.port());
            String answer = "*2\r\n$9\r\n127.0.0.1\r\n$" + port.length() + "\r\n" + port + "\r\n*0\r\n";
            try (ScriptedServer wrong =
                            ScriptedServer.start(ScriptedServer.sends(answer.getBytes(StandardCharsets.US_ASCII)));
                    Redlock lock = lock("redis-sentinel://127.0.0.1:" + wrong.port() + "#mymaster")) {
                assertThatThrownBy(() -> lock.acquire("wrong", TTL, Duration.ZERO))
                        .isInstanceOf(LockUnavailableException.class)
                        .hasMessageContaining("127.0.0.1:" + port + " is not the master (ROLE: slave)");
            }
            for (RedisServer sentinel : redis.sentinels()) {
                sentinel.stop();
            }
            try (Redlock lock = lock(redis.uri())) {
                assertThatThrownBy(() -> lock.acquire("none", TTL, Duration.ZERO))
                        .isInstanceOf(LockUnavailableException.class)
                        .hasMessageContaining("no sentinel named the master mymaster: 127.0.0.1:"
                                + redis.sentinels().get(0).port() + ": connection refused");
            }
        }
    }

    @Test
    void aSentinelAddressServesTheSingleNodeLockOnly() {
        assertThatThrownBy(() -> Redlock.builder()
                        .node("redis-sentinel://127.0.0.1:26379#mymaster")
                        .node("redis://127.0.0.1:6379")
                        .node("redis://127.0.0.1:6380")
                        .build())
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("serves the single-node lock only");
        assertThatThrownBy(() -> Redlock.builder()
                        .nodes(List.of("redis://127.0.0.1:6379", "redis://127.0.0.1:6380", "redis://127.0.0.1:6381"))
                        .waitForReplicas(1, Duration.ofMillis(10))
                        .build())
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("waitForReplicas is for the single-node lock");
        assertThatThrownBy(() -> Redlock.builder()
                        .node("redis://127.0.0.1:6379")
                        .waitForReplicas(1, Duration.ofMillis(50))
                        .build())
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("shorter than nodeTimeout (50 ms)");
    }
}
