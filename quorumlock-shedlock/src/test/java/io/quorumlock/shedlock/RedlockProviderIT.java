package io.quorumlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/** The provider over Redlock on three real redis-server nodes, two clients competing for one job. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedlockProviderIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final Duration AT_MOST = TestTime.scaled(Duration.ofSeconds(5));

    private TwoClients clients;
    private QuorumlockLockProvider a;
    private QuorumlockLockProvider b;

    @BeforeEach
    void clients() {
        clients = new TwoClients(() -> redlock(redis.uris()));
        a = clients.a;
        b = clients.b;
    }

    @AfterEach
    void close() {
        clients.close();
    }

    private static Redlock redlock(List<String> uris) {
        // Nodes started for this class: the restart guard would keep them out for the TTL.
        return Redlock.builder().nodes(uris).restartGuard(false).build();
    }

    private static LockConfiguration job(Duration atMost, Duration atLeast) {
        return new LockConfiguration(Instant.now(), "job", atMost, atLeast);
    }

    private static long pttlOnEveryNode(String key) {
        long max = -2;
        for (int i = 0; i < redis.size(); i++) {
            try (Jedis jedis = redis.get(i).connect(Duration.ofSeconds(1))) {
                max = Math.max(max, jedis.pttl(key));
            }
        }
        return max;
    }

    @Test
    void aLockHeldByOneClientIsBusyForTheOtherUntilUnlocked() {
        Optional<SimpleLock> held = a.lock(job(AT_MOST, Duration.ZERO));
        assertThat(held).isPresent();
        assertThat(pttlOnEveryNode("job")).isBetween(1L, AT_MOST.toMillis());

        assertThat(b.lock(job(AT_MOST, Duration.ZERO))).as("held by a").isEmpty();

        held.get().unlock();
        assertThat(pttlOnEveryNode("job")).as("released on every node").isEqualTo(-2);
        Optional<SimpleLock> next = b.lock(job(AT_MOST, Duration.ZERO));
        assertThat(next).as("free again").isPresent();
        next.get().unlock();
        assertThatThrownBy(() -> next.get().unlock()).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void unlockBeforeLockAtLeastForKeepsTheLockUntilThenAndItRunsOutByItself() {
        Duration atLeast = TestTime.scaled(Duration.ofMillis(1500));
        long start = System.nanoTime();
        SimpleLock held = a.lock(job(AT_MOST, atLeast)).orElseThrow();
        held.unlock();

        long pttl = pttlOnEveryNode("job");
        assertThat(pttl)
                .as("the TTL on the nodes is what is left of lockAtLeastFor, not lockAtMostFor")
                .isBetween(1L, atLeast.toMillis());
        assertThat(b.lock(job(AT_MOST, Duration.ZERO))).as("kept after unlock").isEmpty();

        SimpleLock[] next = new SimpleLock[1];
        TestTime.await(
                atLeast.plusSeconds(2),
                () -> (next[0] = b.lock(job(AT_MOST, Duration.ZERO)).orElse(null)) != null,
                "b to get the lock once lockAtLeastFor is over");
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(waitedMillis).as("free only after lockAtLeastFor").isGreaterThanOrEqualTo(atLeast.toMillis() - 20);
        next[0].unlock();
    }

    @Test
    void unlockAfterLockAtLeastForReleasesAtOnce() {
        Duration atLeast = Duration.ofMillis(100);
        SimpleLock held = a.lock(job(AT_MOST, atLeast)).orElseThrow();
        long lockedAt = System.nanoTime();
        TestTime.await(
                Duration.ofSeconds(2),
                () -> System.nanoTime() - lockedAt > atLeast.toNanos(),
                "lockAtLeastFor to pass");
        held.unlock();
        assertThat(pttlOnEveryNode("job")).isEqualTo(-2);
    }

    @Test
    void extendSetsTheNewLockAtMostForAndTheOldLockIsDone() {
        Duration shortTtl = TestTime.scaled(Duration.ofSeconds(1));
        SimpleLock held = a.lock(job(shortTtl, Duration.ZERO)).orElseThrow();

        Duration longer = TestTime.scaled(Duration.ofSeconds(10));
        SimpleLock extended = held.extend(longer, Duration.ZERO).orElseThrow();
        assertThat(pttlOnEveryNode("job")).isGreaterThan(shortTtl.toMillis());
        assertThatThrownBy(held::unlock).as("the old lock after extend").isInstanceOf(IllegalStateException.class);
        assertThat(QuorumlockLockProvider.currentLease()).as("still held").isPresent();

        long extendedAt = System.nanoTime();
        TestTime.await(
                shortTtl.multipliedBy(2),
                () -> System.nanoTime() - extendedAt > shortTtl.toNanos() * 3 / 2,
                "the first lockAtMostFor to pass");
        assertThat(b.lock(job(AT_MOST, Duration.ZERO)))
                .as("held past the first lockAtMostFor")
                .isEmpty();

        extended.unlock();
        assertThat(QuorumlockLockProvider.currentLease()).isEmpty();
        assertThat(b.lock(job(AT_MOST, Duration.ZERO))).isPresent().get().satisfies(SimpleLock::unlock);
    }

    @Test
    void extendOfALostLeaseIsEmptyAndClearsTheCurrentLease() {
        Duration shortTtl = TestTime.scaled(Duration.ofMillis(300));
        SimpleLock held = a.lock(job(shortTtl, Duration.ZERO)).orElseThrow();
        Lease lease = QuorumlockLockProvider.currentLease().orElseThrow();
        TestTime.await(Duration.ofSeconds(2), () -> !lease.isValid(), "the lease to run out");
        // The lease's validity ends a drift allowance and a round trip before its key does: b is
        // granted the lock once the key is gone.
        SimpleLock[] taken = new SimpleLock[1];
        TestTime.await(
                Duration.ofSeconds(2),
                () -> (taken[0] = b.lock(job(AT_MOST, Duration.ZERO)).orElse(null)) != null,
                "b to take the lock once a's key ran out");
        SimpleLock other = taken[0];

        assertThat(held.extend(AT_MOST, Duration.ZERO)).as("lost to b").isEmpty();
        assertThatThrownBy(held::unlock).isInstanceOf(IllegalStateException.class);
        // b's lease is the one b's thread holds now (this test is both threads).
        assertThat(QuorumlockLockProvider.currentLease()).isPresent().get().isNotSameAs(lease);
        assertThat(pttlOnEveryNode("job")).as("b's lock untouched").isGreaterThan(0);
        other.unlock();
        assertThat(QuorumlockLockProvider.currentLease()).isEmpty();
    }

    @Test
    void theRunningTaskSeesItsLeaseButNoTokenOnRedlock() {
        assertThat(QuorumlockLockProvider.currentLease()).isEmpty();
        SimpleLock held = a.lock(job(AT_MOST, Duration.ZERO)).orElseThrow();
        assertThat(QuorumlockLockProvider.currentLease())
                .get()
                .satisfies(lease -> assertThat(lease.resource()).isEqualTo("job"))
                .satisfies(lease -> assertThat(lease.isValid()).isTrue());
        assertThat(QuorumlockLockProvider.currentFencingToken())
                .as("a TTL lease has no token")
                .isEmpty();
        held.unlock();
        assertThat(QuorumlockLockProvider.currentLease()).isEmpty();
    }

    @Test
    void aBackendFailureSkipsTheRunInsteadOfThrowing() {
        try (RedisServer node = RedisServer.start()) {
            try (Jedis jedis = node.connect(Duration.ofSeconds(1))) {
                jedis.configSet("requirepass", "s3cret-pass"); // this client has no password: NOAUTH
            }
            try (Redlock noPassword = redlock(List.of(node.uri()));
                    QuorumlockLockProvider provider = new QuorumlockLockProvider(noPassword)) {
                assertThat(provider.lock(job(AT_MOST, Duration.ZERO))).isEmpty();
                assertThat(QuorumlockLockProvider.currentLease()).isEmpty();
            }
        }
    }

    @Test
    void aLockAtMostForTheLockRejectsNamesTheSetting() {
        assertThatThrownBy(
                        () -> a.lock(new LockConfiguration(Instant.now(), "job", Duration.ofNanos(1), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name = \"job\"")
                .hasMessageContaining("lockAtMostFor");
    }
}
