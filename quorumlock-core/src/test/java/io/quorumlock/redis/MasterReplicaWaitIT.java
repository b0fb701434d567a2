package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.Jedis;

/**
 * The single-node lock on a {@code redis://} master with a replica: by default a grant counts once
 * the replicas the master listed in {@code ROLE} acknowledged it. A replica that goes away costs
 * one refused grant, taken back; the master is then asked again, and the next grant waits for
 * none.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class MasterReplicaWaitIT {

    private static final Duration TTL = Duration.ofSeconds(30);

    @Test
    void aGrantWaitsForTheReplicasTheMasterHasAndAReplicaGoneCostsOneRefusal() {
        try (RedisServer master = RedisServer.start();
                RedisServer replica = RedisServer.start()) {
            try (Jedis jedis = replica.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
                jedis.replicaof(master.host(), master.port());
            }
            TestTime.await(Duration.ofSeconds(30), () -> master.hasOnlineReplica(replica), "the replica to sync");
            try (Redlock lock = Redlock.builder()
                    .node(master.uri())
                    .nodeTimeout(TestTime.scaled(Duration.ofMillis(500)))
                    .build()) {
                assertThat(lock.checkNodes().nodes().get(0).findings())
                        .anyMatch(f -> f.contains("has 1 connected replica(s) (127.0.0.1:" + replica.port())
                                && f.contains("each grant and renewal waits for them (WAIT)"));
                try (Redlock none = Redlock.builder()
                        .node(master.uri())
                        .waitForReplicas(0, Duration.ZERO)
                        .build()) {
                    assertThat(none.checkNodes().nodes().get(0).findings())
                            .anyMatch(f -> f.contains("nothing waits for them (waitForReplicas(0, ...))"));
                }
                Lease first = lock.acquire("a", TTL, Duration.ZERO);
                assertThat(valueOn(replica, "a"))
                        .as("on the replica when granted")
                        .isNotNull();
                first.release();

                replica.stop();
                TestTime.await(Duration.ofSeconds(10), () -> !hasReplica(master), "the master to drop the replica");
                assertThatThrownBy(() -> lock.acquire("b", TTL, Duration.ZERO))
                        .isInstanceOf(LockUnavailableException.class)
                        .hasMessageContaining("NOREPLICAS 0 of 1 replica(s) acknowledged the write within 250 ms");
                TestTime.await(
                        Duration.ofSeconds(5), () -> valueOn(master, "b") == null, "the refused grant taken back");

                // The refusal had the master asked again: the next grant waits for no replica.
                Lease next = lock.acquire("b", TTL, Duration.ZERO);
                assertThat(next.isValid())
                        .as("granted without a replica to wait for")
                        .isTrue();
                next.release();
            }
        }
        try (RedisServer lone = RedisServer.start();
                Redlock lock = Redlock.builder().node(lone.uri()).build()) {
            lock.acquire("c", TTL, Duration.ZERO).release(); // no replica: nothing waited for
        }
    }

    /**
     * The first grant of a lock just built, before any connection has read the master's {@code
     * ROLE}, waits for its replica as every later grant does: a count not known yet is read once
     * the write is answered, behind the connection's {@code ROLE}, not taken for none.
     */
    @Test
    void theFirstGrantOfALockJustBuiltWaitsForTheReplica() {
        try (RedisServer master = RedisServer.start();
                RedisServer replica = RedisServer.start()) {
            try (Jedis jedis = replica.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
                jedis.replicaof(master.host(), master.port());
            }
            TestTime.await(Duration.ofSeconds(30), () -> master.hasOnlineReplica(replica), "the replica to sync");
            replica.pause();
            try (Redlock lock = Redlock.builder().node(master.uri()).build()) {
                assertThatThrownBy(() -> lock.acquire("first", TTL, Duration.ZERO))
                        .isInstanceOf(LockUnavailableException.class)
                        .hasMessageContaining("NOREPLICAS 0 of 1 replica(s) acknowledged the write");
                TestTime.await(
                        Duration.ofSeconds(5), () -> valueOn(master, "first") == null, "the refused grant taken back");
            } finally {
                replica.resume();
            }
        }
    }

    /**
     * A replica that acknowledges later than one WAIT (a busy host; here paused for 100 ms, four
     * times the default 25 ms) is asked again, rather than the grant refused.
     */
    @Test
    void aReplicaThatAcknowledgesLateIsWaitedForRatherThanTheGrantRefused() throws Exception {
        try (RedisServer master = RedisServer.start();
                RedisServer replica = RedisServer.start()) {
            try (Jedis jedis = replica.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
                jedis.replicaof(master.host(), master.port());
            }
            TestTime.await(Duration.ofSeconds(30), () -> master.hasOnlineReplica(replica), "the replica to sync");
            try (Redlock lock = Redlock.builder().node(master.uri()).build()) {
                lock.acquire("warm", TTL, Duration.ZERO).release(); // the master's ROLE read: 1 replica
                replica.pause();
                java.util.concurrent.CompletableFuture<Lease> grant =
                        java.util.concurrent.CompletableFuture.supplyAsync(
                                () -> lock.acquire("late", TTL, Duration.ZERO));
                try {
                    TestTime.await(Duration.ofSeconds(5), () -> valueOn(master, "late") != null, "the write");
                    // The fault's length, not a wait for a condition: the replica acknowledges late.
                    java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                } finally {
                    replica.resume();
                }
                Lease late = grant.get(TestTime.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS);
                assertThat(late.isValid()).isTrue();
                assertThat(valueOn(replica, "late"))
                        .as("on the replica when granted")
                        .isNotNull();
                late.release();
            }
        }
    }

    private static boolean hasReplica(RedisServer master) {
        try (Jedis jedis = master.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
            return !jedis.info("replication").contains("connected_slaves:0");
        }
    }

    private static String valueOn(RedisServer server, String key) {
        try (Jedis jedis = server.connect(TestTime.scaled(Duration.ofSeconds(2)))) {
            return jedis.get(key);
        }
    }
}
