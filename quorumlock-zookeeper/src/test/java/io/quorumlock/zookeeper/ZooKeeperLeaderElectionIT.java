package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.LeaderElection;
import io.quorumlock.LeaseLostException;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.LeaderTimeline;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election over the ZooKeeper lock on a real server: one candidate of four leads, each
 * hand-over (the leader closed, stepping down, its session expired, cut off by a partition) raises
 * the term's fencing token, and takes no longer than the session timeout and a margin. A paused
 * leader is not shown here: the module's tests run every client in the test's JVM (the torture
 * runs pause child processes).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ZooKeeperLeaderElectionIT {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLeaderElectionIT.class);

    /** What a ZooKeeper lease lasts without its client: the session, whatever the TTL. */
    private static final Duration SESSION = Duration.ofSeconds(2);

    private static final Duration TTL = Duration.ofSeconds(10);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(20));
    private static final Duration MARGIN = TestTime.scaled(Duration.ofSeconds(2));

    @TempDir
    static Path dataDir;

    private static TestingServer server;

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final LeaderTimeline timeline = new LeaderTimeline(SESSION, WAIT, MARGIN);

    @BeforeAll
    static void startServer() throws Exception {
        server = ZooKeeperServers.server(dataDir);
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private final class Candidate {
        final String name;
        final ZooKeeperLock lock;
        final LeaderElection<FencedLease> election;

        Candidate(String name, String connectString) {
            this.name = name;
            this.lock = TestLocks.lock(connectString, SESSION);
            closing.add(lock);
            this.election = LeaderElection.builder(lock, "scheduler")
                    .ttl(TTL)
                    .listener(new LeaderElection.Listener<>() {
                        @Override
                        public void elected(LeaderElection.Term<? extends FencedLease> term) {
                            timeline.elected(name, token(term));
                        }

                        @Override
                        public void revoked(
                                LeaderElection.Term<? extends FencedLease> term, Optional<LeaseLostException> cause) {
                            timeline.revoked(name, token(term));
                        }
                    })
                    .start();
            closing.add(election);
        }
    }

    private static long token(LeaderElection.Term<?> term) {
        return term.fencingToken().orElseThrow();
    }

    private static Candidate theLeader(List<Candidate> candidates) {
        TestTime.await(
                WAIT,
                () -> candidates.stream().filter(c -> c.election.isLeader()).count() == 1,
                "exactly one leader");
        return candidates.stream()
                .filter(c -> c.election.isLeader())
                .findFirst()
                .orElseThrow();
    }

    private LeaderTimeline.Told handOver(String how, LeaderTimeline.Fault fault, Candidate leader) throws Exception {
        LeaderTimeline.HandOver handOver = timeline.handOver(how, leader.name, fault);
        log.info(
                "ZooKeeper leader hand-over, leader {}: {} ms (session timeout {} ms)",
                how,
                handOver.took().toMillis(),
                SESSION.toMillis());
        return handOver.next();
    }

    @Test
    void oneOfFourLeadsAndEveryHandOverRaisesTheToken() throws Exception {
        List<Candidate> candidates = new ArrayList<>();
        for (String name : List.of("a", "b", "c", "d")) {
            candidates.add(new Candidate(name, server.getConnectString()));
        }
        Candidate first = theLeader(candidates);
        Thread.sleep(TestTime.scaled(Duration.ofMillis(300)).toMillis());
        assertThat(candidates.stream().filter(c -> c.election.isLeader()))
                .as("leaders")
                .hasSize(1);

        LeaderTimeline.Told afterClose = handOver("closed", () -> first.election.close(), first);
        timeline.assertRevokedBeforeElected(first.name, afterClose);
        candidates.remove(first);

        Candidate second = theLeader(candidates);
        LeaderTimeline.Told afterStepDown = handOver("stepped down", () -> second.election.stepDown(), second);
        timeline.assertRevokedBeforeElected(second.name, afterStepDown);

        Candidate third = theLeader(candidates);
        // The session dropped as if its process died: the server deletes the node at once, and the
        // old leader learns it when its client reconnects, so no order between the two is asserted.
        handOver(
                "killed (session expired)",
                () -> ZooKeeperServers.expireSession(third.lock.client(), server.getConnectString()),
                third);
        timeline.awaitRevoked(third.name);
        theLeader(candidates);

        List<Long> tokens = timeline.electedTokens();
        assertThat(tokens)
                .as("the terms' tokens")
                .hasSizeGreaterThanOrEqualTo(4)
                .isSorted()
                .doesNotHaveDuplicates();
    }

    @Test
    void aLeaderCutOffByAPartitionIsRevokedBeforeAnotherIsElected() throws Exception {
        FaultProxy proxy = FaultProxy.start("127.0.0.1", server.getPort());
        closing.add(proxy);
        Candidate cutOff = new Candidate("cut-off", proxy.address());
        cutOff.election.awaitLeadership(WAIT).orElseThrow();
        Candidate direct = new Candidate("direct", server.getConnectString());

        LeaderTimeline.Told next = handOver("partitioned", () -> proxy.partition(), cutOff);
        assertThat(next.candidate()).isEqualTo("direct");
        timeline.assertRevokedBeforeElected(cutOff.name, next);
        assertThat(next.token()).isGreaterThan(timeline.told().get(0).token());
        assertThat(cutOff.election.isLeader()).isFalse();
        proxy.heal();
        assertThat(direct.election.isLeader()).isTrue();
    }
}
