package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.FakeTicker;
import io.quorumlock.internal.Ticker;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The algorithm over in-memory nodes: decisions, validity arithmetic and clean-up, without Redis. */
class RedlockAlgorithmTest {

    private static final FakeNode.Verb EXTEND = FakeNode.Verb.EXTEND_IF_EQUALS;
    private static final FakeNode.Verb DELETE = FakeNode.Verb.DELETE_IF_EQUALS;

    private static final long MS = 1_000_000L;
    private static final Duration TTL = Duration.ofSeconds(1);
    /** For the watchdog, which runs in real time: a TTL and a node timeout on the system clock. */
    private static final Duration REAL_TTL = TestTime.scaled(Duration.ofMillis(600));

    private static final Duration REAL_NODE_TIMEOUT = TestTime.scaled(Duration.ofMillis(100));

    private final FakeTicker ticker = new FakeTicker();
    private final List<FakeNode> nodes = new ArrayList<>();
    /** The clock the nodes expire keys by: the clock of the test's first client, and of all its clients. */
    private Ticker nodeClock;

    private final List<Redlock> clients = new ArrayList<>();
    private final List<FakeTransport> transports = new ArrayList<>();

    @AfterEach
    void closeAll() {
        nodes.forEach(FakeNode::thaw);
        clients.forEach(Redlock::close);
    }

    private Redlock cluster(int n, Duration nodeTimeout, Ticker clock) {
        return cluster(n, clock, builder -> builder.nodeTimeout(nodeTimeout));
    }

