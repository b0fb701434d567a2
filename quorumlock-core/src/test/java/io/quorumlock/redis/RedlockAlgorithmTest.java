package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.NodeOutcome;
import io.quorumlock.NodeOutcome.Vote;
import io.quorumlock.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The algorithm over in-memory nodes: decisions, validity arithmetic and clean-up, without Redis. */
class RedlockAlgorithmTest {

    private static final long MS = 1_000_000L;
    private static final Duration TTL = Duration.ofSeconds(1);

    private final FakeTicker ticker = new FakeTicker();
    private final List<FakeNode> nodes = new ArrayList<>();
    private final List<Redlock> clients = new ArrayList<>();

    @AfterEach
    void closeAll() {
        nodes.forEach(FakeNode::thaw);
        clients.forEach(Redlock::close);
    }

    private Redlock cluster(int n, Duration nodeTimeout, Ticker clock) {
        return cluster(n, clock, builder -> builder.nodeTimeout(nodeTimeout));
    }

    /** A client of the first {@code n} nodes, made if need be, with its own {@code settings}. */
    private Redlock cluster(int n, Ticker clock, Consumer<Redlock.Builder> settings) {
        makeNodes(n);
        Redlock.Builder builder = Redlock.builder()
                .nodeTimeout(Duration.ofMillis(50))
                .retry(RetryPolicy.jitteredBackoff(Duration.ofMillis(1), Duration.ofMillis(5)));
        settings.accept(builder);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            builder.node("redis://node" + i + ":6379");
            names.add("redis://node" + i + ":6379");
        }
        Redlock redlock = builder.build(new FakeTransport(List.copyOf(nodes.subList(0, n)), names, clock), clock);
        clients.add(redlock);
        return redlock;
    }

    private Redlock cluster(int n) {
        return cluster(n, Duration.ofMillis(50), ticker);
    }

    private void makeNodes(int n) {
        while (nodes.size() < n) {
            nodes.add(new FakeNode(ticker));
        }
    }

    private long holders(String key) {
        return nodes.stream().filter(n -> n.tokenOf(key).isPresent()).count();
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
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
        assertThat(redlock.tryAcquire("r", TTL)).isEmpty();
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
        assertThat(redlock.tryAcquire("r", TTL)).isEmpty();
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
    void releaseIsIdempotentAndAReleasedLeaseCannotBeExtended() {
        Redlock redlock = cluster(3);
        Lease lease = redlock.tryAcquire("r", TTL).orElseThrow();
        lease.release();
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
        Redlock other = cluster(3);
        Lease held = other.tryAcquire("r", Duration.ofSeconds(30)).orElseThrow();
        await(() -> holders("r") == 3, "the third grant has landed too");
        nodes.get(2).down = true;
        Redlock redlock = cluster(3, Duration.ofMillis(50), Ticker.SYSTEM);
        LockUnavailableException e = org.junit.jupiter.api.Assertions.assertThrows(
                LockUnavailableException.class, () -> redlock.acquire("r", TTL, Duration.ofMillis(30)));
        assertThat(e.votes()).isZero();
        assertThat(e.quorum()).isEqualTo(2);
        assertThat(e.attempts()).isGreaterThan(1);
        assertThat(e.lastAttempt()).extracting(NodeOutcome::vote).startsWith(Vote.HELD_BY_OTHER, Vote.HELD_BY_OTHER);
        // Two refusals decide the attempt; node 2's answer is evidence only if it came by then.
        assertThat(e.lastAttempt().get(2).vote()).isIn(Vote.UNREACHABLE, Vote.PENDING);
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
        Redlock redlock = cluster(3, Duration.ofMillis(100), Ticker.SYSTEM);
        LeaseLostException e = org.junit.jupiter.api.Assertions.assertThrows(
                LeaseLostException.class,
                () -> redlock.withLock("r", Duration.ofMillis(600), Duration.ZERO, () -> {
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
        Redlock redlock = cluster(3, Duration.ofMillis(100), Ticker.SYSTEM);
        String result = redlock.withLock("r", Duration.ofMillis(600), Duration.ZERO, () -> {
            long end = System.nanoTime() + 1800 * MS; // three TTLs of work
            while (System.nanoTime() < end) {
                assertThat(holders("r")).isGreaterThanOrEqualTo(2);
                Thread.sleep(10);
            }
            return "done";
        });
        assertThat(result).isEqualTo("done");
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
        Redlock redlock = cluster(3, Duration.ofMillis(100), Ticker.SYSTEM);
        Lease lease = redlock.acquire("r", Duration.ofMillis(600), Duration.ZERO);
        CompletableFuture<LeaseLostException> lost = redlock.keepAlive(lease, Duration.ofMillis(600));
        long end = System.nanoTime() + 1800 * MS; // three TTLs
        while (System.nanoTime() < end) {
            assertThat(lease.isValid()).isTrue();
            assertThat(holders("r")).isGreaterThanOrEqualTo(2);
            Thread.sleep(10);
        }
        lease.release();
        // Release returns once a majority is free; a straggler's delete may still reach node 0.
        await(() -> holders("r") == 0, "every node's delete");
        int calls = nodes.get(0).calls.get();
        Thread.sleep(700); // longer than a TTL: an extension still scheduled would have run
        assertThat(nodes.get(0).calls.get())
                .as("no extension after the release")
                .isEqualTo(calls);
        assertThat(lost).isNotDone();
        assertThat(holders("r")).isZero();
    }

    @Test
    void keepAliveReportsTheLossWhenAnExtensionFails() throws Exception {
        Redlock redlock = cluster(3, Duration.ofMillis(100), Ticker.SYSTEM);
        Lease lease = redlock.acquire("r", Duration.ofMillis(600), Duration.ZERO);
        CompletableFuture<LeaseLostException> lost = redlock.keepAlive(lease, Duration.ofMillis(600));
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
        assertThat(e.lastAttempt().get(0).vote()).isIn(Vote.YES, Vote.PENDING);
        assertThat(e.lastAttempt().subList(1, 3))
                .allSatisfy(o -> assertThat(o.vote()).isEqualTo(Vote.EXCLUDED))
                .allSatisfy(o -> assertThat(o.detail()).isEqualTo("restart guard: up 0 s, votes in 1 s"));
        assertThat(e.getMessage())
                .contains("redis://node1:6379: excluded (restart guard: up 0 s, votes in 1 s)")
                .endsWith("wait, or where every node fsyncs every write (appendfsync always), or in a test on nodes"
                        + " just started, build the lock with restartGuard(false)");
        await(() -> holders("r") == 0, "every yes to be released, the excluded ones too");

        ticker.advance(TTL.toNanos());
        assertThat(redlock.tryAcquire("r", TTL))
                .as("up for a TTL: they vote again")
                .isPresent();
    }

    @Test
    void oneExcludedNodeLeavesAQuorumOfTheOthers() throws Exception {
        Redlock redlock = cluster(3);
        nodes.get(2).restart();
        Redlock.Attempt attempt = redlock.attempt("r", TTL, ticker.nanos() + TTL.toNanos());
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
        Rounds.Outcome round = lease.extendRound(TTL);
        assertThat(round.held()).isTrue();
        assertThat(round.votes()).isEqualTo(2);
        assertThat(round.outcomes().get(2).vote()).isIn(Vote.EXCLUDED, Vote.PENDING);
        nodes.get(1).startedNanos = ticker.nanos();
        Rounds.Outcome second = lease.extendRound(TTL);
        assertThat(second.held()).isFalse();
        assertThat(second.outcomes()).extracting(NodeOutcome::vote).endsWith(Vote.EXCLUDED, Vote.EXCLUDED);
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
        assertThat(redlock.tryAcquire("s", TTL)).isEmpty();
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
        assertThat(Optional.of(b)).isPresent();
    }
}
