package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asynchronous acquires on a Java 24+ JDK, in a child JVM ({@link AsyncWaitersMain}): 1,000 waiting
 * futures and 1,000 virtual threads each waiting on {@code acquireAsync(...).get()}, all on resources
 * held by the child itself, add no more than a handful of platform threads (each resource's line is
 * a virtual thread), and all are granted once the holds are released. The JDK is found as {@link
 * VirtualThreadsIT} finds it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AsyncVirtualThreadsIT {

    private static final Logger log = LoggerFactory.getLogger(AsyncVirtualThreadsIT.class);

    private static final int RESOURCES = 1_000;
    private static final Duration CHILD_TIMEOUT = TestTime.scaled(Duration.ofSeconds(60));

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(1);

    @TempDir
    Path dir;

    @Test
    void twoThousandWaitersOnTwoThousandResourcesHoldNoPlatformThreadEachAndAreAllGranted() throws Exception {
        Path jdk = VirtualThreadsIT.jdkOrAbort();
        Path out = dir.resolve("child.out");
        Path err = dir.resolve("child.err");
        Process child = VirtualThreadsIT.startChild(
                jdk,
                List.of(),
                AsyncWaitersMain.class,
                List.of(
                        String.valueOf(RESOURCES),
                        String.valueOf(CHILD_TIMEOUT.toSeconds()),
                        redis.uris().get(0)),
                out,
                err);
        try {
            assertThat(child.waitFor(CHILD_TIMEOUT.plusSeconds(20).toSeconds(), TimeUnit.SECONDS))
                    .as("the child finished; stderr:\n%s", Files.exists(err) ? Files.readString(err) : "")
                    .isTrue();
        } finally {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
        }
        String stdout = Files.readString(out);
        Map<String, String> result = VirtualThreadsIT.result(stdout);
        log.info("{} asynchronous waiters on {}: {}", 2 * RESOURCES, jdk.getFileName(), result);
        assertThat(child.exitValue())
                .as("exit code; stdout:\n%s\nstderr:\n%s", stdout, Files.readString(err))
                .isZero();
        assertThat(result)
                .as("stdout:\n%s\nstderr:\n%s", stdout, Files.readString(err))
                .containsEntry("granted", String.valueOf(2 * RESOURCES))
                .containsEntry("done", "true");
        if (Integer.parseInt(result.get("java")) >= 24) {
            int added = Integer.parseInt(result.get("platformMost")) - Integer.parseInt(result.get("platformBefore"));
            assertThat(added)
                    .as(
                            "platform threads added while %s waiters waited on as many resources: %s",
                            2 * RESOURCES, result)
                    .isLessThan(50);
        }
    }
}
