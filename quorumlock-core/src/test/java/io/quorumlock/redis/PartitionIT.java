package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.FaultProxy.Direction;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/** Redlock when one client's links go through fault proxies and another client reaches the nodes directly. */
@Timeout(60)
class PartitionIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(5);

    private static final Duration TTL = Duration.ofSeconds(10);
    private static final Duration NODE_TIMEOUT = TestTime.scaled(Duration.ofMillis(100));

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

    private Redlock client(List<String> nodes) {
        return client(nodes, NODE_TIMEOUT);
    }

    private Redlock client(List<String> nodes, Duration nodeTimeout) {
        // Nodes started for the class or again by the reset before each test: the restart guard
        // would keep them out for a TTL; TransportIT tests the guard.
        Redlock redlock = Redlock.builder()
                .nodes(nodes)
                .restartGuard(false)
                .nodeTimeout(nodeTimeout)
                .retry(RetryPolicy.jitteredBackoff(Duration.ofMillis(1), Duration.ofMillis(20)))
                .build();
        clients.add(redlock);
        return redlock;
    }

    private static String valueOn(int node, String key) {
        RedisServer server = redis.get(node);
        try (Jedis jedis = server.connect(Duration.ofMillis(1000))) {
            return jedis.get(key);
        }
    }

    private static List<String> values(String key) {
        return IntStream.range(0, 5).mapToObj(i -> valueOn(i, key)).toList();
    }

    @Test
    void aClientCutOffFromAMajorityTimesOutWhileADirectClientGetsTheLock() {
        // Long enough for nodes 3 and 4 to answer through their proxies on a loaded machine, so the
        // votes are the partition's alone.
        Duration nodeTimeout = TestTime.scaled(Duration.ofMillis(500));
        Redlock cutOff = client(proxies.uris(), nodeTimeout);
        Redlock direct = client(redis.uris(), nodeTimeout);
        cutOff.acquire("warm-up", TTL, Duration.ofSeconds(5)).release(); // its connections are open

        proxies.partition(0, 1, 2);
        long start = System.nanoTime();
        assertThatThrownBy(() -> cutOff.acquire("r", TTL, Duration.ZERO))
                .isInstanceOfSatisfying(
                        LockUnavailableException.class,
                        e -> assertThat(e.lastAttempt())
                                .extracting(ServerAnswer::kind)
                                .containsExactly(
                                        ServerAnswer.Kind.TIMED_OUT,
                                        ServerAnswer.Kind.TIMED_OUT,
                                        ServerAnswer.Kind.TIMED_OUT,
                                        ServerAnswer.Kind.GRANTED,
                                        ServerAnswer.Kind.GRANTED))
                .hasMessageContaining("2 of 5 votes, 3 needed");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        // One round waits for the node timeout; the release of the two grants does not wait for the cut-off nodes.
        assertThat(took).isLessThan(nodeTimeout.multipliedBy(2).plus(TestTime.scaled(Duration.ofMillis(200))));
        assertThat(values("r").subList(3, 5)).as("the two grants were released").containsOnlyNulls();
        System.out.printf(
                "partitioned acquire failed in %d ms (node timeout %d ms)%n", took.toMillis(), nodeTimeout.toMillis());

        Lease lease = direct.acquire("r", TTL, Duration.ofSeconds(5));
        List<String> holder = values("r");
        assertThat(holder).doesNotContainNull().containsOnly(holder.get(0));

        // The heal delivers the cut-off client's held SET and release to nodes 0-2: neither may touch the holder's key.
        proxies.heal();
        TestTime.await(
                Duration.ofSeconds(5),
                () -> cutOff.tryAcquire("probe", TTL)
                        .map(probe -> {
                            probe.release();
                            return true;
                        })
                        .orElse(false),
                "the cut-off client to reach every node again");
        assertThat(values("r")).isEqualTo(holder);
        assertThat(cutOff.tryAcquire("r", TTL)).isEmpty();
        assertThat(lease.extend(TTL)).isTrue();
        lease.release();
        assertThat(cutOff.tryAcquire("r", TTL)).isPresent();
    }

    @Test
    void latencyOnAMajorityBeyondTheNodeTimeoutFailsTheAcquireAndBelowItOnlySlowsIt() {
        Redlock slowed = client(proxies.uris());
        slowed.tryAcquire("warm-up", TTL).orElseThrow().release();

        for (int i = 0; i < 3; i++) {
            proxies.get(i).latency(Direction.SERVER_TO_CLIENT, NODE_TIMEOUT.multipliedBy(3), Duration.ZERO);
        }
        assertThatThrownBy(() -> slowed.tryAcquire("r", TTL))
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("timed out");

        Duration latency = Duration.ofMillis(30);
        for (int i = 0; i < 3; i++) {
            proxies.get(i).clearLatency().latency(latency);
        }
        // The late replies of the failed attempt may still be on their way: wait until a round fits again.
        long start = System.nanoTime();
        Lease lease = slowed.acquire("r2", TTL, Duration.ofSeconds(5));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took).isGreaterThanOrEqualTo(latency.multipliedBy(2));
        assertThat(lease.validity()).isLessThan(TTL.minus(latency.multipliedBy(2)));
        lease.release();
    }
}
