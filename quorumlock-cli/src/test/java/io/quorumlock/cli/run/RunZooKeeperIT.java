package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code quorumlock run} on a fenced lock: a real ZooKeeper server (curator-test, in this JVM). */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunZooKeeperIT {

    private static final String SHOW_ENV =
            "echo \"$QUORUMLOCK_FENCING_TOKEN|$QUORUMLOCK_RESOURCE|$QUORUMLOCK_VALID_UNTIL\"";

    @TempDir
    static Path zkDir;

    private static TestingServer zooKeeper;

    @TempDir
    Path dir;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zooKeeper = ZooKeeperServers.server(zkDir);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        if (zooKeeper != null) {
            zooKeeper.close();
        }
    }

    private RunProcess run(String... args) {
        String[] all = new String[args.length + 4];
        all[0] = "--zookeeper";
        all[1] = zooKeeper.getConnectString();
        all[2] = "--resource";
        all[3] = "invoice-numbers";
        System.arraycopy(args, 0, all, 4, args.length);
        return RunProcess.start(dir, all);
    }

    /** The token, resource and lease end one run's command saw, checked. */
    private long tokenSeenByOneRun() throws Exception {
        Instant before = Instant.now();
        try (RunProcess run = run("--", "sh", "-c", SHOW_ENV)) {
            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(run.err()).isEmpty();
            String[] seen = run.out().trim().split("\\|", -1);
            assertThat(seen).hasSize(3);
            assertThat(seen[1]).isEqualTo("invoice-numbers");
            // A ZooKeeper lease lives as long as its session: the end as granted is a session timeout away.
            assertThat(Instant.parse(seen[2]))
                    .isAfter(before)
                    .isBefore(Instant.now().plusSeconds(60));
            long token = Long.parseLong(seen[0]);
            assertThat(token).isPositive();
            return token;
        }
    }

    @Test
    void eachRunsCommandSeesAFencingTokenLargerThanTheRunBefore() throws Exception {
        long first = tokenSeenByOneRun();
        long second = tokenSeenByOneRun();
        long third = tokenSeenByOneRun();

        assertThat(second).isGreaterThan(first);
        assertThat(third).isGreaterThan(second);
    }

    @Test
    void aWaitingRunsCommandStartedFromItsParkedShellSeesATokenLargerThanTheHolders() throws Exception {
        Path token = dir.resolve("token");
        Path go = dir.resolve("go");
        String holding =
                "echo $QUORUMLOCK_FENCING_TOKEN > " + token + "; while [ ! -e " + go + " ]; do sleep 0.02; done";
        try (RunProcess holder = run("--wait", "0s", "--", "sh", "-c", holding)) {
            TestTime.await(
                    TestTime.scaledByLoad(Duration.ofSeconds(20)), () -> Files.exists(token), "the holder's command");
            try (RunProcess waiter = run("--wait", "30s", "--", "sh", "-c", "echo $$ $QUORUMLOCK_FENCING_TOKEN")) {
                ProcessHandle parked = waiter.parkedShell();
                Files.writeString(go, "");

                assertThat(waiter.exitCode()).as(waiter.err()).isZero();
                assertThat(holder.exitCode()).as(holder.err()).isZero();
                String[] seen = waiter.out().trim().split(" ");
                assertThat(seen[0]).as("started in the parked shell").isEqualTo(Long.toString(parked.pid()));
                assertThat(Long.parseLong(seen[1]))
                        .isGreaterThan(Long.parseLong(Files.readString(token).trim()));
            }
        }
    }

    @Test
    void theSessionTimeoutFollowsTheTtlSoTheLeaseEndsAboutTtlAway() throws Exception {
        Instant before = Instant.now();
        try (RunProcess run = run("--ttl", "7s", "--", "sh", "-c", "echo \"$QUORUMLOCK_VALID_UNTIL\"")) {
            assertThat(run.exitCode()).as(run.err()).isZero();
            Instant after = Instant.now();
            Instant validUntil = Instant.parse(run.out().trim());

            // The lease's end counts from a request sent during the grant, less the drift allowance (1% + 2 ms).
            assertThat(validUntil).isBetween(before.plusSeconds(7).minusMillis(72 + 1), after.plusSeconds(7));
            assertThat(run.err()).isEmpty();
        }
    }

    @Test
    void aTtlTheEnsembleCannotGrantIsAUsageErrorNamingWhatItGranted() throws Exception {
        // The kit's servers grant sessions of up to 30 s.
        try (RunProcess run =
                run("--ttl", "60s", "--", "touch", dir.resolve("ran").toString())) {
            assertThat(run.exitCode()).as(run.err()).isEqualTo(2);
            assertThat(run.err().lines().toList())
                    .containsExactly(
                            "--ttl 60s is longer than this ZooKeeper ensemble allows: it granted a session timeout of"
                                    + " 30s, its maxSessionTimeout (by default 20 x tickTime); use --ttl 30s or less,"
                                    + " or raise maxSessionTimeout on the servers",
                            "see 'quorumlock run --help'");
            assertThat(dir.resolve("ran")).doesNotExist();
        }
    }

    @Test
    void aBusyLockNamesItsHolderAndExits75() throws Exception {
        Path started = dir.resolve("started");
        Path proceed = dir.resolve("proceed");
        try (RunProcess holder =
                run("--", "sh", "-c", "touch " + started + "; while [ ! -e " + proceed + " ]; do sleep 0.05; done")) {
            TestTime.await(Duration.ofSeconds(30), () -> Files.exists(started), "the first run's command");
            try (RunProcess second =
                    run("--", "touch", dir.resolve("second-ran").toString())) {
                assertThat(second.exitCode()).as(second.err()).isEqualTo(75);
                assertThat(second.err().lines().toList())
                        .singleElement()
                        .asString()
                        .startsWith("quorumlock run: lock 'invoice-numbers' not acquired (one attempt, --wait 0):"
                                + " held by another owner: zookeeper://");
                assertThat(dir.resolve("second-ran")).doesNotExist();
            }
            Files.writeString(proceed, "");
            assertThat(holder.exitCode()).as(holder.err()).isZero();
        }
    }
}
