package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ShutdownHookIT {

    @Test
    void aJvmThatIsInterruptedLeavesNoNodeBehind() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process demo = new ProcessBuilder(
                        java.toString(), "-cp", System.getProperty("java.class.path"), Demo.class.getName())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        long pid;
        Path dir;
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(demo.getInputStream(), StandardCharsets.UTF_8))) {
            pid = Long.parseLong(out.readLine());
            dir = Path.of(out.readLine());
        }
        assertThat(Clients.processGone(pid)).isFalse();

        demo.destroy(); // SIGTERM, which runs shutdown hooks as Ctrl-C's SIGINT does

        assertThat(demo.waitFor(TestTime.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        TestTime.await(Duration.ofSeconds(5), () -> Clients.processGone(pid), "redis-server " + pid + " to be gone");
        assertThat(dir).doesNotExist();
    }

    /** A demo that starts a node and runs until it is interrupted. */
    static final class Demo {
        public static void main(String[] args) throws InterruptedException {
            RedisServer node = RedisServer.start();
            System.out.println(node.pid());
            System.out.println(node.dir());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
