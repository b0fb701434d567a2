package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.FaultProxy.Direction;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Nodes that are slow but alive: a round waits for a node as long as it answers something within
 * the node timeout, and a yes that comes with validity left is counted. A node is judged frozen by
 * its silence, not by how long a reply takes behind a connection's set-up or a deep pipeline.
 */
class SlowRepliesIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(1);

    private static final Duration TTL = Duration.ofSeconds(10);

    /** A lock on node 0 through {@code proxy}, with one connection that every caller shares. */
    private static Redlock oneConnectionThrough(FaultProxy proxy, Duration nodeTimeout) {
        return Redlock.builder()
                .node(proxy.uri())
                .nodeTimeout(nodeTimeout)
                .maxConnectionsPerNode(1)
                .build();
    }

    /**
     * A cold connection: the SELECT of its set-up holds the SET back, so the SET's reply comes two
     * latencies after the round's start, later than the node timeout, while the node answered
     * within it each time. Before, the round gave up at the node timeout and refused a free lock.
     */
    @Test
    void aYesBehindASlowSetUpIsCountedWhileTheNodeAnswers() {
        // The proxy's thread may be kept off the CPU of a loaded machine: 400 ms of slack.
        Duration nodeTimeout = TestTime.scaled(Duration.ofSeconds(1));
        Duration latency = nodeTimeout.multipliedBy(3).dividedBy(5);
        try (FaultProxy proxy = FaultProxy.inFrontOf(redis.get(0))) {
            proxy.latency(Direction.SERVER_TO_CLIENT, latency, Duration.ZERO);
            for (int run = 0; run < 3; run++) {
                try (Redlock redlock = Redlock.builder()
                        .node("redis://" + proxy.address() + "/1")
                        .nodeTimeout(nodeTimeout)
                        .build()) {
                    Optional<Lease> lease = redlock.tryAcquire("cold-" + run, TTL);
                    assertThat(lease)
                            .as("one attempt of a cold client, run " + run)
                            .isPresent();
                    lease.get().release();
                }
            }
        }
    }

    /**
     * A deep pipeline on one connection whose node answers steadily, a few replies a second: the
     * oldest reply is owed for longer than the node timeout, but the node is not frozen. Before,
     * every request was refused as "not sent: the node owes a reply" and rounds timed out.
     */
    @Test
    void aDeepPipelineOfANodeThatAnswersIsNotAFrozenNode() throws Exception {
        Duration nodeTimeout = TestTime.scaled(Duration.ofMillis(500));
        int callers = 8;
        try (FaultProxy proxy = FaultProxy.inFrontOf(redis.get(0));
                Redlock redlock = oneConnectionThrough(proxy, nodeTimeout)) {
            redlock.tryAcquire("warm-up", TTL).orElseThrow().release();
            // "+OK\r\n" and ":1\r\n" are 4-5 bytes: about one reply per node timeout / 5, and
            // the 16 replies of the 8 callers' grants and releases take 3 node timeouts.
            proxy.bandwidth(Direction.SERVER_TO_CLIENT, Math.max(1, 25_000 / nodeTimeout.toMillis()));
            ExecutorService pool = Executors.newFixedThreadPool(callers);
            try {
                List<Future<List<ServerAnswer>>> results = new ArrayList<>();
                for (int i = 0; i < callers; i++) {
                    String resource = "deep-" + i;
                    results.add(pool.submit(() -> {
                        try {
                            redlock.acquire(resource, TTL, Duration.ZERO).release();
                            return List.<ServerAnswer>of();
                        } catch (LockUnavailableException e) {
                            return e.lastAttempt();
                        }
                    }));
                }
                List<String> refusals = new ArrayList<>();
                for (Future<List<ServerAnswer>> result : results) {
                    List<ServerAnswer> refused =
                            result.get(TestTime.scaled(Duration.ofSeconds(60)).toSeconds(), TimeUnit.SECONDS);
                    if (!refused.isEmpty()) {
                        refusals.add(refused.toString());
                    }
                }
                assertThat(refusals)
                        .as("refusals of free locks by a node that answers")
                        .isEmpty();
            } finally {
                pool.shutdownNow();
                proxy.clearFaults();
            }
        }
    }

    /**
     * A release must reach a node that is silent for now (it owes another caller's reply for longer
     * than the node timeout): its delete goes behind what the node owes, instead of being refused
     * like a new grant. Before, the delete was answered "not sent" and the key stayed for its whole
     * TTL, blocking the resource.
     */
    @Test
    void aReleaseReachesANodeThatIsSilentForNow() throws Exception {
        Duration nodeTimeout = TestTime.scaled(Duration.ofMillis(100));
        try (FaultProxy proxy = FaultProxy.inFrontOf(redis.get(0));
                Redlock redlock = oneConnectionThrough(proxy, nodeTimeout)) {
            Lease lease = redlock.acquire("silent-release", TTL, TestTime.scaled(Duration.ofSeconds(5)));
            proxy.latency(Direction.SERVER_TO_CLIENT, nodeTimeout.multipliedBy(10), Duration.ZERO);
            // Another caller's grant: its reply is held back, so the connection owes it.
            assertThatThrownBy(() -> redlock.tryAcquire("other", TTL))
                    .isInstanceOf(LockUnavailableException.class)
                    .hasMessageContaining("timed out");
            Thread.sleep(nodeTimeout.multipliedBy(2).toMillis()); // silent for twice the node timeout
            lease.release();
            proxy.clearFaults();
            TestTime.await(
                    Duration.ofSeconds(5),
                    () -> {
                        try (redis.clients.jedis.Jedis jedis = redis.get(0).connect(Duration.ofSeconds(2))) {
                            return !jedis.exists("silent-release");
                        }
                    },
                    "the released key to be deleted");
        }
    }
}
