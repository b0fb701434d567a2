package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/** A Redis node with {@code requirepass}: the password comes from the environment and is never printed. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunPasswordIT {

    private static final String PASSWORD = "s3cret-Pw0rd";

    private static RedisServer node;

    @TempDir
    Path dir;

    @BeforeAll
    static void startANodeWithAPassword() {
        node = RedisServer.start();
        try (Jedis jedis = node.connect(Duration.ofSeconds(5))) {
            jedis.configSet("requirepass", PASSWORD);
        }
    }

    @AfterAll
    static void stopTheNode() {
        if (node != null) {
            node.close();
        }
    }

    private RunProcess run(Map<String, String> env, String... more) {
        String[] args = new String[6 + more.length];
        System.arraycopy(new String[] {"--redis", node.uri(), "--resource", "job", "-vv", "--"}, 0, args, 0, 6);
        System.arraycopy(more, 0, args, 6, more.length);
        return RunProcess.start(dir, env, args);
    }

    @Test
    void theUriWithoutPasswordWorksWithThePasswordFromTheEnvironment() throws Exception {
        try (RunProcess run = run(
                Map.of("QUORUMLOCK_REDIS_PASSWORD", PASSWORD),
                "sh",
                "-c",
                "echo \"password: ${QUORUMLOCK_REDIS_PASSWORD-not passed on}\"")) {
            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(run.out()).isEqualTo("password: not passed on\n");
            assertThat(run.err()).as("-vv debug lines").doesNotContain(PASSWORD);
        }
    }

    @Test
    void aWrongOrMissingPasswordIsRefusedWithoutShowingIt() throws Exception {
        try (RunProcess wrong = run(Map.of("QUORUMLOCK_REDIS_PASSWORD", "not-" + PASSWORD), "true");
                RunProcess none = run(Map.of(), "true")) {
            // a configuration error, not a busy lock: exit 1, and one line that names the fix
            assertThat(wrong.exitCode()).as(wrong.err()).isEqualTo(1);
            assertThat(none.exitCode()).as(none.err()).isEqualTo(1);
            assertThat(wrong.err())
                    .contains("quorumlock run: " + node.uri() + " refused the password that QUORUMLOCK_REDIS_PASSWORD"
                            + " gives (WRONGPASS): check it")
                    .doesNotContain(PASSWORD);
            assertThat(none.err())
                    .contains("quorumlock run: " + node.uri() + " requires a password and none was given (NOAUTH):"
                            + " set QUORUMLOCK_REDIS_PASSWORD")
                    .doesNotContain(PASSWORD);
            assertThat(wrong.err().lines().filter(l -> l.contains("WARN") && l.contains("configuration error")))
                    .as("-vv: logged once, not once per retry")
                    .hasSize(1);
            assertThat(wrong.err().lines().filter(l -> l.startsWith("quorumlock run: ")))
                    .as("one line for the one node")
                    .hasSize(1);
            assertThat(wrong.out() + none.out()).isEmpty();
        }
    }
}
