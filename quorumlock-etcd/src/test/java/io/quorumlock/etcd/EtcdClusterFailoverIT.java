package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.EtcdServer;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Scenario 4, the etcd half: a member of three dies while locks are taken; locking goes on, tokens grow. */
class EtcdClusterFailoverIT {

    private static final Logger log = LoggerFactory.getLogger(EtcdClusterFailoverIT.class);
    private static final Duration TTL = Duration.ofSeconds(5);

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(3);

    @Test
    void lockingGoesOnWhenTheLeaderIsKilledWhileALockIsHeldAndTokensKeepIncreasing() {
        Duration maxWait = TestTime.scaled(Duration.ofSeconds(15));
        try (EtcdLock a = EtcdLock.builder().endpoints(etcd.endpoints()).build();
                EtcdLock b = EtcdLock.builder().endpoints(etcd.endpoints()).build()) {
            List<Long> tokens = new ArrayList<>();
            EtcdServer killed = null;
            FencedLease heldDuringTheKill = null;
            long killedAt = 0;
            for (int i = 0; i < 20; i++) {
                EtcdLock lock = i % 2 == 0 ? a : b; // two clients take turns
                long start = System.nanoTime();
                FencedLease lease = lock.acquire("stock:sku-42", TTL, maxWait);
                if (killed != null && tokens.size() == 10) {
                    log.info(
                            "first acquisition after the leader was killed took {} ms",
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                }
                tokens.add(lease.fencingToken());
                if (i == 9) { // kill the leader while this lease is held
                    killed = etcd.cluster().leader().orElseThrow();
                    killed.stop();
                    killedAt = System.nanoTime();
                    heldDuringTheKill = lease;
                }
                lease.release();
            }
            log.info(
                    "10 acquisitions in {} ms after {} was killed; tokens {}",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt),
                    killed.name(),
                    tokens);
            assertThat(tokens).hasSize(20).isSorted().doesNotHaveDuplicates();
            assertThat(heldDuringTheKill.isValid()).isFalse(); // released; it may have been lost before

            // With the member back, the cluster is whole again and the tokens still grow.
            killed.startAgain();
            try (FencedLease after = b.acquire("stock:sku-42", TTL, maxWait)) {
                assertThat(after.fencingToken()).isGreaterThan(tokens.get(tokens.size() - 1));
            }
        }
    }

    @Test
    void aLeaseOutlivesTheLossOfEachMemberInTurnWhileTheClusterKeepsItsQuorum() throws Exception {
        try (EtcdLock lock = EtcdLock.builder().endpoints(etcd.endpoints()).build()) {
            // 6 s: room for gRPC's reconnect backoff to a member that was down a moment ago.
            FencedLease lease = lock.acquire("outlives", Duration.ofSeconds(6), Duration.ofSeconds(10));
            // Whichever member the keep-alive stream is on goes down at some point: the stream must
            // move to another member instead of declaring the lease lost, since etcd still has it;
            // each member stays down for longer than the TTL, so a stream that went silent too
            // must have been replaced in time.
            for (EtcdServer member : etcd.cluster().members()) {
                member.stop();
                long stopped = System.nanoTime();
                TestTime.await(
                        Duration.ofSeconds(15),
                        () -> lease.lost().isDone() || System.nanoTime() - stopped > 7_000_000_000L,
                        "a lease's TTL and more to pass with " + member.name() + " down");
                assertThat(lease.lost())
                        .as("lost with %s down: %s", member.name(), lease)
                        .isNotDone();
                assertThat(lease.isValid()).as("%s", lease).isTrue();
                member.startAgain();
                etcd.cluster().awaitHealthy(); // all three again before the next one goes
            }
            assertThat(lease.extend(Duration.ofSeconds(6))).isTrue();
            lease.release();
        }
    }

    @Test
    void aLeaseHeldAcrossTheLossOfAFollowerIsEitherKeptOrReportedLost() throws Exception {
        try (EtcdLock a = EtcdLock.builder().endpoints(etcd.endpoints()).build();
                EtcdLock b = EtcdLock.builder().endpoints(etcd.endpoints()).build()) {
            Duration ttl = Duration.ofSeconds(2);
            FencedLease lease = a.acquire("report", ttl, Duration.ofSeconds(10));
            EtcdServer leader = etcd.cluster().leader().orElseThrow();
            EtcdServer follower = etcd.cluster().members().stream()
                    .filter(m -> m != leader)
                    .findFirst()
                    .orElseThrow();
            follower.stop();

            // Past a full TTL the lease is either still kept alive (its stream was on a survivor), or
            // it said it was lost; never silently invalid. Either way, b's later grant has a larger token.
            long start = System.nanoTime();
            TestTime.await(
                    Duration.ofSeconds(15),
                    () -> lease.lost().isDone() || System.nanoTime() - start > ttl.toNanos() + 1_000_000_000L,
                    "the lease to be lost or to outlive its TTL");
            assertThat(lease.isValid() != lease.lost().isDone())
                    .as("valid xor lost: %s", lease)
                    .isTrue();
            long token = lease.fencingToken();
            lease.release();
            try (FencedLease next = b.acquire("report", TTL, Duration.ofSeconds(10))) {
                assertThat(next.fencingToken()).isGreaterThan(token);
            }
        }
    }
}