    /** A client of the first {@code n} nodes, made if need be, with its own {@code settings}. */
    private Redlock cluster(int n, Ticker clock, Consumer<RedlockBuilder> settings) {
        makeNodes(n, clock);
        RedlockBuilder builder = Redlock.builder()
                .nodeTimeout(Duration.ofMillis(50))
                .retry(RetryPolicy.jitteredBackoff(Duration.ofMillis(1), Duration.ofMillis(5)));
        settings.accept(builder);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            builder.node("redis://node" + i + ":6379");
            names.add("redis://node" + i + ":6379");
        }
        FakeTransport transport = new FakeTransport(List.copyOf(nodes.subList(0, n)), names, clock);
        transports.add(transport);
        Redlock redlock = builder.build(transport, clock);
        clients.add(redlock);
        return redlock;
    }

    private Redlock cluster(int n) {
        return cluster(n, Duration.ofMillis(50), ticker);
    }

    /** A client on the system clock, over nodes whose keys expire by it too. */
    private Redlock realTimeCluster(int n) {
        return cluster(n, REAL_NODE_TIMEOUT, Ticker.SYSTEM);
    }

    private void makeNodes(int n) {
        makeNodes(n, ticker);
    }

    private void makeNodes(int n, Ticker clock) {
        if (nodeClock == null) {
            nodeClock = clock;
        }
        // Keys that expire by a clock the client does not read would make every expiry check vacuous.
        assertThat(clock).as("the clock of the nodes and of every client").isSameAs(nodeClock);
        while (nodes.size() < n) {
            nodes.add(new FakeNode(clock));
        }
    }

    private long holders(String key) {
        return nodes.stream().filter(n -> n.tokenOf(key).isPresent()).count();
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline =
                System.nanoTime() + TestTime.scaled(Duration.ofSeconds(5)).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline)
                    .as("timed out waiting until " + what)
                    .isNegative();
            Thread.sleep(2);
        }
    }

    @Test
    void majorityGrantsAndReleaseFreesTheLockForTheNextClient() {
        Redlock redlock = cluster(5);
        nodes.get(0).down = true;
        nodes.get(1).down = true;
        Lease lease = redlock.tryAcquire("r", TTL).orElseThrow();
        lease.release();
        assertThat(holders("r"))
                .as("release waits for the quorum of reachable nodes")
                .isZero();
        assertThat(cluster(5).tryAcquire("r", TTL)).isPresent();
    }

    @Test
    void minorityFailsAndLeavesNoKeyBehind() {
        Redlock redlock = cluster(3);
        nodes.get(0).down = true;
        nodes.get(1).down = true;
        assertThatThrownBy(() -> redlock.tryAcquire("r", TTL))
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("2 needed");
        assertThat(holders("r")).isZero();
        assertThat(nodes.get(2).calls.get()).as("SET then compare-and-delete").isEqualTo(2);
    }

    @Test
    void decidesOnQuorumWithoutWaitingForAFrozenNode() throws Exception {
        Redlock redlock = cluster(5, Duration.ofSeconds(5), ticker);
        nodes.get(4).freeze();
        Lease lease = redlock.tryAcquire("r", Duration.ofSeconds(30)).orElseThrow();
        // Still frozen: the grant cannot have waited for node 4, whose call has not returned.
        assertThat(nodes.get(4).calls.get()).isLessThanOrEqualTo(1);
        assertThat(nodes.get(4).tokenOf("r")).isEmpty();
        lease.release();
        assertThat(nodes.get(4).tokenOf("r")).isEmpty();
        assertThat(holders("r"))
                .as("a quorum of nodes is free once release returns")
                .isLessThanOrEqualTo(1);
        nodes.get(4).thaw();
        // Node 4 now applies the late SET; the release chained behind it deletes it again.
        await(() -> nodes.get(4).calls.get() == 2 && holders("r") == 0, "node 4's late SET is applied and released");
    }

    @Test
    void lateYesAfterAFailedAttemptIsReleased() throws Exception {
        Redlock other = cluster(3, Duration.ofSeconds(5), ticker);
        Lease held = other.tryAcquire("r", Duration.ofSeconds(30)).orElseThrow();
        await(() -> holders("r") == 3, "the third grant has landed too");
        nodes.get(2).keys.clear(); // node 2 lost the key (say it restarted); node 0 and 1 still hold it
        nodes.get(2).freeze();
        Redlock redlock = cluster(3, Duration.ofSeconds(5), ticker);
        // Two "held by another owner" make the quorum unreachable: the attempt fails at once.
        assertThat(redlock.tryAcquire("r", Duration.ofSeconds(30))).isEmpty();
        nodes.get(2).thaw();
        await(
                () -> nodes.get(2).calls.get() >= 2 && nodes.get(2).tokenOf("r").isEmpty(),
                "the late SET on node 2 is applied and then released");
        assertThat(nodes.get(0).tokenOf("r")).isPresent();
        held.release();
    }

    @Test
    void validityIsTtlMinusElapsedMinusDrift() {
        Redlock redlock = cluster(1);
        nodes.get(0).latencyNanos = 300 * MS;
        Lease lease = redlock.tryAcquire("r", TTL).orElseThrow();
        assertThat(lease.validity()).isEqualTo(Duration.ofMillis(1000 - 300 - 12));
        ticker.advance(600 * MS);
        assertThat(lease.remaining()).isEqualTo(Duration.ofMillis(88));
        assertThat(lease.isValid()).isTrue();
        ticker.advance(100 * MS);
        assertThat(lease.remaining()).isZero();
        assertThat(lease.isValid()).isFalse();
    }

    @Test
    void aGrantThatTookAlmostTheWholeTtlIsNotHeldAndIsUndone() {
        Redlock redlock = cluster(1);
        nodes.get(0).latencyNanos = 990 * MS;
        assertThatThrownBy(() -> redlock.tryAcquire("r", TTL))
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("granted too late");
        assertThat(holders("r")).isZero();
    }

    @Test
    void extendComputesValidityAgainFromItsOwnStart() {
        Redlock redlock = cluster(1);
        Lease lease = redlock.tryAcquire("r", TTL).orElseThrow();
        ticker.advance(800 * MS);
        nodes.get(0).latencyNanos = 100 * MS;
        assertThat(lease.extend(Duration.ofSeconds(2))).isTrue();
        assertThat(lease.validity()).isEqualTo(Duration.ofMillis(2000 - 100 - 22));
        ticker.advance(1500 * MS);
        assertThat(lease.isValid()).as("extended past the first TTL").isTrue();
        ticker.advance(378 * MS);
        assertThat(lease.isValid()).isFalse();
    }

    @Test
    void extensionFailsOnceAnotherOwnerHasTheKey() {
        Redlock redlock = cluster(3);
        Lease lease = redlock.tryAcquire("r", TTL).orElseThrow();
        ticker.advance(1100 * MS); // expired everywhere
        Lease next = cluster(3).tryAcquire("r", TTL).orElseThrow();
        assertThat(lease.extend(TTL)).isFalse();
        assertThat(next.isValid()).isTrue();
        lease.release(); // must not delete the new owner's key
        assertThat(holders("r")).isGreaterThanOrEqualTo(2);
        assertThat(next.isValid()).isTrue();
    }

    @Test
    void releaseIsIdempotentAndAReleasedLeaseCannotBeExtended() throws InterruptedException {
        Redlock redlock = cluster(3);
        Lease lease = redlock.tryAcquire("r", TTL).orElseThrow();
        lease.release();
        // release() returns once a majority is free: node 0's delete may still be on its way.
        await(() -> nodes.get(0).tokenOf("r").isEmpty(), "node 0's delete");
        int calls = nodes.get(0).calls.get();
        lease.release();
        lease.close();
        assertThat(nodes.get(0).calls.get()).isEqualTo(calls);
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(() -> lease.extend(TTL))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("released");
    }

    @Test
    void acquireGivesUpWithEvidenceFromEveryNode() throws Exception {
        Redlock other = cluster(3, Duration.ofMillis(50), Ticker.SYSTEM);
        Lease held = other.tryAcquire("r", Duration.ofSeconds(30)).orElseThrow();
        await(() -> holders("r") == 3, "the third grant has landed too");
        nodes.get(2).down = true;
        Redlock redlock = cluster(3, Duration.ofMillis(50), Ticker.SYSTEM);
        LockUnavailableException e = org.junit.jupiter.api.Assertions.assertThrows(
                LockUnavailableException.class, () -> redlock.acquire("r", TTL, Duration.ofMillis(300)));
        assertThat(e.votes()).isZero();
        assertThat(e.quorum()).isEqualTo(2);
        assertThat(e.attempts()).isGreaterThan(1);
        assertThat(e.lastAttempt())
                .extracting(ServerAnswer::kind)
                .startsWith(ServerAnswer.Kind.HELD_BY_OTHER, ServerAnswer.Kind.HELD_BY_OTHER);
        // Two refusals decide the attempt; node 2's answer is evidence only if it came by then.
        assertThat(e.lastAttempt().get(2).kind()).isIn(ServerAnswer.Kind.UNREACHABLE, ServerAnswer.Kind.PENDING);
        assertThat(e.getMessage())
                .contains(
                        "could not acquire 'r'",
                        "0 of 3 votes, 2 needed",
                        "redis://node0:6379: held by another owner",
                        "redis://node2:6379: ");
        held.release();
    }

    @Test
    void acquireWithZeroWaitMakesOneAttempt() {
        Redlock other = cluster(1);
        Lease held = other.tryAcquire("r", TTL).orElseThrow();
        LockUnavailableException e = org.junit.jupiter.api.Assertions.assertThrows(
                LockUnavailableException.class, () -> cluster(1).acquire("r", TTL, Duration.ZERO));
        assertThat(e.attempts()).isEqualTo(1);
        assertThat(e.getMessage())
                .contains("(1 attempt): redis://node0:6379: held by another owner (holder "
                        + ProcessHandle.current().pid() + "@");
        held.release();
    }

    @Test
    void withLockReportsLeaseLostAndInterruptsTheWork() {
        Redlock redlock = realTimeCluster(3);
        LeaseLostException e = org.junit.jupiter.api.Assertions.assertThrows(
                LeaseLostException.class,
                () -> redlock.withLock("r", REAL_TTL, Duration.ZERO, () -> {
                    nodes.get(0).down = true;
                    nodes.get(1).down = true; // the first extension cannot reach a quorum
                    Thread.sleep(TimeUnit.SECONDS.toMillis(10));
                    return "finished";
                }));
        assertThat(e.getMessage()).contains("lease on 'r' lost", "of 3 votes in time", "unreachable");
        assertThat(e.getSuppressed()).singleElement().isInstanceOf(InterruptedException.class);
        assertThat(Thread.currentThread().isInterrupted())
                .as("the watchdog's interrupt is cleared")
                .isFalse();
    }

    @Test
    void withLockKeepsTheLeaseAlivePastItsTtl() throws Exception {
        Redlock redlock = realTimeCluster(3);
        String result = redlock.withLock("r", REAL_TTL, Duration.ZERO, () -> {
            long end = System.nanoTime() + 3 * REAL_TTL.toNanos(); // three TTLs of work
            while (System.nanoTime() < end) {
                // The keys expire in real time: a quorum holds them only if extensions landed.
                assertThat(holders("r")).isGreaterThanOrEqualTo(2);
                Thread.sleep(10);
            }
            return "done";
        });
        assertThat(result).isEqualTo("done");
        assertThat(nodes.get(0).handled).as("extended at least twice").contains(EXTEND, EXTEND);
        assertThat(holders("r")).as("released on a quorum").isLessThanOrEqualTo(1);
    }

    @Test
    void withLockPassesTheWorksOwnExceptionThroughWhenTheLeaseHeld() {
        Redlock redlock = cluster(1);
        assertThatThrownBy(() -> redlock.withLock("r", TTL, Duration.ZERO, () -> {
                    throw new java.io.IOException("disk full");
                }))
                .isInstanceOf(java.io.IOException.class)
                .hasMessage("disk full");
        assertThat(holders("r")).isZero();
    }

    @Test
    void keepAliveExtendsTheLeaseUntilItIsReleasedThenStops() throws Exception {
        Redlock redlock = realTimeCluster(3);
        Lease lease = redlock.acquire("r", REAL_TTL, Duration.ZERO);
        CompletableFuture<LeaseLostException> lost = redlock.keepAlive(lease, REAL_TTL);
        long end = System.nanoTime() + 3 * REAL_TTL.toNanos();
        while (System.nanoTime() < end) {
            assertThat(lease.isValid()).isTrue();
            // The keys expire in real time: a quorum holds them only if extensions landed.
            assertThat(holders("r")).isGreaterThanOrEqualTo(2);
            Thread.sleep(10);
        }
        assertThat(nodes.get(0).handled).as("extended at least twice").contains(EXTEND, EXTEND);
        lease.release();
        // Release returns once a majority is free; a straggler's delete may still reach a node.
        await(() -> holders("r") == 0, "every node's delete");
        // An extension under way when release() was called ends before the deletes are sent, and
        // none is scheduled after: a node sees no extension after its delete, however the threads
        // are timed. A TTL of quiet would show an extension left scheduled.
        Thread.sleep(REAL_TTL.toMillis());
        assertThat(nodes)
                .allSatisfy(node -> assertThat(afterTheDelete(node))
                        .as("what the node handled after the delete")
                        .isEmpty());
        assertThat(lost).isNotDone();
        assertThat(holders("r")).isZero();
    }

    @Test
    void anExtensionUnderWayWhenTheLeaseIsReleasedReachesEveryNodeBeforeTheDelete() throws Exception {
        Redlock redlock = realTimeCluster(3);
        FakeTransport transport = transports.get(0);
        CountDownLatch underWay = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        // The keep-alive's first round stops as it takes its lane: past every check of the lease.
        transport.beforeBorrow = () -> {
            if (Thread.currentThread().getName().startsWith("quorumlock-redlock-worker") && underWay.getCount() > 0) {
                underWay.countDown();
                try {
                    go.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        Lease lease = redlock.acquire("r", REAL_TTL, Duration.ZERO);
        await(() -> holders("r") == 3, "the third grant has landed too");
        redlock.keepAlive(lease, REAL_TTL);
        assertThat(underWay.await(TestTime.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        Thread releaser = new Thread(lease::release, "releaser");
        releaser.start();
        // Either its deletes are out and it waits for their replies, or it waits for the extension.
        await(() -> releaser.getState() != Thread.State.RUNNABLE, "the release to wait or end");
        go.countDown();
        releaser.join(TestTime.scaled(Duration.ofSeconds(5)).toMillis());
        assertThat(releaser.isAlive()).isFalse();
        await(
                () -> nodes.stream().allMatch(n -> n.handled.contains(EXTEND) && n.handled.contains(DELETE)),
                "the extension and the delete on every node");
        assertThat(nodes)
                .allSatisfy(node -> assertThat(afterTheDelete(node))
                        .as("what the node handled after the delete")
                        .isEmpty());
        // a node lists a command as it starts on it: its delete may still be under way
        await(() -> holders("r") == 0, "the key gone from every node");
    }

    private static List<FakeNode.Verb> afterTheDelete(FakeNode node) {
        List<FakeNode.Verb> handled = List.copyOf(node.handled);
        int delete = handled.lastIndexOf(DELETE);
        assertThat(delete).as("the node handled a delete").isNotNegative();
        return handled.subList(delete + 1, handled.size());
    }

    @Test
    void keepAliveReportsTheLossWhenAnExtensionFails() throws Exception {
        Redlock redlock = realTimeCluster(3);
        Lease lease = redlock.acquire("r", REAL_TTL, Duration.ZERO);
        CompletableFuture<LeaseLostException> lost = redlock.keepAlive(lease, REAL_TTL);
        nodes.get(0).down = true;
        nodes.get(1).down = true;
        LeaseLostException loss = lost.get(5, TimeUnit.SECONDS);
        assertThat(loss.getMessage()).contains("lease on 'r' lost", "of 3 votes in time", "unreachable");
        assertThat(lease.isValid()).isFalse();
        lost.complete(null); // the caller's copy: the lease's own state is not touched
        assertThat(lease.isValid()).isFalse();
        lease.release();
    }

    @Test
    void keepAliveRefusesAForeignReleasedOrAlreadyKeptLease() {
        Redlock redlock = cluster(1);
        Lease other = cluster(1).tryAcquire("other", TTL).orElseThrow();
        assertThatThrownBy(() -> redlock.keepAlive(other, TTL))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("the lease was not granted by this Redlock");
        Lease lease = redlock.tryAcquire("r", TTL).orElseThrow();
        assertThatThrownBy(() -> redlock.keepAlive(lease, Duration.ofMillis(100)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("ttl must be longer than 3 x nodeTimeout");
        redlock.keepAlive(lease, TTL);
        assertThatThrownBy(() -> redlock.keepAlive(lease, TTL))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("the lease on 'r' is already kept alive");
        lease.release();
        assertThatThrownBy(() -> redlock.keepAlive(lease, TTL))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("the lease on 'r' was released; acquire a new one");
        other.release();
    }

    @Test
    void anErrorInAnExtensionEndsTheLeaseAsLostAndInterruptsTheWork() {
        // A TTL long enough that the failed extension (when two thirds of it are left) and the end of the
        // validity stay apart on a loaded machine.
        Duration ttl = REAL_TTL.multipliedBy(5);
        Redlock redlock = realTimeCluster(3);
        transports.get(0).beforeBorrow = () -> {
            if (Thread.currentThread().getName().startsWith("quorumlock-redlock-worker")) {
                throw new StackOverflowError("thrown by the test in an extension");
            }
        };
        long start = System.nanoTime();
        LeaseLostException e = org.junit.jupiter.api.Assertions.assertThrows(
                LeaseLostException.class,
                () -> redlock.withLock("r", ttl, Duration.ZERO, () -> {
                    Thread.sleep(10 * ttl.toMillis()); // work that would outlive its lease
                    return "finished";
                }));
        assertThat(e.getMessage()).contains("lease on 'r' lost", "StackOverflowError", "thrown by the test");
        assertThat(e.getSuppressed()).singleElement().isInstanceOf(InterruptedException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("interrupted at the failed extension, before the validity ran out")
                .isLessThan(ttl);
    }

    @Test
    void closeEndsEveryLeaseItKeepsAliveAsLostAndInterruptsTheWork() throws Exception {
        Redlock redlock = realTimeCluster(3);
        // Long enough that no renewal can come too late on a loaded machine: the close ends them.
        Duration ttl = REAL_TTL.multipliedBy(5);
        Lease kept = redlock.acquire("kept", ttl, Duration.ZERO);
        CompletableFuture<LeaseLostException> keptLost = redlock.keepAlive(kept, ttl);
        CountDownLatch working = new CountDownLatch(1);
        ExecutorService worker = Executors.newSingleThreadExecutor();
        try {
            Future<String> work = worker.submit(() -> redlock.withLock("r", ttl, Duration.ZERO, () -> {
                working.countDown();
                Thread.sleep(10 * ttl.toMillis()); // work that would outlive its lease
                return "finished";
            }));
            assertThat(working.await(TestTime.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            redlock.close();
            java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class,
                    () -> work.get(TestTime.scaled(Duration.ofSeconds(2)).toMillis(), TimeUnit.MILLISECONDS));
            assertThat(e.getCause())
                    .isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("lease on 'r' lost")
                    .hasMessageContaining("closed");
            assertThat(e.getCause().getSuppressed()).singleElement().isInstanceOf(InterruptedException.class);
            assertThat(keptLost.get(1, TimeUnit.SECONDS).getMessage()).contains("lease on 'kept' lost", "closed");
            assertThat(kept.isValid()).isFalse();
            kept.release(); // over already: nothing to do on the closed connections
        } finally {
            worker.shutdownNow();
        }
    }

    @Test
    void extendOnALeasePastItsValidityReturnsFalseAndChangesNothing() throws Exception {
        RedlockLease lease = grantedByAll();
        ticker.advance(995 * MS); // past its validity; the keys live 5 ms longer on the nodes
        assertExtendReturnsFalseAndChangesNothing(lease);
    }

    @Test
    void extendOnALostLeaseReturnsFalseAndChangesNothing() throws Exception {
        RedlockLease lease = grantedByAll();
        lease.loseOnClose();
        assertExtendReturnsFalseAndChangesNothing(lease);
    }

    /** A lease of 988 ms validity on three nodes, every grant landed. */
    private RedlockLease grantedByAll() throws InterruptedException {
        RedlockLease lease = (RedlockLease) cluster(3).tryAcquire("r", TTL).orElseThrow();
        await(() -> holders("r") == 3, "the third grant has landed too");
        assertThat(lease.validity()).isEqualTo(Duration.ofMillis(1000 - 12));
        return lease;
    }

    private void assertExtendReturnsFalseAndChangesNothing(Lease lease) {
        int calls = calls();
        assertThat(lease.extend(TTL)).isFalse();
        assertThat(lease.isValid()).isFalse();
        assertThat(lease.validity()).isEqualTo(Duration.ofMillis(1000 - 12));
        assertThat(calls()).as("nothing sent to the nodes").isEqualTo(calls);
        lease.release();
    }

    private int calls() {
        return nodes.stream().mapToInt(n -> n.calls.get()).sum();
    }

    // ---- the restart guard -------------------------------------------------------------------------

    @Test
    void aRestartedNodesYesIsNotCountedButIsReleased() throws Exception {
        Redlock redlock = cluster(3);
        nodes.get(1).restart();
        nodes.get(2).restart();
        LockUnavailableException e = org.junit.jupiter.api.Assertions.assertThrows(
                LockUnavailableException.class, () -> redlock.acquire("r", TTL, Duration.ZERO));
        // Both restarted nodes said yes; neither counts, so node 0's yes alone is no quorum.
        assertThat(e.votes()).isLessThanOrEqualTo(1);
        // Node 0 said yes, or (a loaded machine) had not answered within the node timeout: no quorum either way
        assertThat(e.lastAttempt().get(0).kind())
                .isIn(ServerAnswer.Kind.GRANTED, ServerAnswer.Kind.PENDING, ServerAnswer.Kind.TIMED_OUT);
        assertThat(e.lastAttempt().subList(1, 3))
                .allSatisfy(o -> assertThat(o.kind()).isEqualTo(ServerAnswer.Kind.EXCLUDED))
                .allSatisfy(o -> assertThat(o.detail()).isEqualTo("restart guard: up 0 s, votes in 1 s"));
        assertThat(e.getMessage())
                .contains("redis://node1:6379: excluded (restart guard: up 0 s, votes in 1 s)")
                .endsWith("wait, or where every node fsyncs every write (appendfsync always), or in a test on nodes"
                        + " just started, build the lock with restartGuard(false)");
        assertThat(e.restartGuard())
                .as("no node names a holder: the guard refused it, for the rest of the TTL")
                .contains(TTL);
        assertThat(e.getMessage())
                .contains("no node names a holder, but the restart guard keeps the votes of nodes that (re)started"
                        + " within the longest TTL asked for out for 1 s more");
        await(() -> holders("r") == 0, "every yes to be released, the excluded ones too");

        ticker.advance(TTL.toNanos());
        assertThat(redlock.tryAcquire("r", TTL))
                .as("up for a TTL: they vote again")
                .isPresent();
    }

    @Test
    void aHolderAmongTheExcludedNodesIsNoRefusalByTheRestartGuard() {
        // Node 0's answer names the holder: it is given the longest node timeout the TTL allows, so
        // that a busy machine's late worker is not taken for a silent node.
        Redlock redlock = cluster(3, Duration.ofMillis(300), ticker);
        assertThat(cluster(3, ticker, builder -> builder.restartGuard(false)).tryAcquire("r", TTL))
                .isPresent();
        // The grant was decided by the first two yes: node 0's SET may still be on its way.
        TestTime.await(Duration.ofSeconds(5), () -> nodes.get(0).tokenOf("r").isPresent(), "node 0 to hold the key");
        nodes.get(1).restart(); // the holder's key lost on two nodes: node 0 still names it
        nodes.get(2).restart();
        // Node 0 answers after the others, as a busy machine's late worker does: the clean-up then
        // settles on the two deletes before node 0's answer is in.
        nodes.get(0).freeze();
        Thread thaw = new Thread(() -> {
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            nodes.get(0).thaw();
        });
        thaw.start();
        LockUnavailableException e = org.junit.jupiter.api.Assertions.assertThrows(
                LockUnavailableException.class, () -> redlock.acquire("r", TTL, Duration.ZERO));
        assertThat(e.lastAttempt().get(0).kind()).isIn(ServerAnswer.Kind.HELD_BY_OTHER, ServerAnswer.Kind.PENDING);
        assertThat(e.lastAttempt()).anySatisfy(o -> assertThat(o.kind()).isEqualTo(ServerAnswer.Kind.HELD_BY_OTHER));
        assertThat(e.restartGuard())
                .as("a holder is named: busy, whatever the guard")
                .isEmpty();
        assertThat(e.busy()).isTrue();
    }

    @Test
    void anAcquireRefusedByTheRestartGuardForLongerThanItsWaitMakesOneAttempt() {
        Redlock redlock = cluster(3);
        nodes.get(1).restart();
        nodes.get(2).restart();
        long start = System.nanoTime();
        LockUnavailableException e = org.junit.jupiter.api.Assertions.assertThrows(
                LockUnavailableException.class, () -> redlock.acquire("r", TTL, TTL.dividedBy(2)));
        // The fake clock stands still: an acquire that retried until the guard lets the votes in
        // would never end; one that waits for the guard sleeps out its wait, once.
        assertThat(e.attempts()).isEqualTo(1);
        assertThat(e.restartGuard()).contains(TTL);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isGreaterThanOrEqualTo(TTL.dividedBy(2))
                .isLessThan(TestTime.scaled(Duration.ofSeconds(3)));
    }

    @Test
    void anAcquireRefusedByTheRestartGuardWaitsUntilItLetsTheVotesIn() {
        Redlock redlock = realTimeCluster(3);
        nodes.forEach(FakeNode::restart);
        Duration wait = REAL_TTL.multipliedBy(5);
        long start = System.nanoTime();
        Lease lease = redlock.acquire("r", REAL_TTL, wait);
        long took = System.nanoTime() - start;
        lease.release();
        assertThat(Duration.ofNanos(took))
                .as("the nodes vote once up for the TTL")
                .isGreaterThanOrEqualTo(REAL_TTL.minusMillis(50));
        // One attempt refused, one after the guard's wait (and one more if the nodes were a hair short
        // of the TTL), each a SET and its clean-up: no attempt every few milliseconds.
        assertThat(nodes.get(0).calls.get()).as("requests to node 0").isLessThanOrEqualTo(8);
    }

    @Test
    void oneExcludedNodeLeavesAQuorumOfTheOthers() throws Exception {
        Redlock redlock = cluster(3);
        nodes.get(2).restart();
        RedlockAttempts.Attempt attempt = redlock.attempts().attempt("r", TTL, 0);
        assertThat(attempt.lease()).isPresent();
        assertThat(attempt.votes()).isEqualTo(2);
        attempt.lease().get().release();
        await(() -> holders("r") == 0, "node 2's uncounted yes to be released with the lease");
    }

    @Test
    void theLongestTtlAskedForSoFarDecides() throws Exception {
        makeNodes(3);
        nodes.forEach(n -> n.startedNanos = ticker.nanos() - 2_000 * MS); // up 2 s
        Redlock redlock = cluster(3);
        LockUnavailableException e = org.junit.jupiter.api.Assertions.assertThrows(
                LockUnavailableException.class, () -> redlock.acquire("r", Duration.ofSeconds(30), Duration.ZERO));
        assertThat(e.lastAttempt())
                .anySatisfy(o -> assertThat(o.detail()).isEqualTo("restart guard: up 2 s, votes in 28 s"));
        assertThat(redlock.tryAcquire("r", TTL))
                .as("this client has asked for 30 s: the nodes vote only once up that long")
                .isEmpty();
        await(() -> holders("r") == 0, "the refused attempts to be released");
        assertThat(cluster(3).tryAcquire("r", TTL))
                .as("a client that never asked for more than 1 s")
                .isPresent();
        await(() -> holders("r") == 3, "its third grant to land too");
        ticker.advance(TTL.toNanos() + 1); // that lease expires; the nodes are up for 3 s
        assertThat(redlock.tryAcquire("r", TTL)).isEmpty();
        await(() -> holders("r") == 0, "the refused attempt to be released");
        ticker.advance(27_000 * MS);
        assertThat(redlock.tryAcquire("r", TTL)).isPresent();
    }

    @Test
    void anExtensionDoesNotCountTheYesOfANodeUpForLessThanTheTtl() {
        Redlock redlock = cluster(3);
        RedlockLease lease = (RedlockLease) redlock.tryAcquire("r", TTL).orElseThrow();
        nodes.get(2).startedNanos = ticker.nanos(); // restarted, and kept its keys (appendfsync always)
        Rounds.Outcome round = redlock.rounds().extend(lease, TTL);
        assertThat(round.held()).isTrue();
        assertThat(round.votes()).isEqualTo(2);
        assertThat(round.answers().get(2).kind()).isIn(ServerAnswer.Kind.EXCLUDED, ServerAnswer.Kind.PENDING);
        nodes.get(1).startedNanos = ticker.nanos();
        Rounds.Outcome second = redlock.rounds().extend(lease, TTL);
        assertThat(second.held()).isFalse();
        assertThat(second.answers())
                .extracting(ServerAnswer::kind)
                .endsWith(ServerAnswer.Kind.EXCLUDED, ServerAnswer.Kind.EXCLUDED);
    }

    @Test
    void aSingleNodeLockHasNoRestartGuardUnlessAskedFor() {
        makeNodes(1);
        nodes.get(0).restart();
        assertThat(cluster(1).tryAcquire("r", TTL)).isPresent();
        Redlock guarded = cluster(1, ticker, builder -> builder.restartGuard(true));
        assertThat(guarded.tryAcquire("s", TTL)).isEmpty();
        assertThat(nodes.get(0).tokenOf("s")).isEmpty();
    }

    @Test
    void severalNodesCanOptOut() {
        makeNodes(3);
        nodes.forEach(FakeNode::restart);
        assertThat(cluster(3, ticker, builder -> builder.restartGuard(false)).tryAcquire("r", TTL))
                .isPresent();
    }

    @Test
    void aRoundWaitsForNodesStillOpeningTheirConnectionUpToTheConnectTimeoutOnly() throws Exception {
        Redlock redlock = cluster(
                3, Ticker.SYSTEM, b -> b.nodeTimeout(Duration.ofMillis(50)).connectTimeout(Duration.ofSeconds(2)));
        nodes.get(1).freeze();
        nodes.get(2).freeze();
        nodes.get(1).connecting = true; // a slow TLS handshake, say: its vote is needed for a quorum
        nodes.get(2).connecting = true;
        Thread thaw = new Thread(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                return;
            }
            nodes.get(1).thaw();
        });
        thaw.start();
        long start = System.nanoTime();
        assertThat(redlock.tryAcquire("r", TTL))
                .as("granted once node 1 is up, past the 50 ms node timeout")
                .isPresent();
        assertThat(System.nanoTime() - start).isBetween(250 * MS, 1_900 * MS);
        thaw.join();

        nodes.get(1).connecting = false; // connected now: the node timeout alone
        nodes.get(2).connecting = false;
        nodes.get(1).freeze();
        start = System.nanoTime();
        assertThatThrownBy(() -> redlock.tryAcquire("s", TTL))
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("timed out");
        assertThat(System.nanoTime() - start)
                .as("no wait past the node timeout")
                .isLessThan(1_000 * MS);
        nodes.get(1).thaw();
        nodes.get(2).thaw();
    }

    @Test
    void tokensAreRandomAndNotShownWhole() {
        Redlock redlock = cluster(1);
        Lease a = redlock.tryAcquire("a", TTL).orElseThrow();
        Lease b = redlock.tryAcquire("b", TTL).orElseThrow();
        String ta = nodes.get(0).tokenOf("a").orElseThrow();
        String tb = nodes.get(0).tokenOf("b").orElseThrow();
        // 128 random bits, then the holder's name: " pid@host" by default
        assertThat(ta).matches("[0-9a-f]{32} " + ProcessHandle.current().pid() + "@.+");
        assertThat(ta.substring(0, 32)).isNotEqualTo(tb.substring(0, 32));
        assertThat(a.toString()).doesNotContain(ta.substring(0, 32)).contains(ta.substring(0, 8));
        assertThat(b.toString()).doesNotContain(tb.substring(0, 32)).contains(tb.substring(0, 8));
    }
}
