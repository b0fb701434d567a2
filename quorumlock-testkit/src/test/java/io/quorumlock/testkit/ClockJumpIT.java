package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.SetParams;

class ClockJumpIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(2);

    @BeforeEach
    void requireClockControl() {
        assumeTrue(
                RedisServer.clockControlAvailable(),
                () -> RedisServer.clockControlUnavailableReason().orElse(""));
    }

    /** How far the node's TIME is ahead of this JVM's clock, in seconds. */
    static double secondsAhead(RedisServer node) {
        try (Jedis jedis = Clients.connect(node)) {
            List<String> time = jedis.time();
            Instant nodeTime = Instant.ofEpochSecond(Long.parseLong(time.get(0)), Long.parseLong(time.get(1)) * 1000);
            return Duration.between(Instant.now(), nodeTime).toMillis() / 1000.0;
        }
    }

    @Test
    void forwardJumpOnOneNodeExpiresKeysThereOnly() {
        RedisServer jumped = redis.get(0);
        RedisServer other = redis.get(1);
        for (RedisServer node : redis.servers()) {
            try (Jedis jedis = Clients.connect(node)) {
                jedis.set("lock", "token", SetParams.setParams().ex(60));
            }
        }

        jumped.jumpClock(Duration.ofMinutes(10));

        assertThat(jumped.clockOffset()).isEqualTo(Duration.ofMinutes(10));
        assertThat(other.clockOffset()).isZero();
        assertThat(secondsAhead(jumped)).isCloseTo(600, within(2.0));
        assertThat(secondsAhead(other)).isCloseTo(0, within(2.0));
        try (Jedis jedis = Clients.connect(jumped)) {
            assertThat(jedis.get("lock")).isNull();
        }
        try (Jedis jedis = Clients.connect(other)) {
            assertThat(jedis.get("lock")).isEqualTo("token");
            assertThat(jedis.ttl("lock")).isBetween(50L, 60L);
        }

        jumped.resetClock();
        assertThat(jumped.clockOffset()).isZero();
        assertThat(secondsAhead(jumped)).isCloseTo(0, within(2.0));
    }

    @Test
    void jumpsAddUpAndABackwardJumpMakesKeysLiveLonger() {
        RedisServer node = redis.get(0);
        try (Jedis jedis = Clients.connect(node)) {
            jedis.set("lock", "token", SetParams.setParams().ex(60));
            node.jumpClock(Duration.ofMinutes(-1));
            node.jumpClock(Duration.ofMinutes(-1));
            assertThat(node.clockOffset()).isEqualTo(Duration.ofMinutes(-2));
            assertThat(jedis.ttl("lock")).isBetween(170L, 180L);
        }
    }

    @Test
    void aJumpWhilePausedOrStoppedIsSeenWhenTheNodeRunsAgain() {
        RedisServer node = redis.get(1);
        node.pause();
        node.jumpClock(Duration.ofHours(1));
        node.resume();
        TestTime.await(Duration.ofSeconds(2), () -> secondsAhead(node) > 3590, "the resumed node to show the jump");

        node.stop();
        node.jumpClock(Duration.ofHours(1));
        node.startAgain();
        assertThat(secondsAhead(node)).isCloseTo(7200, within(2.0));
    }

    @Test
    void extensionResetsClocksBeforeEachTest() {
        for (RedisServer node : redis.servers()) {
            assertThat(node.clockOffset()).isZero();
            assertThat(secondsAhead(node)).isCloseTo(0, within(2.0));
        }
    }
}
