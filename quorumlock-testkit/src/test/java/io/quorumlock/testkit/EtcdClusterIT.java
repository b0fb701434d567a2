package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class EtcdClusterIT {

    private static final Logger log = LoggerFactory.getLogger(EtcdClusterIT.class);

    @BeforeEach
    void needsEtcd() {
        assumeTrue(
                EtcdCluster.available(),
                () -> "etcd tests skipped: " + EtcdCluster.unavailableReason().orElse(""));
    }

    @Test
    void aSingleMemberServesKeepsItsDataAcrossAKillAndLeavesNothingBehind() throws Exception {
        EtcdCluster etcd = EtcdCluster.start(1);
        EtcdServer member = etcd.get(0);
        long pid = member.pid();
        Path dir = member.dir();
        int port = member.clientPort();
        log.info("Testing with etcd {} from {}", EtcdCluster.version(), EtcdCluster.binary());

        assertThat(EtcdCluster.version()).matches("\\d+\\.\\d+\\.\\d+");
        assertThat(etcd.size()).isEqualTo(1);
        assertThat(etcd.endpoints()).containsExactly("http://127.0.0.1:" + port);
        assertThat(member.peerUrl()).startsWith("http://127.0.0.1:").isNotEqualTo(member.clientUrl());
        assertThat(member.isHealthy()).isTrue();
        assertThat(etcd.leader()).contains(member);
        assertThat(dir.getFileName().toString()).startsWith("quorumlock-etcd-");
        assertThat(Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "cwd")))
                .isEqualTo(dir);
        put(member, "k", "v");

        member.stop();
        assertThat(Clients.processGone(pid)).isTrue();
        assertThat(member.isRunning()).isFalse();
        assertThat(member.isHealthy()).isFalse();
        assertThatThrownBy(member::pid)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not running");
        member.stop(); // idempotent

        member.startAgain();
        member.startAgain(); // no-op while running
        assertThat(member.clientPort()).isEqualTo(port);
        assertThat(member.isHealthy()).isTrue();
        assertThat(get(member, "k")).contains("v"); // etcd fsyncs its log: nothing acknowledged is lost
        long secondPid = member.pid();

        etcd.close();
        assertThat(Clients.processGone(secondPid)).isTrue();
        assertThat(dir).doesNotExist();
        etcd.close(); // idempotent
        assertThatThrownBy(member::startAgain)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void threeMembersElectANewLeaderWhenTheLeaderIsKilledAndItRejoinsWithTheData() {
        try (EtcdCluster etcd = EtcdCluster.start(3)) {
            assertThat(etcd.endpoints()).hasSize(3).doesNotHaveDuplicates();
            assertThat(etcd.members()).allMatch(EtcdServer::isHealthy);
            EtcdServer leader = etcd.leader().orElseThrow();
            put(leader, "before", "1");

            leader.stop();
            TestTime.await(
                    Duration.ofSeconds(10),
                    () -> etcd.leader().filter(l -> l != leader).isPresent(),
                    "a new leader among the two members left");
            EtcdServer survivor = etcd.leader().orElseThrow();
            put(survivor, "during", "2");

            leader.startAgain(); // waits until it is healthy: a majority runs
            assertThat(leader.isHealthy()).isTrue();
            TestTime.await(
                    Duration.ofSeconds(5), () -> get(leader, "during").isPresent(), "the rejoined member to catch up");
            assertThat(get(leader, "before")).contains("1");

            EtcdServer other = etcd.members().stream()
                    .filter(m -> m != survivor)
                    .findFirst()
                    .orElseThrow();
            other.pause();
            assertThat(other.isPaused()).isTrue();
            assertThat(other.isHealthy()).isFalse();
            put(survivor, "paused", "3"); // two of three still form a quorum
            survivor.stop();

            etcd.reset(); // resumes, starts the stopped one, deletes every key
            assertThat(etcd.members()).allMatch(m -> m.isRunning() && !m.isPaused() && m.isHealthy());
            for (EtcdServer member : etcd) {
                assertThat(get(member, "before")).isEmpty();
            }
        }
    }

    @Test
    void aMemberThatRejoinsSlowlyIsWaitedForAndSaysWhatItWaitsFor() {
        try (EtcdCluster etcd = EtcdCluster.start(3)) {
            EtcdServer member = etcd.get(0);
            String url = Pattern.quote(member.clientUrl());
            // The member cannot rejoin while the others are frozen: they are thawed once its wait is told slow.
            WaitRecorder told = new WaitRecorder(line -> {
                if (line.contains(" not healthy after ")) {
                    etcd.get(1).resume();
                    etcd.get(2).resume();
                }
            });
            member.stop();
            etcd.get(1).pause();
            etcd.get(2).pause();

            try (ServerWait.Listening listening = ServerWait.listen(told)) {
                member.startAgain();
            }

            assertThat(member.isHealthy()).isTrue();
            assertThat(told.lines).hasSize(2);
            assertThat(told.lines.get(0))
                    .matches("etcd member member-0 at " + url + " not healthy after [\\d.]+ s; waiting up to [\\d.]+ s"
                            + " \\(load [\\d.]+ per processor\\)");
            assertThat(told.lines.get(1)).matches("etcd member member-0 at " + url + " healthy after [\\d.]+ s");
            assertThat(told.statuses) // one per look at the member, a second apart at least
                    .isNotEmpty()
                    .allMatch(status -> status.matches("waiting for etcd member member-0 at " + url
                            + " to be healthy: [\\d.]+ s \\(at most [\\d.]+ s\\)"));
        }
    }

    @Test
    void startAgainFailsClearlyWhenAnotherProcessTookThePort() throws Exception {
        try (EtcdCluster etcd = EtcdCluster.start(1)) {
            EtcdServer member = etcd.get(0);
            member.stop();
            try (ServerSocket squatter = new ServerSocket(member.clientPort(), 1, InetAddress.getByName("127.0.0.1"))) {
                assertThat(squatter.isBound()).isTrue();
                assertThatThrownBy(member::startAgain)
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("is now used by another process")
                        .hasMessageContaining("address already in use");
            }
            assertThat(member.isRunning()).isFalse();
            member.startAgain();
            assertThat(member.isHealthy()).isTrue();
        }
    }

    @Test
    void rejectsMemberCountsOutOfRange() {
        assertThatThrownBy(() -> EtcdCluster.start(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("members must be between 1 and 7, was 0 (1 or 3 are usual)");
        assertThatThrownBy(() -> EtcdCluster.start(8)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aJvmThatIsInterruptedLeavesNoMemberBehind() throws Exception {
        Clients.assertInterruptedJvmLeavesNothing(Demo.class, "etcd");
    }

    /** A program that starts a one-member cluster and runs until it is interrupted. */
    static final class Demo {
        public static void main(String[] args) throws InterruptedException {
            EtcdCluster etcd = EtcdCluster.start(1);
            System.out.println(etcd.get(0).pid());
            System.out.println(etcd.get(0).dir());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    // ---- keys through the member's HTTP gateway (the kit has no etcd client) ---------------------

    static void put(EtcdServer member, String key, String value) {
        assertThat(member.post("/v3/kv/put", "{\"key\":\"" + b64(key) + "\",\"value\":\"" + b64(value) + "\"}"))
                .as("put %s on %s", key, member)
                .isPresent();
    }

    static Optional<String> get(EtcdServer member, String key) {
        String body = member.post("/v3/kv/range", "{\"key\":\"" + b64(key) + "\"}")
                .orElseThrow(() -> new AssertionError("no answer from " + member));
        List<String> values = java.util.regex.Pattern.compile("\"value\":\"([^\"]*)\"")
                .matcher(body)
                .results()
                .map(m -> new String(Base64.getDecoder().decode(m.group(1)), StandardCharsets.UTF_8))
                .toList();
        return values.stream().findFirst();
    }

    private static String b64(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }
}
