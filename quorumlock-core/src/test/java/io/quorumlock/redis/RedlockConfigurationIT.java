package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * A node that is set up wrongly (a wrong, missing or unneeded password, a replica) is a
 * configuration error with a remedy, not a busy lock and not an unreachable node; a closed lock
 * refuses every call; a busy lock names its holder.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RedlockConfigurationIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final String PASSWORD = "s3cret-Pw0rd";
    private static final Duration TTL = Duration.ofSeconds(5);

    private final List<Redlock> clients = new ArrayList<>();

    @AfterEach
    void undoTheSettings() {
        clients.forEach(Redlock::close);
        for (int i = 0; i < redis.size(); i++) {
            RedisServer node = redis.get(i);
            try (Jedis jedis = node.connect(Duration.ofSeconds(2))) {
                if (!"PONG".equals(pingOrNull(jedis))) {
                    jedis.auth(PASSWORD);
                }
                jedis.configSet("requirepass", "");
                jedis.replicaofNoOne();
            }
        }
    }

    private static String pingOrNull(Jedis jedis) {
        try {
            return jedis.ping();
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static void requirePassword(int node) {
        try (Jedis jedis = redis.get(node).connect(Duration.ofSeconds(2))) {
            jedis.configSet("requirepass", PASSWORD);
        }
    }

    private Redlock client(List<String> uris, String password, String holder) {
        RedlockBuilder builder = Redlock.builder()
                .nodes(uris)
                .restartGuard(false)
                .password(password)
                .nodeTimeout(TestTime.scaled(Duration.ofMillis(200)))
                .retry(RetryPolicy.jitteredBackoff(Duration.ofMillis(1), Duration.ofMillis(20)));
        if (holder != null) {
            builder.holder(holder);
        }
        Redlock redlock = builder.build();
        clients.add(redlock);
        return redlock;
    }

    private Redlock client(List<String> uris, String password) {
        return client(uris, password, null);
    }

    private static ServerAnswer only(LockConfigurationException e) {
        assertThat(e.lastAttempt()).hasSize(1);
        return e.lastAttempt().get(0);
    }

    @Test
    void aWrongPasswordIsAConfigurationErrorThatSaysToCheckThePassword() {
        requirePassword(0);
        Redlock redlock = client(List.of(redis.get(0).uri()), "not-" + PASSWORD);

        assertThatThrownBy(() -> redlock.acquire("job", TTL, Duration.ofSeconds(5)))
                .isInstanceOfSatisfying(LockConfigurationException.class, e -> {
                    assertThat(only(e).kind()).isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
                    assertThat(only(e).detail()).contains("WRONGPASS", "check the password");
                    assertThat(e.getMessage())
                            .contains("'job'", "configuration error", "check the password")
                            .doesNotContain(PASSWORD);
                    assertThat(e.attempts())
                            .as("a wrong password is not retried")
                            .isEqualTo(1);
                });
    }

    @Test
    void aMissingPasswordIsAConfigurationErrorAlsoForOneAttempt() {
        requirePassword(0);
        Redlock redlock = client(List.of(redis.get(0).uri()), null);

        assertThatThrownBy(() -> redlock.tryAcquire("job", TTL))
                .isInstanceOfSatisfying(
                        LockConfigurationException.class,
                        e -> assertThat(only(e).detail()).contains("NOAUTH", "set the password"));
    }

    @Test
    void aPasswordForANodeThatHasNoneIsAConfigurationError() {
        Redlock redlock = client(List.of(redis.get(0).uri()), PASSWORD);

        assertThatThrownBy(() -> redlock.tryAcquire("job", TTL))
                .isInstanceOfSatisfying(
                        LockConfigurationException.class,
                        e -> assertThat(only(e).detail())
                                .contains("no password", "remove the password")
                                .doesNotContain(PASSWORD));
    }

    @Test
    void aReplicaIsAConfigurationErrorThatSaysListMastersOnly() throws Exception {
        RedisServer master = redis.get(1);
        try (Jedis jedis = redis.get(0).connect(Duration.ofSeconds(2))) {
            jedis.replicaof(master.host(), master.port());
        }
        Redlock redlock = client(List.of(redis.get(0).uri()), null);

        assertThatThrownBy(() -> redlock.tryAcquire("job", TTL))
                .isInstanceOfSatisfying(
                        LockConfigurationException.class,
                        e -> assertThat(only(e).detail()).contains("READONLY", "list masters only"));
    }

    @Test
    void aQuorumOfWellConfiguredNodesStillGrantsTheLock() {
        requirePassword(2);
        Redlock redlock = client(redis.uris(), null);

        try (Lease lease = redlock.tryAcquire("job", TTL).orElseThrow()) {
            assertThat(lease.isValid()).isTrue();
        }
    }

    @Test
    void eachNodesConfigurationErrorIsLoggedOnceNotOnEveryAttempt() {
        requirePassword(2);
        Redlock redlock = client(redis.uris(), null);
        // The two good nodes decide each attempt; the third one's NOAUTH may come after, and is
        // logged when it is read: by a later attempt on the same connection at the latest.
        for (int i = 0; i < 50 && redlock.rounds().configurationWarnings() == 0; i++) {
            redlock.tryAcquire("job", TTL).orElseThrow().release();
        }
        assertThat(redlock.rounds().configurationWarnings())
                .as("the node's error was logged")
                .isEqualTo(1);
        for (int i = 0; i < 10; i++) {
            redlock.tryAcquire("job", TTL).orElseThrow().release();
        }
        assertThat(redlock.rounds().configurationWarnings())
                .as("not again on every attempt")
                .isEqualTo(1);
    }

    @Test
    void aBusyLockWithAMisconfiguredNodeFailsAsAConfigurationErrorAtOnce() {
        requirePassword(2);
        Redlock holder = client(redis.uris().subList(0, 2), null);
        Redlock other = client(redis.uris(), null);
        try (Lease held = holder.tryAcquire("job", TTL).orElseThrow()) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> other.acquire("job", TTL, Duration.ofSeconds(10)))
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining(redis.get(2).uri())
                    .hasMessageContaining("NOAUTH");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void aBusyLockNamesItsHolder() {
        Redlock first = client(redis.uris(), null, "billing-worker-1");
        Redlock second = client(redis.uris(), null);
        try (Lease held = first.tryAcquire("invoice", TTL).orElseThrow()) {
            assertThatThrownBy(() -> second.acquire("invoice", TTL, Duration.ZERO))
                    .isInstanceOfSatisfying(LockUnavailableException.class, e -> {
                        // the third node's vote was not needed: 2 of 3 refusals decide
                        assertThat(e.lastAttempt())
                                .filteredOn(o -> o.kind() == ServerAnswer.Kind.HELD_BY_OTHER)
                                .hasSizeGreaterThanOrEqualTo(2)
                                .extracting(ServerAnswer::detail)
                                .containsOnly("holder billing-worker-1");
                        assertThat(e.getMessage()).contains("held by another owner (holder billing-worker-1)");
                    });
        }
        try (Lease mine = second.tryAcquire("invoice", TTL).orElseThrow()) {
            assertThatThrownBy(() -> first.acquire("invoice", TTL, Duration.ZERO))
                    .hasMessageContaining("holder " + ProcessHandle.current().pid() + "@");
        }
    }

    @Test
    void aClosedLockRefusesEveryCallAndALeaseReleasedAfterTheCloseSaysSo() {
        Redlock redlock = client(redis.uris(), null);
        Lease lease = redlock.tryAcquire("job", TTL).orElseThrow();
        redlock.close();

        assertThatThrownBy(() -> redlock.tryAcquire("job", TTL))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
        assertThatThrownBy(() -> redlock.acquire("job", TTL, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
        assertThatThrownBy(() -> redlock.withLock("job", TTL, Duration.ZERO, () -> {}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
        assertThatThrownBy(redlock::checkNodes)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
        assertThatThrownBy(() -> lease.extend(TTL))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
        assertThatThrownBy(lease::release)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed", "'job'", "TTL");
        lease.release(); // the second time, as after try-with-resources: nothing left to say
    }

    @Test
    void voidWorkRunsUnderTheLock() {
        Redlock redlock = client(redis.uris(), null);
        List<String> done = new ArrayList<>();

        redlock.withLock("job", TTL, Duration.ZERO, () -> done.add("withLock"));
        redlock.withLock("job", TTL, Duration.ZERO, () -> record(done, "void withLock"));
        redlock.runWithLease("job", TTL, Duration.ZERO, lease -> record(done, "runWithLease " + lease.resource()));
        int value = redlock.withLock("job", TTL, Duration.ZERO, () -> 42);

        assertThat(done).containsExactly("withLock", "void withLock", "runWithLease job");
        assertThat(value).isEqualTo(42);
    }

    private static void record(List<String> done, String what) {
        done.add(what);
    }
}
