package io.quorumlock.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.DistributedReentrantLock;
import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/** The registry's own contract on Redlock over three real redis-server nodes. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class QuorumlockLockRegistryIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final Duration TTL = TestTime.scaled(Duration.ofSeconds(2));
    private static final Duration LONG = TestTime.scaled(Duration.ofSeconds(10));

    private Redlock redlock;
    private Redlock other;
    private QuorumlockLockRegistry<Lease> registry;

    @BeforeEach
    void registry() {
        redlock = Redlock.builder().nodes(redis.uris()).restartGuard(false).build();
        other = Redlock.builder().nodes(redis.uris()).restartGuard(false).build();
        registry = new QuorumlockLockRegistry<>(redlock, "orders:", TTL);
    }

    @AfterEach
    void close() {
        registry.close();
        redlock.close();
        other.close();
    }

    @Test
    void oneLockPerKeyOnThePrefixedResource() throws Exception {
        DistributedReentrantLock<Lease> lock = registry.obtain("42");
        assertThat(registry.obtain("42")).isSameAs(lock);
        assertThat(lock.resource()).isEqualTo("orders:42");
        assertThatThrownBy(() -> registry.obtain(42)).isInstanceOf(IllegalArgumentException.class);

        String seen = registry.executeLocked("42", () -> {
            assertThat(other.tryAcquire("orders:42", TTL))
                    .as("held for another client")
                    .isEmpty();
            return "ran";
        });
        assertThat(seen).isEqualTo("ran");
        assertThat(other.tryAcquire("orders:42", TTL)).as("free after").isPresent();
    }

    @Test
    void itsLocksAreSpringIntegrationsDistributedLockWithATtlPerCall() throws Exception {
        DistributedReentrantLock<Lease> obtained = registry.obtain("ttl");
        assertThat(obtained).isInstanceOf(org.springframework.integration.support.locks.DistributedLock.class);
        org.springframework.integration.support.locks.DistributedLock lock =
                (org.springframework.integration.support.locks.DistributedLock) obtained;

        lock.lock(LONG);
        try {
            Lease lease = obtained.lease().orElseThrow();
            assertThat(lease.validity())
                    .as("the call's TTL, not the registry's")
                    .isGreaterThan(TTL);
            assertThat(other.tryAcquire("orders:ttl", TTL))
                    .as("held for another client")
                    .isEmpty();
        } finally {
            lock.unlock();
        }
        assertThat(lock.tryLock(Duration.ZERO, TTL.multipliedBy(3))).isTrue();
        try {
            assertThat(obtained.lease().orElseThrow().validity()).isGreaterThan(TTL.multipliedBy(2));
            try (Lease elsewhere = other.acquire("orders:busy", LONG, Duration.ZERO)) {
                org.springframework.integration.support.locks.DistributedLock busy =
                        (org.springframework.integration.support.locks.DistributedLock) registry.obtain("busy");
                assertThat(busy.tryLock(Duration.ofMillis(100), LONG))
                        .as("held by another client")
                        .isFalse();
            }
        } finally {
            lock.unlock();
        }
    }

    @Test
    void renewExtendsTheHoldersLease() {
        DistributedReentrantLock<Lease> lock = registry.obtain("renewed");
        assertThatThrownBy(() -> registry.renewLock("renewed")).isInstanceOf(IllegalStateException.class);
        lock.lock();
        try {
            Lease lease = lock.lease().orElseThrow();
            registry.renewLock("renewed", TTL.multipliedBy(5));
            assertThat(lease.remaining()).isGreaterThan(TTL);
            registry.renewLock("renewed");
            assertThat(lease.remaining()).isLessThanOrEqualTo(TTL);
        } finally {
            lock.unlock();
        }
    }

    @Test
    void expiryForgetsOnlyLocksNotHeld() throws Exception {
        DistributedReentrantLock<Lease> held = registry.obtain("held");
        DistributedReentrantLock<Lease> idle = registry.obtain("idle");
        held.lock();
        try {
            Thread.sleep(5);
            registry.expireUnusedOlderThan(1);
            assertThat(registry.obtain("held")).isSameAs(held);
            assertThat(registry.obtain("idle")).as("a new object once expired").isNotSameAs(idle);
        } finally {
            held.unlock();
        }
    }

    @Test
    void closeReleasesALeaseStillHeldSoAnotherClientNeedNotWaitForTheTtl() throws Exception {
        DistributedReentrantLock<Lease> lock = registry.obtain("stuck");
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        CompletableFuture<Throwable> holder = CompletableFuture.supplyAsync(() -> {
            lock.lock();
            locked.countDown();
            try {
                closed.await();
                lock.unlock();
                return null;
            } catch (Throwable e) {
                return e;
            }
        });
        locked.await();
        long start = System.nanoTime();
        registry.close(); // the holder does not unlock: waits the loss notice, then releases
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TTL);
        assertThat(other.tryAcquire("orders:stuck", TTL)).isPresent();
        closed.countDown();
        assertThat(holder.get(10, TimeUnit.SECONDS)).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void closeTellsAHolderThatStopsWhenToldBeforeAnotherClientIsGrantedTheLock() throws Exception {
        closeWhileHeld("told", true);
    }

    @Test
    void closeTellsAHolderThatDoesNotStopBeforeReleasingItsLease() throws Exception {
        closeWhileHeld("deaf", false);
    }

    /**
     * A thread holds the lock of {@code key} through {@code executeLocked}, and stops when its
     * notice of loss completes if {@code stops}; another client waits for the resource; the
     * registry closes. When the other client is granted the lock, the holder was told already.
     */
    private void closeWhileHeld(String key, boolean stops) throws Exception {
        DistributedReentrantLock<Lease> lock = registry.obtain(key);
        CompletableFuture<CompletableFuture<LeaseLostException>> notice = new CompletableFuture<>();
        CompletableFuture<Void> ended = new CompletableFuture<>();
        CompletableFuture<Throwable> holder = CompletableFuture.supplyAsync(() -> {
            try {
                registry.executeLocked(key, () -> {
                    CompletableFuture<LeaseLostException> lost = lock.lost();
                    notice.complete(lost);
                    (stops ? CompletableFuture.anyOf(lost, ended) : ended).get(LONG.toMillis(), TimeUnit.MILLISECONDS);
                    return null;
                });
                return null;
            } catch (Throwable e) {
                return e;
            }
        });
        try {
            CompletableFuture<LeaseLostException> lost = notice.get(LONG.toMillis(), TimeUnit.MILLISECONDS);
            CompletableFuture<String> seen = CompletableFuture.supplyAsync(() -> {
                Lease lease = other.acquire("orders:" + key, TTL, LONG);
                String state = "notice " + (lost.isDone() ? "given" : "not given") + ", isLocked() " + lock.isLocked();
                lease.release();
                return state;
            });
            awaitListeners("quorumlock:released:orders:" + key);

            long start = System.nanoTime();
            registry.close();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TTL);
            assertThat(seen.get(LONG.toMillis(), TimeUnit.MILLISECONDS))
                    .as("what the holder's lock showed when another client was granted it")
                    .isEqualTo("notice given, isLocked() false");
        } finally {
            ended.complete(null);
        }
        assertThat(holder.get(LONG.toMillis(), TimeUnit.MILLISECONDS))
                .as("the holder's unlock, its hold ended by the close")
                .isInstanceOf(LeaseLostException.class);
    }

    /** Until the other client listens on every node for the releases of {@code channel}: it waits. */
    private static void awaitListeners(String channel) {
        TestTime.await(
                Duration.ofSeconds(10),
                () -> redis.servers().servers().stream().allMatch(node -> {
                    try (Jedis jedis = node.connect(Duration.ofSeconds(2))) {
                        Map<String, Long> subscribers = jedis.pubsubNumSub(channel);
                        return subscribers.getOrDefault(channel, 0L) == 1;
                    }
                }),
                "the other client to wait for " + channel);
    }
}
