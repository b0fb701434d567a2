package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The watchdog of {@code withLock} on five real redis-server nodes, a majority of them frozen
 * (SIGSTOP) while the work runs, across the moment the keep-alive extends: two thirds of the TTL left.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WatchdogIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(5);

    private static final Duration TTL = TestTime.scaled(Duration.ofSeconds(3));
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(5));
    /** Three of five: while they are frozen no extension round can reach a quorum. */
    private static final int[] MAJORITY = {0, 1, 2};

    private Redlock redlock;

    @BeforeEach
    void client() {
        // On nodes started for the class or again for each test: the restart guard would keep them out.
        redlock = Redlock.builder()
                .nodes(redis.uris())
                .restartGuard(false)
                .nodeTimeout(TestTime.scaled(Duration.ofMillis(50)))
                .retry(RetryPolicy.jitteredBackoff(Duration.ofMillis(1), Duration.ofMillis(20)))
                .build();
    }

    @AfterEach
    void close() {
        resumeMajority();
        redlock.close();
    }

    private static void freezeMajority() {
        for (int node : MAJORITY) {
            redis.get(node).pause();
        }
    }

    private static void resumeMajority() {
        for (int node : MAJORITY) {
            redis.get(node).resume();
        }
    }

    /** Returns, inside the work, shortly before the keep-alive extends (two thirds of the TTL left). */
    private static void untilTheExtensionIsNear(RedlockLease lease) throws InterruptedException {
        Duration early = TTL.dividedBy(3).multipliedBy(2).plus(TestTime.scaled(Duration.ofMillis(100)));
        while (lease.remaining().compareTo(early) > 0) {
            Thread.sleep(2);
        }
    }

    @Test
    void aMajorityFrozenForLessThanAThirdOfTheTtlDoesNotEndTheWork() throws Exception {
        String result = redlock.withLease("r", TTL, WAIT, lease -> {
            RedlockLease own = (RedlockLease) lease;
            untilTheExtensionIsNear(own);
            long validUntil = own.validUntilNanos();
            freezeMajority();
            try {
                Thread.sleep(TTL.dividedBy(6).toMillis()); // across the first extension
            } finally {
                resumeMajority();
            }
            // A retried round reaches the quorum once the nodes answer again.
            TestTime.await(TTL, () -> own.validUntilNanos() != validUntil, "a retried extension to hold");
            assertThat(lease.isValid()).isTrue();
            return "done";
        });
        assertThat(result).isEqualTo("done");
    }

    @Test
    void aMajorityFrozenForLongerEndsTheWorkAsLostWhileValidityIsLeft() {
        AtomicLong leftAtLoss = new AtomicLong(Long.MIN_VALUE);
        AtomicLong endAtLoss = new AtomicLong();
        long[] endWhenFrozen = {0};
        LeaseLostException e = org.junit.jupiter.api.Assertions.assertThrows(
                LeaseLostException.class,
                () -> redlock.withLease("r", TTL, WAIT, lease -> {
                    RedlockLease own = (RedlockLease) lease;
                    own.lost().thenRun(() -> {
                        endAtLoss.set(own.validUntilNanos());
                        leftAtLoss.set(own.validUntilNanos() - System.nanoTime());
                    });
                    untilTheExtensionIsNear(own);
                    freezeMajority();
                    // Freezing three processes on a loaded machine can outlast the 100 ms before
                    // the extension: one that held meanwhile (a round under way ends first) counts,
                    // and the next one is the frozen one.
                    endWhenFrozen[0] = own.endAfterRounds();
                    Thread.sleep(10 * TTL.toMillis()); // work that would outlive its lease
                    return "finished";
                }));
        assertThat(e.getSuppressed()).singleElement().isInstanceOf(InterruptedException.class);
        assertThat(e.getMessage()).contains("lease on 'r' lost", "of 5 votes in time");
        assertThat(endAtLoss.get())
                .as("the lease's end at the loss against its end when the majority froze: no round held since")
                .isEqualTo(endWhenFrozen[0]);
        Duration left = Duration.ofNanos(leftAtLoss.get());
        // The failed rounds were retried for most of the last third, and the work was stopped
        // with a tenth of the TTL still left for it to end in.
        assertThat(left).as("validity left when the loss was signalled").isPositive();
        assertThat(left).isGreaterThan(TTL.dividedBy(20)).isLessThan(TTL.dividedBy(4));
    }

    /**
     * The watchdog's extension shares the connections with every other caller of the lock; with
     * one connection per node, slow nodes and 48 callers busy on them, its rounds are pipelined
     * behind theirs and still come in time: the lease is kept, extension after extension.
     */
    @Test
    void anExtensionIsNotStarvedByTheCallersSharingItsConnections() throws Exception {
        // An extension is due with two thirds of the TTL left and given up with a tenth left: a
        // window of more than 1 s, room for a loaded machine; an extension queued behind 48 callers' rounds of
        // 30 ms each (the old transport, which failed here) would still miss it.
        Duration ttl = TestTime.scaled(Duration.ofSeconds(2));
        try (FaultProxies proxies = FaultProxies.inFrontOf(redis.servers());
                Redlock shared = Redlock.builder()
                        .nodes(proxies.uris())
                        .restartGuard(false)
                        .maxConnectionsPerNode(1)
                        .nodeTimeout(TestTime.scaled(Duration.ofMillis(250)))
                        .build()) {
            RedlockLease lease = (RedlockLease) shared.acquire("held", ttl, WAIT);
            CompletableFuture<?> lost = shared.keepAlive(lease, ttl);
            // Every round now takes about 30 ms, and 48 callers keep the one connection per node busy.
            for (FaultProxy proxy : proxies) {
                proxy.latency(Duration.ofMillis(15));
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong othersGranted = new AtomicLong();
            List<Thread> callers = new ArrayList<>();
            for (int i = 0; i < 48; i++) {
                String resource = "other-" + i;
                Thread caller = new Thread(() -> {
                    while (!stop.get()) {
                        Optional<Lease> other = shared.tryAcquire(resource, ttl);
                        other.ifPresent(l -> {
                            othersGranted.incrementAndGet();
                            l.release();
                        });
                    }
                });
                caller.setDaemon(true);
                caller.start();
                callers.add(caller);
            }
            long firstValidUntil = lease.validUntilNanos();
            try {
                // Three TTLs: the lease would have run out twice over without its extensions.
                assertThatThrownBy(() -> lost.get(3 * ttl.toMillis(), TimeUnit.MILLISECONDS))
                        .as("the lease was lost while other callers shared its connections")
                        .isInstanceOf(TimeoutException.class);
            } finally {
                stop.set(true);
                proxies.clearFaults();
                for (Thread caller : callers) {
                    caller.join(TestTime.scaled(Duration.ofSeconds(10)).toMillis());
                }
            }
            assertThat(lease.validUntilNanos() - firstValidUntil)
                    .as("how far the extensions moved the lease's end")
                    .isGreaterThan(2 * ttl.toNanos());
            assertThat(othersGranted.get()).as("the other callers' grants").isPositive();
            lease.release();
        }
    }
}
