package io.quorumlock.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.DistributedReentrantLock;
import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockHolder;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisException;
import org.redisson.config.Config;

/**
 * Redisson's {@code RLock} and this project's Redis lock on one real redis-server, as the old and
 * the new version of an application meet during a rolling migration (docs/migrating.md): Redisson
 * keeps a hash at the lock's name, this project a string, and each is kept out while the other
 * holds the name.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RedissonBesideQuorumlockIT {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(10));
    private static final String NAME = "counter";

    private static RedisServer redis;
    private static RedissonClient redisson;

    private Redlock redlock;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        Config config = new Config();
        config.useSingleServer()
                .setAddress(redis.uri())
                .setConnectionMinimumIdleSize(1)
                .setSubscriptionConnectionMinimumIdleSize(1);
        redisson = Redisson.create(config);
    }

    @AfterAll
    static void stop() {
        if (redisson != null) {
            redisson.shutdown();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @BeforeEach
    void lock() {
        redis.flushAll();
        redlock = Redlock.builder()
                .node(redis.uri())
                .restartGuard(false) // the node was started a moment ago
                .holder("billing-v2")
                .build();
    }

    @AfterEach
    void close() {
        redlock.close();
    }

    @Test
    void whileRedissonHoldsTheNameItIsHeldByAnotherLibraryAndTakenSoonAfterTheUnlock() throws Exception {
        RLock old = redisson.getLock(NAME);
        old.lock();

        assertThat(redlock.tryAcquire(NAME, TTL)).as("one attempt").isEmpty();
        assertThat(redlock.asLock(NAME, TTL).tryLock()).as("asLock's tryLock").isFalse();
        LockUnavailableException refused = catchThrowableOfType(
                LockUnavailableException.class, () -> redlock.acquire(NAME, TTL, Duration.ofMillis(50)));
        assertThat(refused.busy()).isTrue();
        assertThat(refused.getMessage())
                .contains(": held by another owner (held by another library: the key 'counter' is a hash, such as"
                        + " a Redisson lock, not quorumlock's string; the lock is free once that key is gone)");
        assertThat(redlock.holder(NAME)).contains(new LockHolder("", OptionalLong.empty()));

        CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> redlock.acquire(NAME, TTL, WAIT));
        assertThat(waiter).isNotDone();
        long unlocked = System.nanoTime();
        old.unlock();
        try (Lease lease = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(Duration.ofNanos(System.nanoTime() - unlocked))
                    .as("taken within the recheck interval (1 s) of the unlock, which is not heard")
                    .isLessThan(TestTime.scaled(Duration.ofSeconds(3)));
            assertThat(lease.isValid()).isTrue();
        }
    }

    @Test
    void whileQuorumlockHoldsTheNameRedissonFailsWithWrongTypeAndTakesNothing() throws Exception {
        RLock old = redisson.getLock(NAME);
        try (Lease lease = redlock.acquire(NAME, TTL, WAIT)) {
            assertThatThrownBy(old::tryLock).isInstanceOf(RedisException.class).hasMessageContaining("WRONGTYPE");
            assertThatThrownBy(() -> old.tryLock(100, 30_000, TimeUnit.MILLISECONDS))
                    .isInstanceOf(RedisException.class)
                    .hasMessageContaining("WRONGTYPE");
            assertThatThrownBy(old::lock).isInstanceOf(RedisException.class).hasMessageContaining("WRONGTYPE");
            assertThat(old.isLocked())
                    .as("Redisson's isLocked(): the key exists")
                    .isTrue();
            assertThat(lease.isValid()).isTrue();
            assertThat(redlock.holder(NAME).map(LockHolder::name)).contains("billing-v2");
        }
        assertThat(old.tryLock()).as("Redisson, once the lease is released").isTrue();
        old.unlock();
    }

    @Test
    void redissonsForceUnlockDeletesTheKeyAndTheHolderIsTold() throws Exception {
        DistributedReentrantLock<Lease> lock = redlock.asLock(NAME, TestTime.scaled(Duration.ofSeconds(2)));
        lock.lock();
        CompletableFuture<LeaseLostException> lost = lock.lost();

        assertThat(redisson.getLock(NAME).forceUnlock())
                .as("Redisson deletes whatever key is at the name")
                .isTrue();

        LeaseLostException notice = lost.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(notice.resource()).isEqualTo(NAME);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
    }
}
