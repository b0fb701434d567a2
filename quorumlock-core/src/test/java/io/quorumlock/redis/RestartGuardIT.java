package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.LockUnavailableException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.Jedis;

/** The restart guard on real nodes: nodes just started, nodes that fsync every write, a failover. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RestartGuardIT {

    private static final Duration TTL = Duration.ofSeconds(10);

    private static Redlock guarded(List<String> uris) {
        return Redlock.builder()
                .nodes(uris)
                .nodeTimeout(TestTime.scaled(Duration.ofMillis(200)))
                .retry(RetryPolicy.jitteredBackoff(Duration.ofMillis(5), Duration.ofMillis(20)))
                .build();
    }

    @Test
    void nodesJustStartedThatFsyncEveryWriteVoteAtOnce() {
        try (RedisServers nodes = RedisServers.start(3, true);
                Redlock redlock = guarded(nodes.uris())) {
            assertThat(redlock.tryAcquire("fsynced", TTL))
                    .as("a lease from nodes with appendonly yes and appendfsync always, just started")
                    .isPresent()
                    .get()
                    .satisfies(lease -> lease.release());
        }
    }

    @Test
    void nodesJustStartedWithoutPersistenceDoNotVote() {
        try (RedisServers nodes = RedisServers.start(3, false);
                Redlock redlock = guarded(nodes.uris())) {
            assertThatThrownBy(() -> redlock.acquire("fresh", TTL, Duration.ZERO))
                    .isInstanceOfSatisfying(LockUnavailableException.class, e -> {
                        List<ServerAnswer.Kind> kinds =
                                e.lastAttempt().stream().map(ServerAnswer::kind).toList();
                        // Two exclusions decide the vote: the third node may not have answered by then.
                        assertThat(kinds)
                                .as("the nodes' answers")
                                .hasSize(3)
                                .allMatch(kind ->
                                        kind == ServerAnswer.Kind.EXCLUDED || kind == ServerAnswer.Kind.PENDING);
                        assertThat(kinds)
                                .filteredOn(kind -> kind == ServerAnswer.Kind.EXCLUDED)
                                .as("nodes that answered and were excluded")
                                .hasSizeGreaterThanOrEqualTo(2);
                    });
        }
    }

    @Test
    void aNodeThatFsyncsButIsRestartedWithoutPersistenceDoesNotVote() {
        try (RedisServers nodes = RedisServers.start(3, true);
                Redlock redlock = guarded(nodes.uris())) {
            redlock.tryAcquire("before", TTL).orElseThrow().release();
            nodes.get(0).restart(false);
            LockUnavailableException e =
                    org.junit.jupiter.api.Assertions.assertThrows(LockUnavailableException.class, () -> {
                        nodes.get(1).stop();
                        redlock.acquire("after", TTL, Duration.ofMillis(200));
                    });
            assertThat(e.lastAttempt().get(0).kind()).isEqualTo(ServerAnswer.Kind.EXCLUDED);
        }
    }

    @Test
    void aFailoverToAServerUpForLongDoesNotVoteForATtl() {
        Duration ttl = Duration.ofSeconds(1);
        try (RedisServers nodes = RedisServers.start(4, false);
                Forwarder vip = new Forwarder(nodes.get(0).port())) {
            RedisServer standby = nodes.get(3);
            List<String> uris =
                    List.of(vip.uri(), nodes.get(1).uri(), nodes.get(2).uri());
            try (Redlock redlock = guarded(uris)) {
                // Held on node 1 by someone else: "warm" is granted only with the address's vote, so
                // once it is, this client knows the run_id of the server behind the address.
                try (Jedis other = nodes.get(1).connect(Duration.ofSeconds(5))) {
                    other.set("warm", "someone else's value");
                }
                // The nodes up for longer than the TTL: they vote.
                TestTime.await(
                        Duration.ofSeconds(10),
                        () -> redlock.tryAcquire("warm", ttl)
                                .map(lease -> {
                                    lease.release();
                                    return true;
                                })
                                .orElse(false),
                        "the nodes to be up for the TTL");
                nodes.get(2).stop();
                // The address now reaches another server, up as long, that never had this client's keys.
                vip.switchTo(standby.port());
                LockUnavailableException e = org.junit.jupiter.api.Assertions.assertThrows(
                        LockUnavailableException.class, () -> redlock.acquire("after", ttl, Duration.ofMillis(300)));
                assertThat(e.lastAttempt().get(0).kind())
                        .as(e.lastAttempt().toString())
                        .isEqualTo(ServerAnswer.Kind.EXCLUDED);
                assertThat(e.lastAttempt().get(0).detail()).contains("run_id");
            }
        }
    }
}
