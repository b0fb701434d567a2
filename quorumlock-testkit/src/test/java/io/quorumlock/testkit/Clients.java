package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import redis.clients.jedis.Jedis;

/** Plain Jedis connections to test nodes, and process checks. */
final class Clients {

    private Clients() {}

    static Jedis connect(RedisServer node) {
        return connect(node, 2000);
    }

    /** A connection with this connect and socket timeout; it sends nothing until the first command. */
    static Jedis connect(RedisServer node, int timeoutMillis) {
        return node.connect(Duration.ofMillis(timeoutMillis));
    }

    static boolean processGone(long pid) {
        return ProcessHandle.of(pid).map(handle -> !handle.isAlive()).orElse(true);
    }

    /**
     * Runs {@code program} in a JVM of its own: it starts a server, prints the server's pid and
     * directory, and waits. Then it sends the JVM SIGTERM (which runs shutdown hooks as Ctrl-C's
     * SIGINT does) and checks that the server process and its directory are gone.
     */
    static void assertInterruptedJvmLeavesNothing(Class<?> program, String server) throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process jvm = new ProcessBuilder(
                        java.toString(), "-cp", System.getProperty("java.class.path"), program.getName())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        long pid;
        Path dir;
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(jvm.getInputStream(), StandardCharsets.UTF_8))) {
            String first = out.readLine();
            if (first == null) {
                throw new AssertionError(program.getSimpleName() + " ended before it named its " + server
                        + " (exit code " + jvm.waitFor() + "); its stderr is above");
            }
            pid = Long.parseLong(first);
            dir = Path.of(out.readLine());
        }
        assertThat(processGone(pid)).isFalse();

        jvm.destroy();

        assertThat(jvm.waitFor(TestTime.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        TestTime.await(Duration.ofSeconds(5), () -> processGone(pid), server + " " + pid + " to be gone");
        assertThat(dir).doesNotExist();
    }
}
