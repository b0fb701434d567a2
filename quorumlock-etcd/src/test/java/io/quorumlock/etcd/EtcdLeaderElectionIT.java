package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.quorumlock.FencedLease;
import io.quorumlock.LeaderElection;
import io.quorumlock.LeaseLostException;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.LeaderTimeline;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election over the etcd lock on a real member: one candidate of four leads, each hand-over
 * (the leader closed, stepping down, its lease revoked, cut off by a partition) raises the term's
 * fencing token, and takes no longer than the TTL and a margin. A paused leader is not shown here:
 * the module's tests run every client in the test's JVM (the torture runs pause child processes).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class EtcdLeaderElectionIT {

    private static final Logger log = LoggerFactory.getLogger(EtcdLeaderElectionIT.class);

    private static final Duration TTL = Duration.ofSeconds(3);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(20));
    private static final Duration MARGIN = TestTime.scaled(Duration.ofSeconds(2));

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final LeaderTimeline timeline = new LeaderTimeline(TTL, WAIT, MARGIN);

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private final class Candidate {
        final String name;
        final EtcdLock lock;
        final LeaderElection<FencedLease> election;

        Candidate(String name, List<String> endpoints) {
            this.name = name;
            this.lock = EtcdLock.builder().endpoints(endpoints).build();
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
                "etcd leader hand-over, leader {}: {} ms (TTL {} ms)",
                how,
                handOver.took().toMillis(),
                TTL.toMillis());
        return handOver.next();
    }

    @Test
    void oneOfFourLeadsAndEveryHandOverRaisesTheToken() throws Exception {
        List<Candidate> candidates = new ArrayList<>();
        for (String name : List.of("a", "b", "c", "d")) {
            candidates.add(new Candidate(name, etcd.endpoints()));
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
        // The lease dropped as if its process died: etcd deletes the key at once, and the old
        // leader learns it at its next keep-alive, so no order between the two is asserted.
        try (Client admin = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build()) {
            handOver(
                    "killed (lease revoked)",
                    () -> admin.getLeaseClient()
                            .revoke(((EtcdLease)
                                            third.election.term().orElseThrow().lease())
                                    .leaseId())
                            .get(5, TimeUnit.SECONDS),
                    third);
        }
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
        FaultProxies proxies = FaultProxies.inFrontOf(etcd.cluster());
        closing.add(proxies);
        Candidate cutOff = new Candidate("cut-off", proxies.uris());
        cutOff.election.awaitLeadership(WAIT).orElseThrow();
        Candidate direct = new Candidate("direct", etcd.endpoints());

        LeaderTimeline.Told next = handOver("partitioned", () -> proxies.partition(0), cutOff);
        assertThat(next.candidate()).isEqualTo("direct");
        timeline.assertRevokedBeforeElected(cutOff.name, next);
        assertThat(next.token()).isGreaterThan(timeline.told().get(0).token());
        assertThat(cutOff.election.isLeader()).isFalse();
        proxies.heal();
        assertThat(direct.election.isLeader()).isTrue();
    }
}
