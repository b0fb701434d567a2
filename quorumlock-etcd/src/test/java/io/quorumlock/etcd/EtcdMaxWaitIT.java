package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.GetOption;
import io.quorumlock.FencedLease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.TestTime;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An acquire through a silent partition (the fault proxy holds the bytes, resets nothing) returns
 * within its wait and the documented overrun, and leaves no key that etcd would grant to nobody.
 */
@Timeout(40)
class EtcdMaxWaitIT {

    private static final Logger log = LoggerFactory.getLogger(EtcdMaxWaitIT.class);

    private static final Duration TTL = Duration.ofSeconds(6);
    private static final Duration MAX_WAIT = Duration.ofSeconds(1);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);
    /** For the test's own scheduling on a loaded machine (a late caller thread, a GC pause). */
    private static final Duration JITTER = Duration.ofMillis(400);

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    private static EtcdLock lock(java.util.List<String> endpoints) {
        return EtcdLock.builder()
                .endpoints(endpoints)
                .requestTimeout(REQUEST_TIMEOUT)
                .build();
    }

    private static Duration bound() {
        return MAX_WAIT.plus(AcquireLoop.overrun(REQUEST_TIMEOUT)).plus(TestTime.scaled(JITTER));
    }

    @Test
    void anAcquireThroughASilentPartitionReturnsWithinItsWait() {
        try (FaultProxies proxies = FaultProxies.inFrontOf(etcd.cluster());
                EtcdLock cutOff = lock(proxies.uris());
                EtcdLock direct = lock(etcd.endpoints())) {
            cutOff.acquire("warm-up", TTL, Duration.ofSeconds(10)).release();

            proxies.partition(0);
            long start = System.nanoTime();
            LockUnavailableException refused =
                    catchThrowableOfType(LockUnavailableException.class, () -> cutOff.acquire("stock", TTL, MAX_WAIT));
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            log.info(
                    "etcd: acquire(maxWait {} ms) through a silent partition returned after {} ms",
                    MAX_WAIT.toMillis(),
                    took.toMillis());
            assertThat(refused).as("refused within the wait").isNotNull();
            assertThat(refused).hasMessageContaining("within the wait");
            assertThat(took).isLessThanOrEqualTo(bound());

            proxies.heal();
            long healed = System.nanoTime();
            try (FencedLease lease = direct.acquire("stock", TTL, Duration.ofSeconds(3))) {
                assertThat(lease.isValid()).isTrue();
            }
            log.info(
                    "etcd: after the heal another client got the lock in {} ms",
                    (System.nanoTime() - healed) / 1_000_000);
            cutOff.acquire("stock", TTL, Duration.ofSeconds(3)).release();
        }
    }

    @Test
    void aWaiterGivenUpInASilentPartitionLeavesNoKeyForTheNextHolder() throws Exception {
        try (FaultProxies proxies = FaultProxies.inFrontOf(etcd.cluster());
                EtcdLock cutOff = lock(proxies.uris());
                EtcdLock direct = lock(etcd.endpoints());
                EtcdLock next = lock(etcd.endpoints())) {
            cutOff.acquire("warm-up", TTL, Duration.ofSeconds(10)).release();
            FencedLease held = direct.acquire("queue", TTL, Duration.ofSeconds(5));

            long start = System.nanoTime();
            CompletableFuture<Throwable> waiting = CompletableFuture.supplyAsync(() ->
                    catchThrowableOfType(LockUnavailableException.class, () -> cutOff.acquire("queue", TTL, MAX_WAIT)));
            TestTime.await(Duration.ofSeconds(2), () -> waiters(direct, "queue") == 2, "the cut-off client to queue");
            proxies.partition(0);
            Throwable refused = waiting.get(30, TimeUnit.SECONDS);
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            log.info(
                    "etcd: acquire(maxWait {} ms) queued behind a holder, then cut off, returned after {} ms",
                    MAX_WAIT.toMillis(),
                    took.toMillis());
            assertThat(refused).as("refused within the wait").isNotNull();
            assertThat(took).isLessThanOrEqualTo(bound());
            // Cut off, the client cannot know who holds the lock now: no holder is claimed.
            assertThat(((LockUnavailableException) refused).lastAttempt())
                    .as("the evidence of a refusal with etcd silent")
                    .noneMatch(o -> o.kind() == io.quorumlock.ServerAnswer.Kind.HELD_BY_OTHER);
            assertThat(refused.getMessage()).doesNotContain("held by");

            proxies.heal();
            long healed = System.nanoTime();
            // The given-up waiter's key goes with its revoked lease, well before the lease's TTL.
            TestTime.await(
                    Duration.ofSeconds(3), () -> waiters(direct, "queue") == 1, "the given-up waiter's key to go");
            held.release();
            try (FencedLease lease = next.acquire("queue", TTL, Duration.ofSeconds(2))) {
                assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
            }
            Duration after = Duration.ofNanos(System.nanoTime() - healed);
            log.info(
                    "etcd: after the heal the next client got the lock in {} ms (TTL {} ms)",
                    after.toMillis(),
                    TTL.toMillis());
            assertThat(after).isLessThan(TTL);
        }
    }

    @Test
    void anAcquireInterruptedWhileQueuedInASilentPartitionLeavesNoKeyAndKeepsTheFlag() throws Exception {
        try (FaultProxies proxies = FaultProxies.inFrontOf(etcd.cluster());
                EtcdLock cutOff = lock(proxies.uris());
                EtcdLock direct = lock(etcd.endpoints());
                EtcdLock next = lock(etcd.endpoints())) {
            cutOff.acquire("warm-up", TTL, Duration.ofSeconds(10)).release();
            FencedLease held = direct.acquire("interrupted", TTL, Duration.ofSeconds(5));

            CompletableFuture<Boolean> keptFlag = new CompletableFuture<>();
            Thread acquirer = new Thread(() -> {
                try {
                    cutOff.acquire("interrupted", TTL, Duration.ofSeconds(20)).release();
                    keptFlag.completeExceptionally(new AssertionError("granted a held lock"));
                } catch (QuorumlockException e) {
                    keptFlag.complete(Thread.currentThread().isInterrupted());
                } catch (RuntimeException e) {
                    keptFlag.completeExceptionally(e);
                }
            });
            acquirer.start();
            TestTime.await(
                    Duration.ofSeconds(2), () -> waiters(direct, "interrupted") == 2, "the cut-off client to queue");
            proxies.partition(0);
            acquirer.interrupt();
            assertThat(keptFlag.get(5, TimeUnit.SECONDS))
                    .as("the interrupt flag kept")
                    .isTrue();

            proxies.heal();
            // The interrupted waiter's key goes with its revoked lease, well before the lease's TTL.
            TestTime.await(
                    Duration.ofSeconds(3),
                    () -> waiters(direct, "interrupted") == 1,
                    "the interrupted waiter's key to go");
            held.release();
            try (FencedLease lease = next.acquire("interrupted", TTL, Duration.ofSeconds(2))) {
                assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
            }
        }
    }

    @Test
    void closingALockThatHoldsLeasesInASilentPartitionReturnsWithinTheRequestTimeout() throws Exception {
        try (FaultProxies proxies = FaultProxies.inFrontOf(etcd.cluster());
                EtcdLock direct = lock(etcd.endpoints())) {
            EtcdLock cutOff = lock(proxies.uris());
            List<String> resources = List.of("close-a", "close-b", "close-c");
            for (String resource : resources) {
                cutOff.acquire(resource, TTL, Duration.ofSeconds(5));
            }
            proxies.partition(0);
            long start = System.nanoTime();
            cutOff.close();
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            log.info(
                    "etcd: close() of a lock holding {} leases in a silent partition returned after {} ms",
                    resources.size(),
                    took.toMillis());
            assertThat(took).isLessThanOrEqualTo(REQUEST_TIMEOUT.plus(TestTime.scaled(JITTER)));

            proxies.heal();
            // Not kept alive since the close, the leases run out within their TTL, and their keys with them.
            TestTime.await(
                    TTL.plusSeconds(2),
                    () -> resources.stream().allMatch(r -> waiters(direct, r) == 0),
                    "the closed lock's keys to go with their leases");
            try (FencedLease lease = direct.acquire("close-a", TTL, Duration.ofSeconds(2))) {
                assertThat(lease.isValid()).isTrue();
            }
        }
    }

    /** The keys in the queue of {@code resource}: the holder's and the waiters'. */
    private static long waiters(EtcdLock lock, String resource) {
        ByteSequence prefix = ByteSequence.from(
                lock.lockName(resource).toString(StandardCharsets.UTF_8) + "/", StandardCharsets.UTF_8);
        return lock.client()
                .getKVClient()
                .get(
                        prefix,
                        GetOption.builder().isPrefix(true).withCountOnly(true).build())
                .join()
                .getCount();
    }
}
