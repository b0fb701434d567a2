package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.Lease;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/** The pipelined transport against real servers: set-up, script cache, frozen and restarted nodes. */
class TransportIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final Duration TTL = Duration.ofSeconds(10);

    private static Jedis admin(int node) {
        return redis.get(node).connect(Duration.ofSeconds(2));
    }

    @Test
    void aRefusedScriptLoadFallsBackToEvalAndLeavesNoKeyBehind() {
        try (Jedis j = admin(0)) {
            j.aclSetUser("noload", "on", ">pw", "~*", "+@all", "-script|load");
        }
        try (Redlock redlock = Redlock.builder()
                .node("redis://noload:pw@127.0.0.1:" + redis.get(0).port())
                .build()) {
            for (int i = 0; i < 3; i++) {
                Lease lease = redlock.tryAcquire("r", TTL).orElseThrow();
                assertThat(lease.extend(TTL)).isTrue();
                lease.release();
                try (Jedis j = admin(0)) {
                    assertThat(j.get("r")).as("the key after release " + i).isNull();
                }
            }
        } finally {
            try (Jedis j = admin(0)) {
                j.aclDelUser("noload");
            }
        }
    }

    @Test
    void aHostNameIsResolvedOffTheCallersPath() {
        try (Redlock redlock = Redlock.builder()
                .node("redis://localhost:" + redis.get(0).port())
                .build()) {
            redlock.tryAcquire("by-name", TTL).orElseThrow().release();
        }
    }

    @Test
    void everyConnectionNamesItselfForOperators() {
        try (Redlock redlock = Redlock.builder().node(redis.get(0).uri()).build();
                Jedis j = admin(0)) {
            redlock.tryAcquire("named", TTL).orElseThrow().release();
            assertThat(j.clientList()).contains("name=quorumlock");
        }
    }

    @Test
    void authenticatesAndSelectsTheDatabase() {
        RedisServer node = redis.get(0);
        try (Jedis j = admin(0)) {
            j.aclSetUser("locker", "on", ">pw", "~*", "+@all");
        }
        try (Redlock redlock = Redlock.builder()
                        .node("redis://locker:pw@127.0.0.1:" + node.port() + "/3")
                        .build();
                Jedis j = admin(0)) {
            Lease lease = redlock.tryAcquire("r", TTL).orElseThrow();
            j.select(3);
            assertThat(j.get("r")).matches("[0-9a-f]{32} .+@.+"); // the token, then the holder
            lease.release();
            assertThat(j.get("r")).isNull();
        } finally {
            try (Jedis j = admin(0)) {
                j.aclDelUser("locker");
            }
        }
    }

    @Test
    void theBuildersPasswordServesNodesWhoseUriHasNone() {
        try (Jedis j = admin(0)) {
            j.aclSetUser("locker", "on", ">s3cret:/@", "~*", "+@all");
        }
        try (Redlock redlock = Redlock.builder()
                        .node("redis://locker:@127.0.0.1:" + redis.get(0).port()) // a user, no password
                        .password("s3cret:/@")
                        .build();
                Redlock wrong = Redlock.builder()
                        .node("redis://locker:other@127.0.0.1:" + redis.get(0).port())
                        .password("s3cret:/@")
                        .build()) {
            redlock.tryAcquire("p", TTL).orElseThrow().release();
            // A password in the URI wins over the builder's.
            LockConfigurationException e = org.junit.jupiter.api.Assertions.assertThrows(
                    LockConfigurationException.class, () -> wrong.acquire("p", TTL, Duration.ZERO));
            assertThat(e.getMessage()).contains("WRONGPASS").doesNotContain("s3cret");
        } finally {
            try (Jedis j = admin(0)) {
                j.aclDelUser("locker");
            }
        }
    }

    @Test
    void aWrongPasswordShowsInTheEvidence() {
        try (Redlock redlock = Redlock.builder()
                .node("redis://nobody:wrong@127.0.0.1:" + redis.get(0).port())
                .build()) {
            LockConfigurationException e = org.junit.jupiter.api.Assertions.assertThrows(
                    LockConfigurationException.class, () -> redlock.acquire("r", TTL, Duration.ZERO));
            // Nothing is sent behind a refused AUTH, so nothing can have been locked as another user.
            assertThat(e.lastAttempt().get(0).kind()).isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
            assertThat(e.getMessage())
                    .contains("not sent: WRONGPASS", "check the password")
                    .doesNotContain(":wrong");
        }
    }

    /** Several nodes, just started: without the restart guard, which would keep them out for a TTL. */
    private static Redlock unguarded(Duration nodeTimeout) {
        return Redlock.builder()
                .nodes(redis.uris())
                .nodeTimeout(nodeTimeout)
                .restartGuard(false)
                .build();
    }

    @Test
    void aFlushedScriptCacheFallsBackToEval() {
        try (Redlock redlock = unguarded(Duration.ofMillis(50))) {
            redlock.tryAcquire("warm", TTL).orElseThrow().release();
            for (int i = 0; i < 3; i++) {
                try (Jedis j = admin(i)) {
                    j.scriptFlush();
                }
            }
            Lease lease = redlock.tryAcquire("r", TTL).orElseThrow();
            assertThat(lease.extend(TTL)).isTrue();
            lease.release();
            // Release returns once a majority is free. A straggler's NOSCRIPT is read, and its EVAL
            // sent, by a later round on that connection (the next one, unless that round was decided
            // before the NOSCRIPT came in): later rounds, on another resource, finish the clean-up.
            for (int i = 0; i < 3; i++) {
                try (Jedis j = admin(i)) {
                    TestTime.await(
                            Duration.ofSeconds(2),
                            () -> {
                                redlock.tryAcquire("nudge", TTL).ifPresent(Lease::release);
                                return j.get("r") == null;
                            },
                            "the key to be deleted by EVAL");
                }
            }
        }
    }

    @Test
    void aConnectionTheNodeClosedIsReplacedBeforeTheNextRound() {
        try (Redlock redlock = Redlock.builder().node(redis.get(0).uri()).build()) {
            redlock.tryAcquire("r", TTL).orElseThrow().release();
            redis.get(0).restart(false); // the old connection is dead now
            Lease lease = redlock.tryAcquire("r2", TTL).orElseThrow();
            assertThat(lease.extend(TTL)).isTrue();
            lease.release();
        }
    }

    @Test
    void aNodeThatRefusesInfoVotesOnlyOnceAConnectionToItIsATtlOld() {
        RedisServer node = redis.get(0);
        try (Jedis j = admin(0)) {
            j.aclSetUser("noinfo", "on", ">pw", "~*", "+@all", "-info");
        }
        Duration ttl = Duration.ofMillis(500);
        try (Redlock redlock = Redlock.builder()
                .node("redis://noinfo:pw@127.0.0.1:" + node.port())
                .restartGuard(true)
                .build()) {
            // Its start is unknown: the guard counts it as started when the connection was made.
            LockUnavailableException e = org.junit.jupiter.api.Assertions.assertThrows(
                    LockUnavailableException.class, () -> redlock.acquire("r", ttl, Duration.ZERO));
            assertThat(e.lastAttempt().get(0).kind()).isEqualTo(ServerAnswer.Kind.EXCLUDED);
            assertThat(e.lastAttempt().get(0).detail()).matches("restart guard: up 0 s, votes in [0-9.]+ s");
            try (Jedis j = admin(0)) {
                assertThat(j.get("r")).as("the excluded yes was released").isNull();
            }
            TestTime.await(
                    Duration.ofSeconds(3),
                    () -> redlock.tryAcquire("r", ttl)
                            .map(lease -> {
                                lease.release();
                                return true;
                            })
                            .orElse(false),
                    "the node to vote a TTL after the connection was made");
        } finally {
            try (Jedis j = admin(0)) {
                j.aclDelUser("noinfo");
            }
        }
    }

    @Test
    void aFrozenNodeIsNotSentMoreThanItOwes() {
        // Long enough for the stop of node 1 to fit between the grant of 'a' and the attempt on 'b'
        // on a loaded machine, so node 2 still owes less than the node timeout then and is sent to.
        Duration nodeTimeout = TestTime.scaled(Duration.ofMillis(500));
        try (Redlock redlock = unguarded(nodeTimeout)) {
            redlock.tryAcquire("warm", TTL).orElseThrow().release();
            redis.get(2).pause();
            redlock.tryAcquire("a", TTL).orElseThrow().release(); // node 2 now owes replies
            redis.get(1).stop();
            LockUnavailableException first = org.junit.jupiter.api.Assertions.assertThrows(
                    LockUnavailableException.class, () -> redlock.acquire("b", TTL, Duration.ZERO));
            assertThat(first.lastAttempt().get(2).kind()).isEqualTo(ServerAnswer.Kind.TIMED_OUT);
            // Now its oldest owed reply is older than the node timeout: nothing more is sent to it.
            long start = System.nanoTime();
            LockUnavailableException second = org.junit.jupiter.api.Assertions.assertThrows(
                    LockUnavailableException.class, () -> redlock.acquire("c", TTL, Duration.ZERO));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(nodeTimeout);
            assertThat(second.lastAttempt().get(2).kind()).isEqualTo(ServerAnswer.Kind.UNREACHABLE);
            assertThat(second.lastAttempt().get(2).detail()).contains("not sent: the node owes a reply");
            redis.get(2).resume();
            redis.get(1).startAgain();
            TestTime.await(
                    Duration.ofSeconds(5),
                    () -> redlock.tryAcquire("d", TTL).isPresent(),
                    "the thawed node to vote again");
            try (Jedis j = admin(2)) {
                TestTime.await(Duration.ofSeconds(2), () -> j.get("a") == null, "the late grant of 'a' to be deleted");
            }
        }
    }
}
