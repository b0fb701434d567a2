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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The registry's own contract on Redlock over three real redis-server nodes. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class QuorumlockLockRegistryIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final Duration TTL = TestTime.scaled(Duration.ofSeconds(2));

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
}
