package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.Lease;
import io.quorumlock.LockHolder;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * A key of another type than quorumlock's string at a resource's name, as another library keeps
 * its lock (Redisson's lock is a hash at its name), on real redis-server processes: the lock is
 * held by another library, named with the key's type, not a server error.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class OtherLibraryKeyIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(10));

    private final List<Redlock> open = new ArrayList<>();

    @AfterEach
    void closeAll() {
        open.forEach(Redlock::close);
    }

    private Redlock client(List<String> nodes) {
        Redlock redlock = Redlock.builder()
                .nodes(nodes)
                .holder("billing-worker-1")
                .restartGuard(false) // nodes started again before each test
                .nodeTimeout(TestTime.scaled(Duration.ofMillis(200)))
                .build();
        open.add(redlock);
        return redlock;
    }

    /** The one node that the migrating applications share, as a lock of one node. */
    private Redlock oneNode() {
        return client(redis.uris().subList(0, 1));
    }

    /** A hash at {@code key} on {@code node}, as a Redisson lock keeps it: a hold count per owner and thread. */
    private static void hash(int node, String key) {
        try (Jedis jedis = redis.get(node).connect(Duration.ofSeconds(1))) {
            jedis.hset(key, "3f1e9c2a-5b6d-4e7f-8a9b-0c1d2e3f4a5b:1", "1");
            jedis.pexpire(key, TTL.toMillis());
        }
    }

    private static void delete(int node, String key) {
        try (Jedis jedis = redis.get(node).connect(Duration.ofSeconds(1))) {
            jedis.del(key);
        }
    }

    @Test
    void aHashAtTheNameIsHeldByAnotherLibraryNamingItsType() {
        hash(0, "counter");
        Redlock redlock = oneNode();

        assertThat(redlock.tryAcquire("counter", TTL)).as("one attempt").isEmpty();
        LockUnavailableException refused = catchThrowableOfType(
                LockUnavailableException.class, () -> redlock.acquire("counter", TTL, Duration.ofMillis(50)));

        assertThat(refused.busy()).as("held, not an outage").isTrue();
        assertThat(refused.lastAttempt())
                .singleElement()
                .extracting(ServerAnswer::kind)
                .isEqualTo(ServerAnswer.Kind.HELD_BY_OTHER);
        assertThat(refused.getMessage())
                .contains(redis.uris().get(0) + ": held by another owner (held by another library: the key 'counter'"
                        + " is a hash, such as a Redisson lock, not quorumlock's string; the lock is free once that key"
                        + " is gone)")
                .doesNotContain("WRONGTYPE");
    }

    @Test
    void aKeyOfAnotherTypeIsNamedByItsType() {
        try (Jedis jedis = redis.get(0).connect(Duration.ofSeconds(1))) {
            jedis.rpush("jobs", "report");
        }
        LockUnavailableException refused = catchThrowableOfType(
                LockUnavailableException.class, () -> oneNode().acquire("jobs", TTL, Duration.ZERO));
        assertThat(refused.getMessage())
                .contains("held by another library: the key 'jobs' is a list, not quorumlock's string;");
    }

    @Test
    void theHolderOfAHashOnAQuorumIsUnnamedNotAServerError() {
        Redlock observer = client(redis.uris());
        hash(0, "counter");
        assertThat(observer.holder("counter")).as("a hash on 1 node of 3").isEmpty();
        hash(1, "counter");
        assertThat(observer.holder("counter"))
                .as("a hash on 2 nodes of 3")
                .contains(new LockHolder("", OptionalLong.empty()));
        assertThat(oneNode().holder("counter")).contains(new LockHolder("", OptionalLong.empty()));
    }

    @Test
    void aWaiterTakesTheLockOnceTheOtherLibrarysKeyIsGone() throws Exception {
        hash(0, "counter");
        Redlock redlock = oneNode();
        CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> redlock.acquire("counter", TTL, WAIT));
        TestTime.await(WAIT, () -> redlock.waiting("counter") == 1, "the waiter to wait");
        assertThat(waiter).isNotDone();

        delete(0, "counter"); // the other library's release: no message quorumlock hears, so its recheck finds it
        Lease lease = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(redlock.holder("counter").orElseThrow().name()).isEqualTo("billing-worker-1");
        lease.release();
    }
}
