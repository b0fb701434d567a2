package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockListener;
import io.quorumlock.RecordingListener;
import io.quorumlock.RetryPolicy;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.FaultProxy.Direction;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * A lease's validity against its keys' real TTLs on three redis-server nodes: an extension that
 * missed its quorum, two extensions at once, and keepAlive called late. The lease's remaining time
 * must never exceed the shortest PTTL of a node holding its token, read just before it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaseRenewalIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(5));
    /** The lease ends its round's TTL less the drift after the round's start; PTTL counts in whole ms. */
    private static final long ALLOWANCE_MILLIS = 10;

    private FaultProxies proxies;
    private final List<Redlock> clients = new ArrayList<>();

    @BeforeEach
    void startProxies() {
        proxies = FaultProxies.inFrontOf(redis.servers());
    }

    @AfterEach
    void closeClientsAndProxies() {
        clients.forEach(Redlock::close);
        proxies.close();
    }

    private Redlock client(List<String> nodes, Duration nodeTimeout, LockListener listener) {
        // Nodes started for the class or again before each test: the restart guard would keep them out.
        Redlock redlock = Redlock.builder()
                .nodes(nodes)
                .restartGuard(false)
                .nodeTimeout(nodeTimeout)
                .retry(RetryPolicy.jitteredBackoff(Duration.ofMillis(1), Duration.ofMillis(20)))
                .listener(listener)
                .build();
        clients.add(redlock);
        return redlock;
    }

    /** Each node's PTTL of the lease's key where it holds the lease's token, else -1. */
    private static long[] pttls(RedlockLease lease) {
        return IntStream.range(0, redis.size())
                .mapToLong(node -> {
                    try (Jedis jedis = redis.get(node).connect(Duration.ofSeconds(1))) {
                        boolean holds = lease.token().equals(jedis.get(lease.resource()));
                        long pttl = jedis.pttl(lease.resource()); // -2 if it ran out since the GET
                        return holds ? Math.max(0, pttl) : -1;
                    }
                })
                .toArray();
    }

    /**
     * The lease's remaining time, read after the nodes' PTTLs (both only fall), is no longer than
     * the shortest PTTL of a node that holds its token, or zero if none does.
     */
    private static void assertRemainingWithinItsKeys(RedlockLease lease) {
        long[] pttls = pttls(lease);
        Duration remaining = lease.remaining();
        long shortest = java.util.Arrays.stream(pttls).filter(p -> p >= 0).min().orElse(0);
        assertThat(remaining.toMillis())
                .as("the lease's remaining time against the PTTLs of its key %s", java.util.Arrays.toString(pttls))
                .isLessThanOrEqualTo(shortest + ALLOWANCE_MILLIS);
    }

    private static boolean everyNodesPttlAtMost(RedlockLease lease, Duration ttl) {
        return java.util.Arrays.stream(pttls(lease)).allMatch(p -> p >= -1 && p <= ttl.toMillis());
    }

    @Test
    void anExtensionToAShorterTtlThatMissesItsQuorumShortensTheLeaseToWhatItMayHaveSet() {
        Duration nodeTimeout = TestTime.scaled(Duration.ofMillis(100));
        Duration shorter = TestTime.scaled(Duration.ofMillis(400));
        Redlock slowed = client(proxies.uris(), nodeTimeout, LockListener.NONE);
        RedlockLease lease = (RedlockLease) slowed.acquire("a", Duration.ofSeconds(10), WAIT);
        // Nodes 1 and 2 apply the PEXPIRE after 300 ms, long after the round gave up on them.
        for (int node = 1; node <= 2; node++) {
            proxies.get(node).latency(TestTime.scaled(Duration.ofMillis(300)));
        }
        assertThat(lease.extend(shorter)).as("one yes in time, of three").isFalse();
        TestTime.await(
                Duration.ofSeconds(5),
                () -> everyNodesPttlAtMost(lease, shorter),
                "the shorter TTL on every node, through the slow proxies too");
        assertRemainingWithinItsKeys(lease);

        Lease other = client(redis.uris(), nodeTimeout, LockListener.NONE).acquire("a", Duration.ofSeconds(10), WAIT);
        assertThat(lease.isValid())
                .as("the lease when another client was granted its lock")
                .isFalse();
        other.release();
    }

    @Test
    void twoExtensionsAtOnceLeaveTheLeaseNoLongerThanThePexpireThatRanLast() {
        // A's replies are held 300 ms by the proxies; B, asked while A's PEXPIRE has run and its
        // replies are on their way, must not overtake it. The resource's hash is odd, so that B,
        // sent during A's round, would get a second connection per node of its own (the rounds of
        // one resource take the lane its hash picks among those open) and its replies back first.
        Duration longer = Duration.ofSeconds(30);
        Duration shorter = TestTime.scaled(Duration.ofMillis(3500));
        Redlock redlock = client(proxies.uris(), TestTime.scaled(Duration.ofSeconds(1)), LockListener.NONE);
        RedlockLease lease = (RedlockLease) redlock.acquire("overlap", Duration.ofSeconds(10), WAIT);
        for (var proxy : proxies) {
            proxy.latency(Direction.SERVER_TO_CLIENT, TestTime.scaled(Duration.ofMillis(300)), Duration.ZERO);
        }
        CompletableFuture<Boolean> a = CompletableFuture.supplyAsync(() -> lease.extend(longer));
        TestTime.await(
                Duration.ofSeconds(5),
                () -> java.util.Arrays.stream(pttls(lease)).allMatch(p -> p > 20_000),
                "A's PEXPIRE to run on every node");
        proxies.forEach(proxy -> proxy.clearLatency()); // A's replies keep their delay
        CompletableFuture<Boolean> b = CompletableFuture.supplyAsync(() -> lease.extend(shorter));
        assertThat(b.orTimeout(WAIT.toMillis(), TimeUnit.MILLISECONDS).join())
                .as("B held")
                .isTrue();
        assertThat(a.orTimeout(WAIT.toMillis(), TimeUnit.MILLISECONDS).join())
                .as("A held")
                .isTrue();
        TestTime.await(Duration.ofSeconds(5), () -> everyNodesPttlAtMost(lease, shorter), "B's PEXPIRE on every node");
        assertRemainingWithinItsKeys(lease);
        assertThat(lease.isValid()).isTrue();
        lease.release();
    }

    @Test
    void keepAliveCalledLateExtendsBeforeTheLeaseEnds() {
        Duration ttl = TestTime.scaled(Duration.ofSeconds(3));
        Redlock redlock = client(redis.uris(), TestTime.scaled(Duration.ofMillis(50)), LockListener.NONE);
        Redlock other = client(redis.uris(), TestTime.scaled(Duration.ofMillis(50)), LockListener.NONE);
        RedlockLease lease = (RedlockLease) redlock.acquire("c", ttl, WAIT);
        TestTime.await(
                Duration.ofSeconds(3),
                () -> lease.remaining().compareTo(ttl.dividedBy(2)) <= 0,
                "half of the lease to pass");
        long grantEnd = lease.validUntilNanos();
        CompletableFuture<LeaseLostException> lost = redlock.keepAlive(lease, ttl);
        TestTime.await(
                Duration.ofSeconds(3),
                () -> lease.validUntilNanos() != grantEnd || lost.isDone(),
                "the watchdog's first extension");
        assertThat(lost)
                .as("lost before its first extension: %s", lost.getNow(null))
                .isNotDone();
        TestTime.await(Duration.ofSeconds(3), () -> System.nanoTime() - grantEnd > 0, "the grant's end to pass");
        assertThat(other.tryAcquire("c", ttl))
                .as("another client's attempt past the grant's end")
                .isEmpty();
        assertThat(lease.isValid()).isTrue();
        lease.release();
        assertThat(lost).isNotDone();
    }

    @Test
    void keepAliveOnALeaseThatRanOutReportsItLostAtOnce() {
        RecordingListener listener = new RecordingListener();
        Duration ttl = TestTime.scaled(Duration.ofMillis(600));
        Redlock redlock = client(redis.uris(), TestTime.scaled(Duration.ofMillis(50)), listener);
        RedlockLease lease = (RedlockLease) redlock.acquire("c", ttl, WAIT);
        TestTime.await(Duration.ofSeconds(2), () -> !lease.isValid(), "the lease to run out");
        CompletableFuture<LeaseLostException> lost = redlock.keepAlive(lease, ttl);
        assertThat(lost).as("the keepAlive future of a lease already over").isDone();
        assertThat(lost.join()).hasMessageContaining("lease on 'c' lost");
        lease.release();
        // Told once, and not as released too: the listener hears one end of a lease.
        assertThat(listener.names()).filteredOn(e -> !e.startsWith("acquired")).containsExactly("lost c");
    }

    @Test
    void aLockRunsOnTheClockAndTheTimersItsBuilderIsGiven() {
        java.util.concurrent.atomic.AtomicLong ahead = new java.util.concurrent.atomic.AtomicLong();
        io.quorumlock.internal.Ticker clock = () -> System.nanoTime() + ahead.get();
        List<String> renewedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
        LockListener listener = new LockListener() {
            @Override
            public void extended(String backend, String resource, Duration took, boolean held) {
                renewedOn.add(Thread.currentThread().getName());
            }
        };
        try (Redlock lock = Redlock.builder()
                .nodes(redis.uris())
                .restartGuard(false) // nodes just started
                .ticker(clock)
                .timers(io.quorumlock.internal.Timers.threads("given", 1))
                .listener(listener)
                .build()) {
            Lease timed = lock.acquire("by-the-clock", Duration.ofSeconds(30), WAIT);
            ahead.set(Duration.ofSeconds(31).toNanos());
            assertThat(timed.isValid())
                    .as("a 30 s lease, 31 s later by the lock's clock")
                    .isFalse();
            ahead.set(0);
            timed.release();

            Duration ttl = TestTime.scaled(Duration.ofMillis(600));
            Lease kept = lock.acquire("kept", ttl, WAIT);
            lock.keepAlive(kept, ttl);
            TestTime.await(ttl.multipliedBy(3), () -> !renewedOn.isEmpty(), "a renewal");
            kept.release();
            assertThat(renewedOn).allMatch(name -> name.startsWith("quorumlock-given-worker"));
        }
    }
}
