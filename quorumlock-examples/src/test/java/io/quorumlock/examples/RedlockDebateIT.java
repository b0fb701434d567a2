package io.quorumlock.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * Redlock's documented weaknesses, shown rather than hidden: a clock that jumps forward on one node,
 * and a node that restarts without its keys, each let two clients hold a quorum at once. The
 * restart has two remedies: fsync'd persistence, and the client's restart guard.
 */
class RedlockDebateIT {

    @RegisterExtension
    static final RedisServersExtension volatileNodes = RedisServersExtension.nodes(5);

    @RegisterExtension
    static final RedisServersExtension durableNodes =
            RedisServersExtension.nodes(5).persistent();

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final String KEY = "lock:sku:42";
    /** Long enough for every live node to connect and answer on a loaded machine. */
    private static final Duration NODE_TIMEOUT = TestTime.scaled(Duration.ofSeconds(1));
    /** For a grant that needs every live node: retried until all of them answer in time. */
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(5));

    /** Plain Redlock, as the debate discusses it: without the restart guard. */
    private static Redlock client(RedisServersExtension nodes) {
        return Redlock.builder()
                .nodes(nodes.uris())
                .restartGuard(false)
                .nodeTimeout(NODE_TIMEOUT)
                .build();
    }

    private static String valueOn(RedisServer node) {
        try (Jedis jedis = node.connect(Duration.ofSeconds(1))) {
            return jedis.get(KEY);
        }
    }

    /** How many nodes hold each of the two tokens now: the quorum each client really has. */
    private static List<Long> holders(RedisServersExtension nodes, String tokenA, String tokenB) {
        List<String> values =
                IntStream.range(0, 5).mapToObj(i -> valueOn(nodes.get(i))).toList();
        return List.of(
                values.stream().filter(tokenA::equals).count(),
                values.stream().filter(tokenB::equals).count());
    }

    /** A takes nodes 0, 1, 2 while nodes 3 and 4 are down, then those come back empty. */
    private static Lease aHoldsTheFirstThree(RedisServersExtension nodes, Redlock a) {
        return aHoldsTheFirstThree(nodes, a, TTL, WAIT);
    }

    private static Lease aHoldsTheFirstThree(RedisServersExtension nodes, Redlock a, Duration ttl, Duration wait) {
        nodes.get(3).stop();
        nodes.get(4).stop();
        Lease lease = a.acquire(KEY, ttl, wait);
        TestTime.await(Duration.ofSeconds(2), () -> valueOn(nodes.get(2)) != null, "A's grant on node 2");
        nodes.get(3).startAgain();
        nodes.get(4).startAgain();
        return lease;
    }

    @Test
    void aClockJumpOnOneNodeLetsTwoClientsHoldAQuorum() {
        Assumptions.assumeTrue(
                RedisServer.clockControlAvailable(),
                () -> RedisServer.clockControlUnavailableReason().orElse("no clock control"));
        try (Redlock a = client(volatileNodes);
                Redlock b = client(volatileNodes)) {
            Lease leaseA = aHoldsTheFirstThree(volatileNodes, a);
            String tokenA = valueOn(volatileNodes.get(0));
            // NTP stepping the clock, or an operator: node 2's wall clock jumps past A's TTL.
            volatileNodes.get(2).jumpClock(TTL.plusMinutes(1));
            TestTime.await(
                    Duration.ofSeconds(2), () -> valueOn(volatileNodes.get(2)) == null, "A's key to expire on node 2");
            Lease leaseB = b.acquire(KEY, TTL, WAIT); // nodes 2, 3, 4
            TestTime.await(Duration.ofSeconds(2), () -> valueOn(volatileNodes.get(4)) != null, "B's grant on node 4");
            String tokenB = valueOn(volatileNodes.get(2));

            assertThat(leaseA.isValid())
                    .as("A still believes it holds the lock")
                    .isTrue();
            assertThat(leaseB.isValid()).as("B believes it holds the lock").isTrue();
            assertThat(holders(volatileNodes, tokenA, tokenB))
                    .as("A's keys on nodes 0 and 1, B's on 2, 3 and 4: both were granted a majority")
                    .containsExactly(2L, 3L);
        }
    }

    @Test
    void aRestartWithoutPersistenceLetsTwoClientsHoldAQuorum() {
        try (Redlock a = client(volatileNodes);
                Redlock b = client(volatileNodes)) {
            Lease leaseA = aHoldsTheFirstThree(volatileNodes, a);
            String tokenA = valueOn(volatileNodes.get(0));
            volatileNodes.get(2).restart(false); // comes back empty
            Lease leaseB = b.acquire(KEY, TTL, WAIT); // nodes 2, 3, 4
            TestTime.await(Duration.ofSeconds(2), () -> valueOn(volatileNodes.get(4)) != null, "B's grant on node 4");
            String tokenB = valueOn(volatileNodes.get(2));

            assertThat(leaseA.isValid()).isTrue();
            assertThat(leaseB.isValid()).isTrue();
            assertThat(holders(volatileNodes, tokenA, tokenB)).containsExactly(2L, 3L);
        }
    }

    @Test
    void theRestartGuardKeepsRestartedNodesOutOfTheVoteForATtl() {
        Duration ttl = TestTime.scaled(Duration.ofSeconds(2));
        try (Redlock a = Redlock.builder().nodes(volatileNodes.uris()).build(); // the guard is on by default
                // B's one attempt needs every node's answer within its node timeout.
                Redlock b = Redlock.builder()
                        .nodes(volatileNodes.uris())
                        .nodeTimeout(TestTime.scaled(Duration.ofMillis(300)))
                        .build()) {
            // A waits until nodes 0, 1 and 2, started for this class, have been up for its TTL.
            Lease leaseA = aHoldsTheFirstThree(volatileNodes, a, ttl, TestTime.scaled(Duration.ofSeconds(5)));
            long restarted = System.nanoTime();
            volatileNodes.get(2).restart(false); // comes back empty, as nodes 3 and 4 did

            LockUnavailableException refused = org.junit.jupiter.api.Assertions.assertThrows(
                    LockUnavailableException.class, () -> b.acquire(KEY, ttl, Duration.ZERO));
            assertThat(leaseA.isValid()).as("A still holds the lock").isTrue();
            List<ServerAnswer> votes = refused.lastAttempt();
            assertThat(votes).extracting(ServerAnswer::kind).doesNotContain(ServerAnswer.Kind.GRANTED);
            // Nodes 2, 3 and 4 said yes but have been up for less than the TTL. The outcome was
            // certain once three nodes had refused or been excluded: a later answer shows as pending.
            assertThat(votes.subList(2, 5))
                    .extracting(ServerAnswer::kind)
                    .contains(ServerAnswer.Kind.EXCLUDED)
                    .isSubsetOf(ServerAnswer.Kind.EXCLUDED, ServerAnswer.Kind.PENDING);
            assertThat(votes.subList(2, 5))
                    .filteredOn(o -> o.kind() == ServerAnswer.Kind.EXCLUDED)
                    .allSatisfy(o -> assertThat(o.detail()).matches("restart guard: up [0-9.]+ s, votes in [0-9.]+ s"));
            TestTime.await(
                    Duration.ofSeconds(2),
                    () -> IntStream.range(2, 5).allMatch(i -> valueOn(volatileNodes.get(i)) == null),
                    "B's uncounted yes votes to be released");

            // With nodes 0 and 1 down, only the restarted nodes can grant B the lock: they vote
            // again once up for the TTL, and by then A's lease has run out.
            volatileNodes.get(0).stop();
            volatileNodes.get(1).stop();
            List<Lease> granted = new ArrayList<>();
            TestTime.await(
                    Duration.ofSeconds(5),
                    () -> b.tryAcquire(KEY, ttl).map(granted::add).isPresent(),
                    "nodes 2, 3 and 4 to vote again");
            Duration restartedFor = Duration.ofNanos(System.nanoTime() - restarted);
            assertThat(leaseA.isValid())
                    .as(
                            "A's lease (%s left of %s) when B was granted on nodes 2, 3 and 4, node 2 restarted %s"
                                    + " before",
                            leaseA.remaining(), ttl, restartedFor)
                    .isFalse();
            assertThat(granted.get(0).isValid()).isTrue();
        }
    }

    @Test
    void withAppendfsyncAlwaysTheRestartedNodeKeepsTheKey() {
        try (Redlock a = client(durableNodes);
                Redlock b = client(durableNodes)) {
            Lease leaseA = aHoldsTheFirstThree(durableNodes, a);
            String tokenA = valueOn(durableNodes.get(0));
            durableNodes.get(2).restart(true); // AOF with appendfsync always: A's key survives
            assertThat(valueOn(durableNodes.get(2))).isEqualTo(tokenA);

            assertThat(b.tryAcquire(KEY, TTL)).as("no double grant").isEmpty();
            assertThat(leaseA.isValid()).isTrue();
            assertThat(leaseA.extend(TTL)).as("A keeps its majority").isTrue();
        }
    }
}
