package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.LeaderElection;
import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockHolder;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * Leader election over Redlock on three real nodes, and over one node: one candidate leads at a
 * time; closing, stepping down or returning from the work hands the role on; a leader cut off from
 * its nodes is revoked, and its work interrupted, before another candidate is elected.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LeaderElectionIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(LeaderElectionIT.class);

    private static final Duration TTL = Duration.ofSeconds(5);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(15));

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    /** What one candidate was told, in order, with the time on the monotonic clock. */
    private static final class Events implements LeaderElection.Listener<Lease> {
        final List<String> told = new CopyOnWriteArrayList<>();
        final AtomicLong electedAt = new AtomicLong();
        final AtomicLong revokedAt = new AtomicLong();
        final AtomicInteger terms = new AtomicInteger();

        @Override
        public void elected(LeaderElection.Term<? extends Lease> term) {
            electedAt.set(System.nanoTime());
            terms.incrementAndGet();
            told.add("elected");
        }

        @Override
        public void revoked(LeaderElection.Term<? extends Lease> term, Optional<LeaseLostException> cause) {
            revokedAt.set(System.nanoTime());
            told.add(cause.isPresent() ? "lost" : "revoked");
        }
    }

    private Redlock lock(List<String> nodes, String holder) {
        return lock(nodes, holder, Duration.ofMillis(50));
    }

    private Redlock lock(List<String> nodes, String holder, Duration nodeTimeout) {
        Redlock lock = Redlock.builder()
                .nodes(nodes)
                .holder(holder)
                .restartGuard(false)
                .nodeTimeout(nodeTimeout)
                .build();
        closing.add(lock);
        return lock;
    }

    /** A fault proxy in front of each node, closed after the test. */
    private FaultProxies proxies() {
        FaultProxies proxies = FaultProxies.inFrontOf(redis.servers());
        closing.add(proxies);
        return proxies;
    }

    private LeaderElection<Lease> candidate(Redlock lock, Events events) {
        return candidate(lock, events, TTL);
    }

    private LeaderElection<Lease> candidate(Redlock lock, Events events, Duration ttl) {
        LeaderElection<Lease> election = LeaderElection.builder(lock, "scheduler")
                .ttl(ttl)
                .listener(events)
                .start();
        closing.add(election);
        return election;
    }

    /**
     * The old leader's revoked returns before its lease is released, so before the next leader can
     * be told elected: over many hand-overs, as a user's listeners in one process see them. The
     * release used to run as the leader's work returned, before revoked was told (on Redis, the
     * waiting candidate was elected first in about one hand-over in ten on a busy machine).
     */
    @Test
    void everyHandOverTellsTheOldLeaderRevokedBeforeTheNewLeaderElected() {
        Redlock lockA = lock(redis.uris(), "a", Duration.ofMillis(200));
        Redlock lockB = lock(redis.uris(), "b", Duration.ofMillis(200));
        for (int round = 0; round < 50; round++) {
            List<String> told = new CopyOnWriteArrayList<>();
            LeaderElection<Lease> b = LeaderElection.builder(lockB, "hand-over-" + round)
                    .ttl(TTL)
                    .listener(recording("b", told))
                    .start();
            closing.add(b);
            assertThat(b.awaitLeadership(WAIT)).as("b leads, round %d", round).isPresent();
            LeaderElection<Lease> a = LeaderElection.builder(lockA, "hand-over-" + round)
                    .ttl(TTL)
                    .listener(recording("a", told))
                    .start();
            closing.add(a);
            assertThat(a.awaitLeadership(Duration.ofMillis(100)))
                    .as("a waits for the release, round %d", round)
                    .isEmpty();
            if (round % 2 == 0) {
                b.close();
            } else {
                b.stepDown();
            }
            assertThat(a.awaitLeadership(WAIT)).as("a leads, round %d", round).isPresent();
            a.close();
            b.close();
            assertThat(told).as("round %d", round).startsWith("b elected", "b revoked", "a elected");
        }
    }

    private static LeaderElection.Listener<Lease> recording(String candidate, List<String> told) {
        return new LeaderElection.Listener<>() {
            @Override
            public void elected(LeaderElection.Term<? extends Lease> term) {
                told.add(candidate + " elected");
            }

            @Override
            public void revoked(LeaderElection.Term<? extends Lease> term, Optional<LeaseLostException> cause) {
                told.add(candidate + " revoked");
            }
        };
    }

    @Test
    void oneOfTwoCandidatesLeadsAndTheOtherTakesOverWhenItCloses() {
        Events eventsA = new Events();
        Events eventsB = new Events();
        LeaderElection<Lease> a = candidate(lock(redis.uris(), "a"), eventsA);
        assertThat(a.awaitLeadership(WAIT)).as("a leads alone").isPresent();
        LeaderElection<Lease> b = candidate(lock(redis.uris(), "b"), eventsB);
        assertThat(b.awaitLeadership(Duration.ofMillis(300)))
                .as("b while a leads")
                .isEmpty();
        assertThat(a.isLeader()).isTrue();
        assertThat(b.leader())
                .as("the leader, as b observes it")
                .map(LockHolder::name)
                .hasValue("a");

        long closedAt = System.nanoTime();
        a.close();
        assertThat(b.awaitLeadership(WAIT)).as("b after a closed").isPresent();
        handOver("closed", closedAt, eventsB, TTL);
        assertThat(b.leader()).map(LockHolder::name).hasValue("b");
        assertThat(a.isLeader()).isFalse();
        assertThat(eventsA.told).containsExactly("elected", "revoked");
        assertThat(eventsB.told).containsExactly("elected");
        assertThat(eventsA.revokedAt.get()).isLessThan(eventsB.electedAt.get());
        assertThat(b.term().orElseThrow().fencingToken())
                .as("a Redis term's token")
                .isEmpty();
    }

    @Test
    void aLeaderThatStepsDownHandsOverAndCampaignsAgain() {
        Redlock lockA = lock(redis.uris(), "a");
        LeaderElection<Lease> a = candidate(lockA, new Events());
        a.awaitLeadership(WAIT).orElseThrow();
        Redlock lockB = lock(redis.uris(), "b");
        LeaderElection<Lease> b = candidate(lockB, new Events());
        TestTime.await(Duration.ofSeconds(10), () -> lockB.waiting("scheduler") == 1, "b to wait");

        a.stepDown();
        assertThat(b.awaitLeadership(WAIT)).as("b after a stepped down").isPresent();
        TestTime.await(Duration.ofSeconds(10), () -> lockA.waiting("scheduler") == 1, "a to campaign again");
        b.stepDown();
        assertThat(a.awaitLeadership(WAIT)).as("a again, after b stepped down").isPresent();
    }

    /**
     * The waiting candidate hears the release, and its nodes' answers, 250 ms late (as on a busy
     * machine), longer than the retry's first delay (100 ms by default): the candidate that stepped
     * down still leaves it the role, since it campaigns again only once another candidate leads.
     */
    @Test
    void aLeaderThatStepsDownLeavesTheRoleToACandidateThatHearsTheReleaseLate() {
        Redlock lockA = lock(redis.uris(), "a");
        LeaderElection<Lease> a = candidate(lockA, new Events());
        a.awaitLeadership(WAIT).orElseThrow();
        FaultProxies proxies = proxies();
        Redlock lockB = lock(proxies.uris(), "b", TestTime.scaled(Duration.ofSeconds(1)));
        LeaderElection<Lease> b = candidate(lockB, new Events());
        TestTime.await(Duration.ofSeconds(10), () -> lockB.waiting("scheduler") == 1, "b to wait");
        proxies.forEach(p -> p.latency(FaultProxy.Direction.SERVER_TO_CLIENT, Duration.ofMillis(250), Duration.ZERO));

        long steppedDownAt = System.nanoTime();
        a.stepDown();
        assertThat(b.awaitLeadership(WAIT))
                .as("b, which hears a's release late")
                .isPresent();
        log.info(
                "hand-over to a candidate that hears the release 250 ms late: {} ms",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - steppedDownAt));
        TestTime.await(Duration.ofSeconds(10), () -> lockA.waiting("scheduler") == 1, "a to campaign again");
        assertThat(a.leader()).map(LockHolder::name).hasValue("b");
    }

    @Test
    void workThatReturnsEndsTheTermAndTheCandidateCampaignsAgain() {
        Events events = new Events();
        AtomicInteger worked = new AtomicInteger();
        LeaderElection<Lease> election = LeaderElection.builder(lock(redis.uris(), "a"), "scheduler")
                .ttl(TTL)
                .listener(events)
                .work(term -> worked.incrementAndGet())
                .start();
        closing.add(election);

        TestTime.await(Duration.ofSeconds(20), () -> worked.get() >= 3, "three terms");
        assertThat(List.copyOf(events.told).subList(0, 4)).containsExactly("elected", "revoked", "elected", "revoked");
    }

    @Test
    void aLeaderCutOffFromItsNodesIsRevokedAndStoppedBeforeAnotherIsElected() throws Exception {
        Duration ttl = TestTime.scaled(Duration.ofSeconds(2));
        FaultProxies proxies = proxies();
        Redlock cutOff = lock(proxies.uris(), "a", TestTime.scaled(Duration.ofMillis(100)));
        Events eventsA = new Events();
        AtomicLong interruptedAt = new AtomicLong();
        LeaderElection<Lease> a = LeaderElection.builder(cutOff, "scheduler")
                .ttl(ttl)
                .listener(eventsA)
                .work(term -> {
                    try {
                        term.awaitEnd();
                        Thread.sleep(Long.MAX_VALUE); // a work that stops only when interrupted
                    } catch (InterruptedException e) {
                        interruptedAt.set(System.nanoTime());
                    }
                })
                .start();
        closing.add(a);
        a.awaitLeadership(WAIT).orElseThrow();
        Events eventsB = new Events();
        LeaderElection<Lease> b = candidate(lock(redis.uris(), "b"), eventsB, ttl);

        long partitionedAt = System.nanoTime();
        for (FaultProxy proxy : proxies) {
            proxy.partition();
        }
        assertThat(b.awaitLeadership(WAIT)).as("b once a's keys ran out").isPresent();
        handOver("partitioned", partitionedAt, eventsB, ttl);
        TestTime.await(Duration.ofSeconds(5), () -> interruptedAt.get() != 0, "a's work to be interrupted");
        assertThat(eventsA.told).startsWith("elected", "lost");
        assertThat(eventsA.revokedAt.get()).as("a revoked before b elected").isLessThan(eventsB.electedAt.get());
        assertThat(interruptedAt.get())
                .as("a's work interrupted before b elected")
                .isLessThan(eventsB.electedAt.get());
        assertThat(a.isLeader()).isFalse();
    }

    /**
     * A listener that takes its time in {@code elected} (it blocks until the test lets it go, as a
     * leader's start-up can) while its lease is lost meanwhile: it hears {@code revoked} only once
     * {@code elected} returned, both on the election's thread, and ends believing what {@code
     * isLeader()} says.
     */
    @Test
    void aListenerIsToldOfALossDuringASlowElectedOnlyAfterElectedReturned() throws Exception {
        Duration ttl = TestTime.scaled(Duration.ofSeconds(2));
        FaultProxies proxies = proxies();
        Redlock cutOff = lock(proxies.uris(), "a", TestTime.scaled(Duration.ofMillis(100)));
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        AtomicBoolean believesItLeads = new AtomicBoolean();
        List<String> told = new CopyOnWriteArrayList<>();
        LeaderElection<Lease> a = LeaderElection.builder(cutOff, "scheduler")
                .ttl(ttl)
                .listener(new LeaderElection.Listener<>() {
                    @Override
                    public void elected(LeaderElection.Term<? extends Lease> term) {
                        told.add("elected on " + Thread.currentThread().getName());
                        entered.countDown();
                        try {
                            letGo.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        believesItLeads.set(true);
                        told.add("elected returned");
                    }

                    @Override
                    public void revoked(LeaderElection.Term<? extends Lease> term, Optional<LeaseLostException> cause) {
                        believesItLeads.set(false);
                        told.add((cause.isPresent() ? "lost" : "revoked") + " on "
                                + Thread.currentThread().getName());
                    }
                })
                .start();
        closing.add(a);
        closing.add(letGo::countDown); // before the close, should the test fail early
        assertThat(entered.await(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                .as("a elected")
                .isTrue();

        for (FaultProxy proxy : proxies) {
            proxy.partition();
        }
        LeaderElection<Lease> b = candidate(lock(redis.uris(), "b"), new Events(), ttl);
        assertThat(b.awaitLeadership(WAIT)).as("b once a's keys ran out").isPresent();
        letGo.countDown();
        TestTime.await(Duration.ofSeconds(10), () -> told.size() >= 3, "a to be told elected and its loss");

        log.info("a slow elected and a loss meanwhile, told: {}", told);
        assertThat(a.isLeader()).isFalse();
        assertThat(believesItLeads.get())
                .as("what a's listener believes, told %s, while a does not lead", told)
                .isFalse();
        assertThat(told.subList(0, 3))
                .as("the listener's calls")
                .satisfiesExactly(
                        first -> assertThat(first).startsWith("elected on"),
                        second -> assertThat(second).isEqualTo("elected returned"),
                        third -> assertThat(third).startsWith("lost on"));
        String thread = told.get(0).substring("elected on ".length());
        assertThat(told.get(2)).as("the thread of revoked").endsWith(" on " + thread);
        assertThat(thread).startsWith("quorumlock-election-scheduler-");
    }

    /**
     * A listener whose {@code revoked} takes 2 s (a graceful stop) holds up none of the lock's other
     * leases: it runs on the election's thread, not on the Redlock's watchdog, which goes on
     * extending an unrelated lease of a short TTL meanwhile.
     */
    @Test
    void aSlowRevokedDoesNotHoldUpTheRenewalsOfAnotherLeaseOfTheSameLock() throws Exception {
        Redlock lock = lock(redis.uris(), "a");
        Duration shortTtl = TestTime.scaled(Duration.ofSeconds(1));
        Duration slowStop = TestTime.scaled(Duration.ofSeconds(2));
        Lease other = lock.acquire("other", shortTtl, WAIT);
        closing.add(other::release);
        CompletableFuture<LeaseLostException> otherLost = lock.keepAlive(other, shortTtl);

        CountDownLatch stopping = new CountDownLatch(1);
        AtomicReference<String> revokedOn = new AtomicReference<>();
        AtomicLong revokedReturnedAt = new AtomicLong();
        LeaderElection<Lease> election = LeaderElection.builder(lock, "scheduler")
                .ttl(TestTime.scaled(Duration.ofSeconds(2)))
                .listener(new LeaderElection.Listener<>() {
                    @Override
                    public void revoked(LeaderElection.Term<? extends Lease> term, Optional<LeaseLostException> cause) {
                        if (revokedOn.compareAndSet(null, Thread.currentThread().getName())) {
                            try {
                                stopping.await(slowStop.toMillis(), TimeUnit.MILLISECONDS); // a graceful stop
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                            revokedReturnedAt.set(System.nanoTime());
                        }
                    }
                })
                .start();
        closing.add(election);
        closing.add(stopping::countDown);
        election.awaitLeadership(WAIT).orElseThrow();

        for (RedisServer node : redis.servers()) { // the leader's keys vanish: its next extension fails
            try (Jedis jedis = node.connect(Duration.ofSeconds(2))) {
                jedis.del("scheduler");
            }
        }
        TestTime.await(Duration.ofSeconds(15), () -> revokedReturnedAt.get() != 0, "the slow revoked to return");

        log.info("revoked ran on {}; the other lease: valid {}, lost {}", revokedOn.get(), other.isValid(), otherLost);
        assertThat(otherLost)
                .as("the other lease's loss, after a revoked of %s ms on %s", slowStop.toMillis(), revokedOn.get())
                .isNotDone();
        assertThat(other.isValid()).as("the other lease").isTrue();
        assertThat(revokedOn.get()).startsWith("quorumlock-election-scheduler-");
    }

    @Test
    void aLeaderWhoseProcessDiesLeavesTheRoleWhenItsKeysRunOut() {
        Duration ttl = TestTime.scaled(Duration.ofSeconds(2));
        Redlock dying = lock(redis.uris(), "a");
        LeaderElection<Lease> a =
                LeaderElection.builder(dying, "scheduler").ttl(ttl).start();
        closing.add(a);
        a.awaitLeadership(WAIT).orElseThrow();
        Events eventsB = new Events();
        LeaderElection<Lease> b = candidate(lock(redis.uris(), "b"), eventsB, ttl);

        long diedAt = System.nanoTime();
        dying.close(); // its watchdog stops and nothing releases the keys, as when the process dies
        assertThat(b.awaitLeadership(WAIT)).as("b once a's keys ran out").isPresent();
        long took = handOver("killed", diedAt, eventsB, ttl);
        assertThat(Duration.ofMillis(took)).as("no earlier than the keys' end").isGreaterThan(ttl.dividedBy(2));
        TestTime.await(Duration.ofSeconds(5), () -> a.toString().contains("closed"), "a to leave the election");
    }

    /** Logs and bounds a hand-over from {@code fromNanos} to b's election: the TTL and a margin at most. */
    private static long handOver(String how, long fromNanos, Events next, Duration ttl) {
        long took = TimeUnit.NANOSECONDS.toMillis(next.electedAt.get() - fromNanos);
        log.info("Redlock leader hand-over, leader {}: {} ms (TTL {} ms)", how, took, ttl.toMillis());
        assertThat(Duration.ofMillis(took)).isLessThan(ttl.plus(TestTime.scaled(Duration.ofSeconds(3))));
        return took;
    }

    @Test
    void oneRedisNodeElectsToo() {
        List<String> one = List.of(redis.uris().get(0));
        LeaderElection<Lease> a = candidate(lock(one, "a"), new Events());
        a.awaitLeadership(WAIT).orElseThrow();
        LeaderElection<Lease> b = candidate(lock(one, "b"), new Events());
        assertThat(b.isLeader()).isFalse();
        a.close();
        assertThat(b.awaitLeadership(WAIT)).isPresent();
    }

    @Test
    void badSettingsAndAClosedElectionAreRefusedAsTheLocksRefuseThem() {
        Redlock lock = lock(redis.uris(), "a");
        assertThatThrownBy(() -> LeaderElection.builder(lock, ""))
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("resource must not be empty");
        assertThatThrownBy(() -> LeaderElection.builder(null, "scheduler"))
                .isInstanceOf(IllegalSettingException.class)
                .hasMessageContaining("lock");
        assertThatThrownBy(() -> LeaderElection.builder(lock, "scheduler").ttl(Duration.ofMillis(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl");

        LeaderElection<Lease> election = candidate(lock, new Events());
        election.close();
        election.close(); // idempotent
        assertThatThrownBy(() -> election.awaitLeadership(WAIT))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'scheduler' is closed");
        assertThat(election.isLeader()).isFalse();
    }
}
