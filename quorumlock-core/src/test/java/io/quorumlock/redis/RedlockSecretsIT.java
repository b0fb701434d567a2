package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.Lease;
import io.quorumlock.testkit.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.Jedis;

/**
 * A catalogue of node URIs that carry a known password, good and bad, through the builder, the
 * lock calls on a real node that requires the password (right, wrong, unreachable) and every
 * {@code toString()}: the password appears in no message, cause, suppressed exception, text or log
 * line.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RedlockSecretsIT {

    /** The node's password: every piece of it is a marker that must never be seen. */
    private static final String PASSWORD = "S3cr3t/Xq9@Zw7:Kp4";

    private static final String ENCODED = "S3cr3t%2FXq9%40Zw7%3AKp4";
    /** An ACL user whose password holds a %. */
    private static final String PERCENT_USER = "pct";

    private static final String PERCENT_PASSWORD = "S3cr3t%Xq9";
    private static final List<String> MARKERS = List.of("S3cr3t", "Xq9", "Zw7", "Kp4");
    private static final Duration TTL = Duration.ofSeconds(5);

    private static final String LOG_LEVEL = "org.slf4j.simpleLogger.log.io.quorumlock";

    private static RedisServer node;
    private static PrintStream stderr;
    private static final ByteArrayOutputStream logged = new ByteArrayOutputStream();

    @BeforeAll
    static void startANodeWithAPasswordAndCaptureTheLog() {
        // Loggers made from now on log at debug (those made earlier in this JVM keep their level).
        System.setProperty(LOG_LEVEL, "debug");
        stderr = System.err;
        System.setErr(new PrintStream(new Tee(stderr, logged), true, StandardCharsets.UTF_8));
        node = RedisServer.start();
        try (Jedis jedis = node.connect(Duration.ofSeconds(5))) {
            jedis.aclSetUser(PERCENT_USER, "on", ">" + PERCENT_PASSWORD, "~*", "+@all");
            jedis.configSet("requirepass", PASSWORD);
        }
    }

    @AfterAll
    static void stopTheNode() {
        System.clearProperty(LOG_LEVEL);
        if (stderr != null) {
            System.setErr(stderr);
        }
        if (node != null) {
            node.close();
        }
        assertNoSecret("the log", logged.toString(StandardCharsets.UTF_8));
    }

    private static String at() {
        return node.host() + ":" + node.port();
    }

    /** URIs that must be refused, each naming its problem and showing *** for its secrets. */
    private static List<String> badUris() {
        String hostPort = at();
        return List.of(
                "rediss://" + PASSWORD + "@h:99999",
                "rediss://S3cr3t-Xq9@h:0",
                "redis://S3cr3t-Xq9@h:99999",
                "redis://:" + PASSWORD + "@h:99999",
                "redis://u:pa/S3cr3t-Xq9@h:1/x",
                "redis://u:" + PASSWORD + "@h:abc",
                "redis://u:" + PASSWORD + "@h:1/-1",
                "redis://u:" + ENCODED + "@h:1?timeout=3",
                "redis://h:1?password=S3cr3t-Xq9",
                "redis://h:1#S3cr3t-Xq9",
                "redis://u:S3cr3t%zzXq9@h:1",
                "redis://u:S3cr3t%C3Xq9@h:1",
                "redis://u:" + PASSWORD + "@",
                "redis://u:" + PASSWORD + "@bad host:1",
                "http://u:" + PASSWORD + "@" + hostPort,
                "u:" + PASSWORD + "@" + hostPort,
                " REDIS://default:S3cr3t-Xq9@h:0 ");
    }

    /** URIs that authenticate to the node: the password in every form the grammar allows. */
    private static List<String> goodUris() {
        String hostPort = at();
        return List.of(
                "redis://:" + PASSWORD + "@" + hostPort,
                "redis://default:" + PASSWORD + "@" + hostPort,
                "redis://default:" + ENCODED + "@" + hostPort + "/0",
                "redis://" + ENCODED + "@" + hostPort,
                "redis://" + PERCENT_USER + ":S3cr3t%25Xq9@" + hostPort);
    }

    @Test
    void badUrisAreRefusedWithoutTheirSecrets() {
        for (String uri : badUris()) {
            for (Supplier<RedlockBuilder> builder : List.<Supplier<RedlockBuilder>>of(
                    () -> Redlock.builder().node(uri),
                    () -> Redlock.builder().nodes(List.of("redis://" + at(), uri)),
                    () -> Redlock.builder().node(uri).password(PASSWORD))) {
                Throwable thrown = thrown(() -> builder.get().build().close());
                assertThat(thrown).as(uri).isInstanceOf(IllegalArgumentException.class);
                assertThat(thrown.getMessage()).as(uri).contains("invalid node URI", "***");
                assertNoSecret(uri, text(thrown));
            }
        }
    }

    @Test
    void goodUrisLockWithoutShowingTheirSecrets() {
        for (String uri : goodUris()) {
            try (Redlock lock = Redlock.builder()
                    .node(uri)
                    .nodeTimeout(Duration.ofMillis(500))
                    .build()) {
                Optional<Lease> lease = lock.tryAcquire("secrets-" + uri.hashCode(), TTL);
                assertThat(lease).as(uri).isPresent();
                assertNoSecret(uri, lock + " " + lock.nodes() + " " + lease.get());
                assertThat(lease.get().extend(TTL)).as(uri).isTrue();
                assertNoSecret(uri, lock.checkNodes().toString());
                lease.get().release();
                assertNoSecret(uri, lease.get().toString());
            }
        }
    }

    @Test
    void thePasswordFromTheBuilderLocksWithoutShowingIt() {
        try (Redlock lock = Redlock.builder()
                .node("redis://" + at())
                .password(PASSWORD)
                .nodeTimeout(Duration.ofMillis(500))
                .build()) {
            Lease lease = lock.acquire("secrets-builder", TTL, Duration.ofSeconds(2));
            assertNoSecret("password()", lock + " " + lease + " " + lock.checkNodes());
            lease.release();
        }
    }

    @Test
    void aWrongPasswordAndAnUnreachableNodeFailWithoutShowingIt() throws Exception {
        int closedPort;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        List<String> failing = new ArrayList<>(List.of(
                "redis://default:S3cr3t-wrong-Xq9@" + at(),
                "redis://default:" + ENCODED + "x@" + at(),
                "redis://" + PERCENT_USER + ":S3cr3t%25Xq9-wrong@" + at(),
                "redis://default:" + PASSWORD + "@127.0.0.1:" + closedPort));
        for (String uri : failing) {
            try (Redlock lock = Redlock.builder()
                    .node(uri)
                    .nodeTimeout(Duration.ofMillis(300))
                    .build()) {
                assertThat(thrownOrEmpty(() -> lock.tryAcquire("secrets-wrong", TTL)))
                        .as(uri)
                        .isNotNull();
                Throwable waited = thrown(() -> lock.acquire("secrets-wrong", TTL, Duration.ofMillis(200)));
                assertThat(waited).as(uri).isNotNull();
                assertNoSecret(uri, text(waited) + lock.checkNodes());
            }
        }
        try (Redlock lock = Redlock.builder()
                .node("redis://" + at())
                .password("S3cr3t-wrong-Xq9")
                .nodeTimeout(Duration.ofMillis(300))
                .build()) {
            assertNoSecret(
                    "wrong password()",
                    text(thrown(() -> lock.acquire("secrets-wrong", TTL, Duration.ofMillis(200)))) + lock.checkNodes());
        }
    }

    /** What tryAcquire threw, or a marker when it answered (a refusal is an empty Optional). */
    private static Object thrownOrEmpty(Supplier<Optional<Lease>> call) {
        try {
            assertThat(call.get()).isEmpty();
            return "empty";
        } catch (RuntimeException e) {
            assertNoSecret("tryAcquire", text(e));
            return e;
        }
    }

    private static Throwable thrown(Runnable call) {
        try {
            call.run();
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** Everything a throwable shows: messages, causes and suppressed exceptions, as printed. */
    private static String text(Throwable t) {
        if (t == null) {
            return "";
        }
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString();
    }

    private static void assertNoSecret(String what, String text) {
        for (String marker : MARKERS) {
            assertThat(text).as("%s shows part of the password", what).doesNotContain(marker);
        }
    }
}
