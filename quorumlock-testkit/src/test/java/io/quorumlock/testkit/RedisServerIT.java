package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisConnectionException;

class RedisServerIT {

    private static final Logger log = LoggerFactory.getLogger(RedisServerIT.class);

    @Test
    void startsAnswersPingAndLeavesNoProcessAfterStopAndClose() throws Exception {
        RedisServer node = RedisServer.start();
        long pid = node.pid();
        Path dir = node.dir();
        try (Jedis jedis = Clients.connect(node)) {
            assertThat(jedis.ping()).isEqualTo("PONG");
        }
        assertThat(node.host()).isEqualTo("127.0.0.1");
        assertThat(node.uri()).isEqualTo("redis://127.0.0.1:" + node.port());
        assertThat(node.isRunning()).isTrue();
        assertThat(node.isPaused()).isFalse();
        assertThat(node.version()).matches("\\d+\\.\\d+\\.\\d+");
        assertThat(dir.getFileName().toString()).startsWith("quorumlock-redis-");
        assertThat(Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "cwd")))
                .isEqualTo(dir);

        node.stop();
        assertThat(Clients.processGone(pid)).isTrue();
        assertThat(node.isRunning()).isFalse();
        assertThatThrownBy(node::pid).isInstanceOf(IllegalStateException.class).hasMessageContaining("not running");
        node.stop(); // idempotent

        node.startAgain();
        long secondPid = node.pid();
        node.close();
        assertThat(Clients.processGone(secondPid)).isTrue();
        assertThat(dir).doesNotExist();
        node.close(); // idempotent
        assertThatThrownBy(node::startAgain)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void runsTheConfiguredBinary() {
        String configured = System.getenv("QUORUMLOCK_REDIS_SERVER");
        if (configured != null && !configured.isBlank()) {
            assertThat(RedisServer.binary()).isEqualTo(Path.of(configured));
        }
        try (RedisServer node = RedisServer.start();
                Jedis jedis = Clients.connect(node)) {
            assertThat(jedis.info("server"))
                    .contains("executable:" + RedisServer.binary().toAbsolutePath());
            log.info("Testing with redis-server {} from {}", node.version(), RedisServer.binary());
        }
    }

    @Test
    void stopThenStartAgainUsesTheSamePortAndLosesKeys() {
        try (RedisServer node = RedisServer.start()) {
            int port = node.port();
            long pid = node.pid();
            try (Jedis jedis = Clients.connect(node)) {
                jedis.set("k", "v");
            }
            node.stop();
            assertThatThrownBy(() -> Clients.connect(node).ping()).isInstanceOf(JedisConnectionException.class);

            node.startAgain();
            node.startAgain(); // no-op while running
            assertThat(node.port()).isEqualTo(port);
            assertThat(node.pid()).isNotEqualTo(pid);
            try (Jedis jedis = Clients.connect(node)) {
                assertThat(jedis.get("k")).isNull();
            }
        }
    }

    @Test
    void persistentRestartKeepsKeysAndNonPersistentRestartLosesThem() {
        try (RedisServer node = RedisServer.start(true)) {
            try (Jedis jedis = Clients.connect(node)) {
                jedis.set("kept", "v");
            }
            node.restart(true);
            try (Jedis jedis = Clients.connect(node)) {
                assertThat(jedis.get("kept")).isEqualTo("v");
            }

            node.restart(false);
            try (Jedis jedis = Clients.connect(node)) {
                assertThat(jedis.get("kept")).isNull();
                assertThat(jedis.configGet("appendonly")).containsEntry("appendonly", "no");
            }

            node.restart(true); // must not bring back keys from the earlier append-only file
            try (Jedis jedis = Clients.connect(node)) {
                assertThat(jedis.get("kept")).isNull();
                assertThat(jedis.configGet("appendfsync")).containsEntry("appendfsync", "always");
            }
        }
    }

    @Test
    void pausedNodeAcceptsConnectionsButTimesOutCommandsUntilResumed() {
        try (RedisServer node = RedisServer.start()) {
            node.pause();
            assertThat(node.isPaused()).isTrue();
            assertThat(node.isRunning()).isTrue();
            assertThatThrownBy(() -> {
                        try (Jedis jedis = Clients.connect(node, 100)) {
                            jedis.ping();
                        }
                    })
                    .isInstanceOf(JedisConnectionException.class)
                    .hasRootCauseInstanceOf(SocketTimeoutException.class);
            assertThatThrownBy(node::flushAll)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("paused");

            node.resume();
            assertThat(node.isPaused()).isFalse();
            try (Jedis jedis = Clients.connect(node, 100)) {
                assertThat(jedis.ping()).isEqualTo("PONG");
            }
        }
    }

    @Test
    void stopKillsAPausedNode() {
        try (RedisServer node = RedisServer.start()) {
            long pid = node.pid();
            node.pause();
            node.stop();
            assertThat(Clients.processGone(pid)).isTrue();
            assertThat(node.isPaused()).isFalse();
            node.startAgain();
            try (Jedis jedis = Clients.connect(node)) {
                assertThat(jedis.ping()).isEqualTo("PONG");
            }
        }
    }

    @Test
    void flushAllDeletesEveryKey() {
        try (RedisServer node = RedisServer.start();
                Jedis jedis = Clients.connect(node)) {
            jedis.set("a", "1");
            jedis.set("b", "2");
            node.flushAll();
            assertThat(jedis.dbSize()).isZero();
        }
    }

    @Test
    void jumpClockFailsClearlyWithoutClockControlAndResetClockStillWorks() {
        try (RedisServer node = RedisServer.start()) {
            node.resetClock(); // a no-op everywhere
            if (RedisServer.clockControlAvailable()) {
                assertThat(RedisServer.clockControlUnavailableReason()).isEmpty();
            } else {
                assertThatThrownBy(() -> node.jumpClock(Duration.ofMinutes(1)))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining(
                                RedisServer.clockControlUnavailableReason().orElseThrow());
            }
        }
    }

    @Test
    void startAgainFailsClearlyWhenAnotherProcessTookThePort() throws Exception {
        try (RedisServer node = RedisServer.start()) {
            node.stop();
            try (ServerSocket squatter = new ServerSocket(node.port(), 1, InetAddress.getByName(node.host()))) {
                assertThat(squatter.isBound()).isTrue();
                assertThatThrownBy(node::startAgain)
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("port " + node.port() + " is now used by another process")
                        .hasMessageContaining("Address already in use");
            }
            assertThat(node.isRunning()).isFalse();
            node.startAgain();
            assertThat(node.isRunning()).isTrue();
        }
    }

    @Test
    void aBinaryThatExitsAtOnceFailsWithItsOutputAndLeavesNoDirectory(@TempDir Path temp) throws Exception {
        Path binary = script(temp, "echo 'FATAL CONFIG FILE ERROR: no such option' >&2; exit 1");

        Throwable failure = catchThrowable(() -> RedisServer.start(binary, false));

        assertThat(failure)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("redis-server exited with code 1 before it was ready")
                .hasMessageContaining("FATAL CONFIG FILE ERROR: no such option");
        Matcher nodeDir = Pattern.compile("--- (\\S+)/redis\\.log").matcher(failure.getMessage());
        assertThat(nodeDir.find()).isTrue();
        assertThat(Path.of(nodeDir.group(1))).doesNotExist();
    }

    @Test
    void aBinaryThatNeverAnswersIsKilledAfterTheScaledReadyTimeout(@TempDir Path temp) throws Exception {
        Path pidFile = temp.resolve("pid");
        Path binary = script(temp, "echo $$ > " + pidFile + "; exec sleep 30");
        String saved = System.getProperty(TestTime.TIME_SCALE_PROPERTY);
        // 10 s ready timeout -> 500 ms, more on a loaded machine
        System.setProperty(TestTime.TIME_SCALE_PROPERTY, "0.05");
        try {
            assertThatThrownBy(() -> RedisServer.start(binary, false))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageMatching("(?s)Redis node on port \\d+ was not ready within [\\d.]+ m?s \\(the test kit's"
                            + " 10 s × quorumlock\\.test\\.timeScale 0\\.05 × load [\\d.]+ per processor\\); on a"
                            + " machine this busy, set quorumlock\\.test\\.timeScale higher\n.*");
        } finally {
            if (saved == null) {
                System.clearProperty(TestTime.TIME_SCALE_PROPERTY);
            } else {
                System.setProperty(TestTime.TIME_SCALE_PROPERTY, saved);
            }
        }
        assertThat(Clients.processGone(Long.parseLong(Files.readString(pidFile).trim())))
                .isTrue();
    }

    private static Path script(Path dir, String body) throws Exception {
        Path script = dir.resolve("fake-redis-server");
        Files.writeString(script, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }
}
