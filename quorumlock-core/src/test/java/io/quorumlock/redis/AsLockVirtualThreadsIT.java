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
 * {@code asLock} under 2,000 virtual threads on a Java 21+ JDK in a child JVM (the build is Java
 * 17): two clients, 20 threads of each per resource, every hold reentrant; no deadlock and every
 * section exclusive. The JDK is found as for {@link VirtualThreadsIT}; without one the test is
 * skipped, saying what to install.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AsLockVirtualThreadsIT {

    private static final Logger log = LoggerFactory.getLogger(AsLockVirtualThreadsIT.class);

    private static final int THREADS = 2_000;
    private static final int RESOURCES = 50;
    private static final int SECTIONS_PER_THREAD = 2;
    private static final Duration CHILD_TIMEOUT = TestTime.scaled(Duration.ofSeconds(100));

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    @TempDir
    Path dir;

    @Test
    void twoThousandVirtualThreadsOfTwoClientsTakeTurnsReentrantly() throws Exception {
        Path jdk = VirtualThreadsIT.jdkOrAbort();
        List<String> args =
                VirtualThreadsIT.childArgs(THREADS, RESOURCES, SECTIONS_PER_THREAD, CHILD_TIMEOUT, redis.uris());
        Path out = dir.resolve("child.out");
        Path err = dir.resolve("child.err");
        Process child = VirtualThreadsIT.startChild(jdk, List.of(), AsLockVirtualThreadsMain.class, args, out, err);
        try {
            assertThat(child.waitFor(CHILD_TIMEOUT.plusSeconds(15).toSeconds(), TimeUnit.SECONDS))
                    .as("the child JVM finished (else a deadlock?); stderr:\n%s", Files.readString(err))
                    .isTrue();
        } finally {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
        }
        String stdout = Files.readString(out);
        String stderr = Files.readString(err);
        assertThat(child.exitValue())
                .as("exit code of the child JVM; stdout:\n%s\nstderr:\n%s", stdout, stderr)
                .isZero();
        Map<String, String> result = VirtualThreadsIT.result(stdout);
        log.info(
                "{} virtual threads of 2 clients over {} resources on {}: {} sections in {} ms",
                THREADS,
                RESOURCES,
                jdk.getFileName(),
                result.get("sections"),
                result.get("millis"));
        assertThat(result)
                .as("stdout:\n%s\nstderr:\n%s", stdout, stderr)
                .containsEntry("done", "true")
                .containsEntry("failures", "0")
                .containsEntry("finished", String.valueOf(THREADS))
                .containsEntry("sections", String.valueOf(THREADS * SECTIONS_PER_THREAD))
                .containsEntry("maxInside", "1")
                .containsEntry("lost", "0");
    }
}
