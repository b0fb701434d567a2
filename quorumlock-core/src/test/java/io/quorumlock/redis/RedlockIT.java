package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/** The lock on real redis-server processes, with the faults injected by the test kit. */
class RedlockIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(5);

    private static final Duration TTL = Duration.ofSeconds(5);
    private static final Duration WAIT = Duration.ofSeconds(5);

    private final List<Redlock> clients = new ArrayList<>();

    @AfterEach
    void closeClients() {
        clients.forEach(Redlock::close);
    }

    private Redlock client(int nodes, Duration nodeTimeout) {
        // These tests are about other behaviour, on nodes started for the class or again by the
        // reset before each test: the restart guard would keep them out for a TTL. RedlockDebateIT
        // and TransportIT test the guard.
        Redlock redlock = Redlock.builder()
                .nodes(redis.uris().subList(0, nodes))
                .restartGuard(false)
                .nodeTimeout(nodeTimeout)
                .retry(RetryPolicy.jitteredBackoff(Duration.ofMillis(1), Duration.ofMillis(20)))
                .build();
        clients.add(redlock);
        return redlock;
    }

    private Redlock client(int nodes) {
        return client(nodes, TestTime.scaled(Duration.ofMillis(50)));
    }

    private static String valueOn(int node, String key) {
        RedisServer server = redis.get(node);
        try (Jedis jedis = server.connect(Duration.ofMillis(1000))) {
            return jedis.get(key);
        }
    }

    private static long holders(int nodes, String key) {
        return java.util.stream.IntStream.range(0, nodes)
                .filter(i -> valueOn(i, key) != null)
                .count();
    }

    // ---- the article's two tests --------------------------------------------------------------------

    @Test
    void secondClientCannotAcquireWhileFirstHoldsLock() {
        Redlock clientA = client(3);
        Redlock clientB = client(3);
        Lease lockA = clientA.acquire("lock:order:42", TTL, WAIT);
        assertThat(lockA.validity()).isLessThan(TTL).isPositive();
        assertThat(clientB.tryAcquire("lock:order:42", TTL)).isEmpty();
        lockA.release();
        assertThat(clientB.tryAcquire("lock:order:42", TTL)).isPresent();
    }

    @Test
    void stillAcquiresWhenOneNodeIsDown() {
        redis.get(2).stop();
        assertThat(client(3).acquire("lock:order:99", TTL, WAIT).isValid()).isTrue();
    }

    // ---- faults ----------------------------------------------------------------------------------------

    @Test
    void twoOfThreeNodesDownFailsAndLeavesNoKeyBehind() {
        redis.get(1).stop();
        redis.get(2).stop();
        Redlock redlock = client(3);
        LockUnavailableException tried = org.junit.jupiter.api.Assertions.assertThrows(
                LockUnavailableException.class,
                () -> redlock.tryAcquire("r", TTL),
                "tryAcquire with two of three nodes down");
        assertThat(tried.busy()).as("an outage, not a holder").isFalse();
        assertThat(tried.lastAttempt()).hasSize(3);
        assertThat(tried.getMessage()).contains("2 needed", "unreachable");
        assertThat(valueOn(0, "r")).as("the live node's key was released").isNull();
        LockUnavailableException e = org.junit.jupiter.api.Assertions.assertThrows(
                LockUnavailableException.class, () -> redlock.acquire("r", TTL, Duration.ofMillis(100)));
        assertThat(e.votes()).isLessThanOrEqualTo(1);
        assertThat(e.getMessage()).contains("2 needed", "unreachable (could not connect: connection refused)");
        assertThat(valueOn(0, "r")).isNull();
    }

    @Test
    void tryAcquireOnASingleNodeThatIsNotListeningThrowsAndIsEmptyOnlyWhenTheLockIsHeld() throws Exception {
        int closed;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            closed = socket.getLocalPort(); // closed again: nothing listens there
        }
        Redlock nowhere = Redlock.builder()
                .nodes(List.of("redis://127.0.0.1:" + closed))
                .restartGuard(false)
                .build();
        clients.add(nowhere);
        LockUnavailableException down = org.junit.jupiter.api.Assertions.assertThrows(
                LockUnavailableException.class,
                () -> nowhere.tryAcquire("job", TTL),
                "tryAcquire on a node that is not listening");
        assertThat(down.busy()).isFalse();
        assertThat(down.lastAttempt())
                .singleElement()
                .extracting(ServerAnswer::kind)
                .isEqualTo(ServerAnswer.Kind.UNREACHABLE);

        Redlock holder = client(1);
        Redlock other = client(1);
        Lease held = holder.acquire("job", TTL, WAIT);
        assertThat(other.tryAcquire("job", TTL)).as("held by another client").isEmpty();
        held.release();
    }

    @Test
    void aFrozenNodeDelaysNeitherAcquireNorRelease() {
        // A node timeout of 4 s: if acquire or release waited for the frozen node, it would show.
        Redlock redlock = client(5, TestTime.scaled(Duration.ofSeconds(4)));
        Duration ttl = TestTime.scaled(Duration.ofSeconds(30));
        redlock.tryAcquire("warm-up", ttl).orElseThrow().release(); // connections are open
        redis.get(4).pause();
        long start = System.nanoTime();
        Lease lease = redlock.tryAcquire("r", ttl).orElseThrow();
        long acquired = System.nanoTime();
        lease.release();
        long released = System.nanoTime();
        // Bounds far below the node timeout and far above a round on a loaded machine.
        Duration bound = TestTime.scaled(Duration.ofMillis(1500));
        assertThat(Duration.ofNanos(acquired - start)).isLessThan(bound);
        assertThat(Duration.ofNanos(released - acquired)).isLessThan(bound);
        assertThat(holders(4, "r")).isZero();
        // The frozen node applies the SET when it resumes; its late yes is released as well.
        redis.get(4).resume();
        TestTime.await(Duration.ofSeconds(5), () -> valueOn(4, "r") == null, "the late grant on node 4 to be released");
    }

    @Test
    void aFrozenNodeCostsAtMostTheNodeTimeoutWhenItsVoteIsNeeded() {
        // Long enough for node 0 to answer a fresh client on a loaded machine; the slack below is
        // one node timeout, so a third wait for the frozen node would still show.
        Duration nodeTimeout = TestTime.scaled(Duration.ofMillis(500));
        Redlock redlock = client(3, nodeTimeout);
        redis.get(1).stop();
        redis.get(2).pause();
        long start = System.nanoTime();
        assertThatThrownBy(() -> redlock.tryAcquire("r", TTL)).isInstanceOf(LockUnavailableException.class);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        // One round for the grant, one for the clean-up: each bounded by the node timeout.
        assertThat(took).isLessThan(nodeTimeout.multipliedBy(2).plus(TestTime.scaled(Duration.ofMillis(500))));
        assertThat(valueOn(0, "r")).isNull();
    }

    @Test
    void releaseWithAForeignTokenDeletesNothing() {
        Redlock clientA = client(3);
        Lease expired = clientA.acquire("r", Duration.ofSeconds(1), WAIT);
        TestTime.await(Duration.ofSeconds(5), () -> holders(3, "r") == 0, "A's keys to expire");
        Lease b = client(3).acquire("r", TTL, WAIT);
        TestTime.await(Duration.ofSeconds(2), () -> holders(3, "r") == 3, "B's third grant to land");
        String bToken = valueOn(0, "r");
        expired.release(); // A's token is no longer there: nothing of B's may go
        assertThat(holders(3, "r")).isEqualTo(3);
        assertThat(valueOn(0, "r")).isEqualTo(bToken);
        assertThat(b.isValid()).isTrue();
    }

    @Test
    void extendKeepsTheLockPastItsFirstTtl() {
        Redlock redlock = client(3);
        Redlock other = client(3);
        Duration ttl = Duration.ofSeconds(1);
        Lease lease = redlock.acquire("r", ttl, WAIT);
        // Two and a half TTLs: without its extensions the lease would have run out twice.
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2500);
        while (System.nanoTime() < end) {
            assertThat(lease.extend(ttl)).isTrue();
            assertThat(other.tryAcquire("r", ttl)).isEmpty();
            // Extended with 600 ms left: time for a descheduled thread on a loaded machine.
            TestTime.await(
                    Duration.ofSeconds(1), () -> lease.remaining().toMillis() < 600, "0.4 s of the lease to pass");
        }
        assertThat(lease.isValid()).isTrue();
        assertThat(holders(3, "r")).isEqualTo(3);
    }

    @Test
    void anExpiredLockCanBeTakenByAnotherClient() {
        Lease first = client(3).acquire("r", Duration.ofSeconds(1), WAIT);
        Redlock other = client(3);
        List<Lease> taken = new ArrayList<>();
        TestTime.await(
                Duration.ofSeconds(5),
                () -> other.tryAcquire("r", TTL).map(taken::add).isPresent(),
                "the expired lock to be taken");
        assertThat(first.isValid()).isFalse();
        assertThat(taken.get(0).isValid()).isTrue();
    }

    @Test
    void singleNodeLock() {
        Redlock one = client(1);
        assertThat(one.quorum()).isEqualTo(1);
        try (Lease lease = one.acquire("job:nightly", TTL, WAIT)) {
            assertThat(valueOn(0, "job:nightly")).matches("[0-9a-f]{32} .+"); // the token, then the holder
            assertThat(client(1).tryAcquire("job:nightly", TTL)).isEmpty();
            assertThat(lease.extend(Duration.ofSeconds(10))).isTrue();
        }
        assertThat(valueOn(0, "job:nightly")).isNull();
        redis.get(0).stop();
        assertThatThrownBy(() -> one.tryAcquire("job:nightly", TTL))
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("unreachable");
    }

    @Test
    void scriptsAreLoadedAgainAfterARestart() {
        Redlock redlock = client(1);
        redlock.acquire("r", TTL, WAIT).release(); // EVALSHA cached the script
        redis.get(0).restart(false); // the script cache is empty now
        Lease lease = redlock.acquire("r", TTL, WAIT);
        assertThat(lease.extend(TTL)).isTrue();
        lease.release();
        assertThat(valueOn(0, "r")).isNull();
    }

    @Test
    void noLostIncrementAcrossThreeClientsAndEightThreads() throws Exception {
        List<Redlock> instances = List.of(client(5), client(5), client(5));
        int threads = 8;
        int perThread = 60;
        int[] counter = {0}; // deliberately unsynchronised: only the lock protects it
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Redlock redlock = instances.get(t % instances.size());
                done.add(pool.submit(() -> {
                    for (int i = 0; i < perThread; i++) {
                        try (Lease lease = redlock.acquire("counter", TTL, Duration.ofSeconds(20))) {
                            int read = counter[0];
                            Thread.yield();
                            counter[0] = read + 1;
                            assertThat(lease.isValid()).isTrue();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        synchronized (counter) {
            assertThat(counter[0]).isEqualTo(threads * perThread);
        }
    }

    @Test
    void withLockReportsLeaseLostWhenTheMajorityFreezes() {
        Redlock redlock = client(3);
        long start = System.nanoTime();
        LeaseLostException e = org.junit.jupiter.api.Assertions.assertThrows(
                LeaseLostException.class,
                () -> redlock.withLock("r", Duration.ofMillis(600), WAIT, () -> {
                    redis.get(0).pause();
                    redis.get(1).pause();
                    Thread.sleep(TimeUnit.SECONDS.toMillis(20)); // work that outlives its lease
                    return null;
                }));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
        assertThat(e.getSuppressed()).singleElement().isInstanceOf(InterruptedException.class);
        assertThat(e.getMessage()).contains("lost", "timed out");
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }

    @Test
    void withLeaseHandsTheWorkItsLeaseAndReleasesItAfter() {
        Redlock redlock = client(3);
        Lease seen = redlock.withLease("r", Duration.ofSeconds(5), WAIT, lease -> {
            assertThat(lease.resource()).isEqualTo("r");
            assertThat(lease.isValid()).isTrue();
            assertThat(holders(3, "r")).isEqualTo(3);
            return lease;
        });
        assertThat(seen.isValid()).isFalse();
        assertThat(holders(3, "r")).isZero();
    }

    @Test
    void withLockExtendsWhileTheWorkRuns() throws Exception {
        Redlock redlock = client(3);
        Redlock other = client(3);
        Duration ttl = Duration.ofMillis(1500);
        String result = redlock.withLock("r", ttl, WAIT, () -> {
            // Twice the TTL: without the watchdog's extensions the other client would get the lock.
            long end = System.nanoTime() + 2 * ttl.toNanos();
            while (System.nanoTime() < end) {
                assertThat(other.tryAcquire("r", ttl)).isEmpty();
                Thread.sleep(50);
            }
            return "ok";
        });
        assertThat(result).isEqualTo("ok");
        assertThat(holders(3, "r")).isZero();
    }

    @Test
    void aClockJumpOnOneNodeExpiresOnlyThatNodesKey() {
        Assumptions.assumeTrue(
                RedisServer.clockControlAvailable(),
                () -> RedisServer.clockControlUnavailableReason().orElse("clock control unavailable"));
        Lease lease = client(3).acquire("r", Duration.ofSeconds(60), WAIT);
        TestTime.await(Duration.ofSeconds(2), () -> holders(3, "r") == 3, "all three grants to land");
        redis.get(2).jumpClock(Duration.ofMinutes(2));
        TestTime.await(Duration.ofSeconds(2), () -> valueOn(2, "r") == null, "node 2's key to expire");
        assertThat(valueOn(0, "r")).isNotNull();
        assertThat(valueOn(1, "r")).isNotNull();
        // Two of three still vote for the holder: the lease extends, but node 2 is free for anyone.
        assertThat(lease.extend(Duration.ofSeconds(60))).isTrue();
        assertThat(client(3).tryAcquire("r", Duration.ofSeconds(60))).isEmpty();
        TestTime.await(
                Duration.ofSeconds(2), () -> valueOn(2, "r") == null, "the failed attempt to release node 2 again");
    }

    @Test
    void anUnreachableNodeIsNamedInTheEvidence() {
        redis.get(0).stop();
        redis.get(1).pause();
        // One attempt on a fresh client: node 2 must connect and answer within the node timeout.
        Redlock redlock = client(3, TestTime.scaled(Duration.ofSeconds(1)));
        assertThatThrownBy(() -> redlock.acquire("r", TTL, Duration.ZERO))
                .isInstanceOf(LockUnavailableException.class)
                .satisfies(t -> assertThat(((LockUnavailableException) t).lastAttempt())
                        .extracting(o -> o.kind())
                        .containsExactly(
                                ServerAnswer.Kind.UNREACHABLE, ServerAnswer.Kind.TIMED_OUT, ServerAnswer.Kind.GRANTED))
                .hasMessageContaining(redis.get(0).uri().replace("127.0.0.1", "127.0.0.1") + ": unreachable");
    }
}
