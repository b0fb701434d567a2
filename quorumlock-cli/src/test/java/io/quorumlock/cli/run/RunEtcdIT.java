package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.TestTime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code quorumlock run} on etcd (Debian's {@code etcd-server}; each test is skipped, saying why,
 * where it is missing): fencing tokens, and a lease lost when the only member freezes.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunEtcdIT {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    @TempDir
    Path dir;

    private RunProcess run(String... args) {
        return runWithTtl("2s", args);
    }

    private RunProcess runWithTtl(String ttl, String... args) {
        String[] all = new String[args.length + 8];
        System.arraycopy(
                new String[] {
                    "--etcd",
                    String.join(",", etcd.endpoints()),
                    "--resource",
                    "stock",
                    "--ttl",
                    ttl,
                    // A fresh client's first grant can take over the default 2 s on a loaded machine.
                    "--connect-timeout",
                    "5s"
                },
                0,
                all,
                0,
                8);
        System.arraycopy(args, 0, all, 8, args.length);
        return RunProcess.start(dir, all);
    }

    private long token() throws Exception {
        // A lease of 2 s was lost while waiting beside two CPU burners: no keep-alive answer came
        // within its TTL from a client JVM just started. The tokens do not depend on the TTL.
        try (RunProcess run = runWithTtl("10s", "--", "sh", "-c", "echo $QUORUMLOCK_FENCING_TOKEN")) {
            assertThat(run.exitCode()).as(run.err()).isZero();
            return Long.parseLong(run.out().trim());
        }
    }

    @Test
    void successiveRunsSeeIncreasingFencingTokens() throws Exception {
        long first = token();
        long second = token();

        assertThat(first).isPositive();
        assertThat(second).isGreaterThan(first);
    }

    @Test
    void aLeaseLostToAFrozenMemberStopsTheCommandAndExits76() throws Exception {
        Path started = dir.resolve("started");
        // A lease of 5 s: a 2 s one was lost before its command started, beside two CPU burners (a
        // client JVM just started answered no keep-alive within it).
        try (RunProcess run =
                runWithTtl("5s", "--grace", "500ms", "--", "sh", "-c", "touch " + started + "; exec sleep 60")) {
            try {
                TestTime.await(
                        TestTime.scaledByLoad(Duration.ofSeconds(20)),
                        () -> Files.exists(started) || !run.isAlive(),
                        "the command");
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; run's stderr: " + run.err(), e);
            }
            assertThat(Files.exists(started))
                    .as("the command started; run's stderr: %s", run.err())
                    .isTrue();
            etcd.get(0).pause();

            // The lease's TTL, the grace, then the release's requests to the frozen member time out.
            assertThat(run.exitCode(Duration.ofSeconds(30))).as(run.err()).isEqualTo(76);
            assertThat(run.err().lines().toList())
                    .singleElement()
                    .asString()
                    .startsWith("quorumlock run: lease on 'stock' lost: ")
                    .endsWith("; stopping the command: SIGTERM now, SIGKILL after --grace 500 ms");
        }
    }
}
