package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.quorumlock.FencedLease;
import io.quorumlock.LeaderElection;
import io.quorumlock.LeaseLostException;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election over the etcd lock on a real member: one candidate of three leads, each hand-over
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
    private final List<Told> timeline = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    /** One listener call, in the order of all candidates' calls. */
    private record Told(String candidate, boolean elected, long token, long at) {}

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
                            timeline.add(new Told(name, true, token(term), System.nanoTime()));
                        }

                        @Override
                        public void revoked(
                                LeaderElection.Term<? extends FencedLease> term, Optional<LeaseLostException> cause) {
                            timeline.add(new Told(name, false, token(term), System.nanoTime()));
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

    /** The first election after {@code from} in the timeline, of a candidate other than {@code old}. */
    private Told awaitElected(int from, String old) {
        TestTime.await(
                WAIT,
                () -> timeline.subList(from, timeline.size()).stream()
                        .anyMatch(t -> t.elected && !t.candidate.equals(old)),
                "another candidate to be elected after " + old);
        return timeline.subList(from, timeline.size()).stream()
                .filter(t -> t.elected && !t.candidate.equals(old))
                .findFirst()
                .orElseThrow();
    }

    private Told handOver(String how, Candidate leader, Fault fault) throws Exception {
        int mark = timeline.size();
        long start = System.nanoTime();
        fault.apply(leader);
        Told next = awaitElected(mark, leader.name);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(next.at - start);
        log.info("etcd leader hand-over, leader {}: {} ms (TTL {} ms)", how, tookMillis, TTL.toMillis());
        assertThat(tookMillis)
                .as("hand-over when " + how)
                .isLessThanOrEqualTo(TTL.plus(MARGIN).toMillis());
        return next;
    }

    /** Asserts the old leader was told its term ended before the next leader was told it leads. */
    private void assertRevokedBeforeElected(String old, Told next) {
        int revoked = indexOf(old, false, timeline.size());
        assertThat(revoked).as(old + " revoked").isNotNegative();
        assertThat(revoked)
                .as(old + " revoked before " + next.candidate + " elected")
                .isLessThan(timeline.indexOf(next));
    }

    private int indexOf(String candidate, boolean elected, int before) {
        for (int i = before - 1; i >= 0; i--) {
            if (timeline.get(i).candidate.equals(candidate) && timeline.get(i).elected == elected) {
                return i;
            }
        }
        return -1;
    }

    @FunctionalInterface
    private interface Fault {
        void apply(Candidate leader) throws Exception;
    }

    @Test
    void oneOfThreeLeadsAndEveryHandOverRaisesTheToken() throws Exception {
        List<Candidate> candidates = new ArrayList<>();
        for (String name : List.of("a", "b", "c")) {
            candidates.add(new Candidate(name, etcd.endpoints()));
        }
        Candidate first = theLeader(candidates);
        Thread.sleep(TestTime.scaled(Duration.ofMillis(300)).toMillis());
        assertThat(candidates.stream().filter(c -> c.election.isLeader()))
                .as("leaders")
                .hasSize(1);

        Told afterClose = handOver("closed", first, leader -> leader.election.close());
        assertRevokedBeforeElected(first.name, afterClose);
        candidates.remove(first);

        Candidate second = theLeader(candidates);
        Told afterStepDown = handOver("stepped down", second, leader -> leader.election.stepDown());
        assertRevokedBeforeElected(second.name, afterStepDown);

        Candidate third = theLeader(candidates);
        // The lease dropped as if its process died: etcd deletes the key at once, and the old
        // leader learns it at its next keep-alive, so no order between the two is asserted.
        try (Client admin = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build()) {
            handOver(
                    "killed (lease revoked)",
                    third,
                    leader -> admin.getLeaseClient()
                            .revoke(((EtcdLease)
                                            leader.election.term().orElseThrow().lease())
                                    .leaseId())
                            .get(5, TimeUnit.SECONDS));
        }
        TestTime.await(
                WAIT,
                () -> indexOf(third.name, false, timeline.size()) > indexOf(third.name, true, timeline.size()),
                "the revoked leader to be told");
        theLeader(candidates);

        List<Long> tokens =
                timeline.stream().filter(Told::elected).map(Told::token).toList();
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

        Told next = handOver("partitioned", cutOff, leader -> proxies.partition(0));
        assertThat(next.candidate).isEqualTo("direct");
        assertRevokedBeforeElected(cutOff.name, next);
        assertThat(next.token).isGreaterThan(timeline.get(0).token);
        assertThat(cutOff.election.isLeader()).isFalse();
        proxies.heal();
        assertThat(direct.election.isLeader()).isTrue();
    }
}
