package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LockHolder;
import io.quorumlock.QuorumlockException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * {@link Redlock#holder}: who holds a resource, read from the keys on every node, on real
 * redis-server processes: the owner whose key is on a quorum, nobody where no owner has one, and an
 * exception where the nodes that did not answer could change that.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RedlockHolderIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(10));
    /** A key's value as a lock of holder {@code name} writes it: 32 hex digits, a space, the name. */
    private static final String TOKEN = "0123456789abcdef0123456789abcdef ";

    /** The clients and threads of a test, closed after it. */
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable each : open) {
            each.close();
        }
    }

    private Redlock client(String holder, List<String> nodes, RetryPolicy retry) {
        Redlock redlock = Redlock.builder()
                .nodes(nodes)
                .holder(holder)
                .restartGuard(false) // nodes started again before each test
                .nodeTimeout(TestTime.scaled(Duration.ofMillis(50)))
                .retry(retry)
                .recheck(Duration.ofSeconds(60))
                .build();
        open.add(redlock);
        return redlock;
    }

    private Redlock client(String holder) {
        return client(holder, redis.uris(), RetryPolicy.DEFAULT);
    }

    private static void write(int node, String key, String value) {
        try (Jedis jedis = redis.get(node).connect(Duration.ofSeconds(1))) {
            jedis.psetex(key, TTL.toMillis(), value);
        }
    }

    @Test
    void freeThenTheHolderByNameThenFreeAfterTheRelease() {
        Redlock billing = client("billing-worker-1");
        Redlock observer = client("observer");
        assertThat(observer.holder("report:daily")).isEmpty();

        Lease lease = billing.acquire("report:daily", TTL, WAIT);
        Optional<LockHolder> held = observer.holder("report:daily");
        assertThat(held).contains(new LockHolder("billing-worker-1", OptionalLong.empty()));
        assertThat(billing.holder("report:daily")).isEqualTo(held); // the holder sees itself
        assertThat(observer.tryAcquire("report:daily", TTL)).as("still held").isEmpty();

        lease.release();
        assertThat(observer.holder("report:daily")).isEmpty();
        // The reads took nothing: a grant right after them succeeds.
        Lease next = observer.tryAcquire("report:daily", TTL).orElseThrow();
        assertThat(billing.holder("report:daily").orElseThrow().name()).isEqualTo("observer");
        next.release();
    }

    @Test
    void aSingleNodeIsAQuorumOfOne() {
        Redlock one = client("single", redis.uris().subList(0, 1), RetryPolicy.DEFAULT);
        assertThat(one.holder("r")).isEmpty();
        try (Lease lease = one.acquire("r", TTL, WAIT)) {
            assertThat(one.holder("r").orElseThrow().name()).isEqualTo("single");
        }
        assertThat(one.holder("r")).isEmpty();
    }

    @Test
    void aLeaseWhoseTtlRanOutWithoutReleaseHoldsNothing() {
        Redlock holder = client("short-lived");
        Duration ttl = TestTime.scaled(Duration.ofMillis(600));
        holder.tryAcquire("r", ttl).orElseThrow(); // never released: its keys run out
        Redlock observer = client("observer");
        TestTime.await(Duration.ofSeconds(10), () -> observer.holder("r").isEmpty(), "the keys to run out");
        assertThat(observer.tryAcquire("r", TTL)).isPresent();
    }

    @Test
    void aKeyOnFewerThanAQuorumOfNodesIsNoHolder() {
        Redlock observer = client("observer");
        write(0, "r", TOKEN + "stray");
        assertThat(observer.holder("r")).as("on 1 node of 3").isEmpty();
        write(1, "r", "1123456789abcdef0123456789abcdef other");
        assertThat(observer.holder("r")).as("two owners on 1 node each").isEmpty();
        write(1, "r", TOKEN + "stray");
        assertThat(observer.holder("r"))
                .as("one owner on 2 nodes of 3")
                .contains(new LockHolder("stray", OptionalLong.empty()));
    }

    @Test
    void aKeyNotWrittenByQuorumlockIsAnUnnamedHolder() {
        write(0, "r", "some other program's value");
        write(1, "r", "some other program's value");
        assertThat(client("observer").holder("r")).contains(new LockHolder("", OptionalLong.empty()));
    }

    @Test
    void oneNodeDownTheOthersStillTell() {
        Redlock billing = client("billing-worker-1");
        Redlock observer = client("observer");
        Lease lease = billing.acquire("r", TTL, WAIT);
        redis.get(2).stop();
        assertThat(observer.holder("r").orElseThrow().name()).isEqualTo("billing-worker-1");
        lease.release();
        assertThat(observer.holder("r")).isEmpty();
    }

    @Test
    void tooFewNodesToTellIsAnOutageNamingEachNode() {
        Redlock observer = client("observer");
        redis.get(1).stop();
        redis.get(2).stop();
        assertThatThrownBy(() -> observer.holder("r"))
                .isInstanceOf(QuorumlockException.class)
                .hasMessageContaining("could not tell who holds 'r'")
                .hasMessageContaining(redis.uris().get(0) + ": free")
                .hasMessageContaining(redis.uris().get(1) + ": unreachable")
                .hasMessageContaining(redis.uris().get(2) + ": unreachable");
    }

    @Test
    void readingDoesNotDisturbAWaiter() throws Exception {
        Redlock billing = client("billing-worker-1");
        // Retries every 30 s only: a grant within WAIT is the hand-off at the release.
        Redlock waiting = client(
                "billing-worker-2",
                redis.uris(),
                RetryPolicy.jitteredBackoff(Duration.ofSeconds(30), Duration.ofSeconds(30)));
        Redlock observer = client("observer");
        // A TTL shorter than the wait: should the release miss nodes (a connection judged stale on
        // a machine stalled for a second), the keys run out and the waiter, which reads their end,
        // still takes the lock within the wait; the reads below must disturb neither.
        Lease lease = billing.acquire("r", Duration.ofSeconds(3), WAIT);
        ExecutorService thread = Executors.newSingleThreadExecutor();
        open.add(thread::shutdownNow);
        Future<Lease> waiter = thread.submit(() -> waiting.acquire("r", TTL, Duration.ofSeconds(60)));
        TestTime.await(WAIT, () -> waiting.waiting("r") == 1, "the waiter to wait");
        for (int i = 0; i < 20; i++) {
            assertThat(observer.holder("r").orElseThrow().name()).isEqualTo("billing-worker-1");
        }
        assertThat(waiter).isNotDone();
        lease.release();
        Lease handedOff = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(observer.holder("r").orElseThrow().name()).isEqualTo("billing-worker-2");
        handedOff.release();
    }

    @Test
    void closedLockRefuses() {
        Redlock observer = client("observer");
        observer.close();
        assertThatThrownBy(() -> observer.holder("r")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> client("other").holder("")).isInstanceOf(IllegalArgumentException.class);
    }
}
