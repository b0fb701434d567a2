package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.quorumlock.FencedLease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockHolder;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.Holders;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.TestTime;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The lock on a one-member etcd cluster: exclusion, tokens, loss, clean-ups. */
class EtcdLockIT {

    private static final Logger log = LoggerFactory.getLogger(EtcdLockIT.class);
    private static final Duration TTL = Duration.ofSeconds(5);
    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    /** Two clients, as two service instances would have. */
    static EtcdLock a;

    static EtcdLock b;

    /** Another client, playing an operator or a misbehaving process. */
    static Client admin;

    @BeforeAll
    static void connect() {
        if (!EtcdCluster.available()) {
            return; // the extension skips every test, saying why
        }
        long start = System.nanoTime();
        a = EtcdLock.builder().endpoints(etcd.endpoints()).build();
        b = EtcdLock.builder().endpoints(etcd.endpoints()).build();
        admin = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build();
        a.acquire("warm-up", TTL, WAIT).release();
        b.acquire("warm-up", TTL, WAIT).release();
        log.info("two clients connected and warmed up in {} ms", elapsedMillis(start));
    }

    @AfterAll
    static void disconnect() {
        for (AutoCloseable closeable : new AutoCloseable[] {a, b, admin}) {
            try {
                if (closeable != null) {
                    closeable.close();
                }
            } catch (Exception e) {
                log.warn("close failed", e);
            }
        }
    }

    @Test
    void aHeldLockIsRefusedToTheOtherClientWithEvidenceAndTheNextHolderHasALargerToken() {
        FencedLease first = a.acquire("stock:sku-42", TTL, WAIT);
        assertThat(first.resource()).isEqualTo("stock:sku-42");
        assertThat(first.fencingToken()).isPositive();
        assertThat(first.isValid()).isTrue();
        assertThat(first.validity()).isPositive().isLessThanOrEqualTo(TTL);
        assertThat(first.remaining()).isPositive().isLessThanOrEqualTo(first.validity());

        long start = System.nanoTime();
        assertThat(b.tryAcquire("stock:sku-42", TTL)).isEmpty();
        assertThat(elapsedMillis(start))
                .isLessThan(TestTime.scaled(Duration.ofSeconds(1)).toMillis());

        LockUnavailableException refused = catchThrowableOfType(
                LockUnavailableException.class, () -> b.acquire("stock:sku-42", TTL, Duration.ofMillis(300)));
        assertThat(refused.resource()).isEqualTo("stock:sku-42");
        assertThat(refused.lastAttempt()).singleElement().satisfies(outcome -> {
            assertThat(outcome.kind()).isEqualTo(ServerAnswer.Kind.HELD_BY_OTHER);
            assertThat(outcome.server()).isEqualTo("etcd " + etcd.endpoints().get(0));
            assertThat(outcome.detail())
                    .contains("key /quorumlock/locks/stock:sku-42/", "token " + first.fencingToken())
                    .containsPattern("waited \\d+ ms for the holder");
        });
        // One authority, no votes: the message names the holder as its key's value does, and the lease of its key.
        KeyValue held = lockKeys("stock:sku-42").get(0);
        assertThat(refused.getMessage())
                .matches("could not acquire 'stock:sku-42' within \\d+ ms \\(1 attempt\\): held by "
                        + Pattern.quote(Holders.defaultName()) + " \\(lease "
                        + Long.toHexString(held.getLease()) + ", key "
                        + Pattern.quote(held.getKey().toString(StandardCharsets.UTF_8)) + ", token "
                        + first.fencingToken() + "; waited \\d+ ms for the holder\\) on "
                        + Pattern.quote("etcd " + etcd.endpoints().get(0))
                        // both clients are of this process, whose name the lock keys hold
                        + "\\. Leases are not reentrant: .* use asLock\\(resource, ttl\\).*")
                .doesNotContain("votes");
        // The refused attempts revoked their leases: only the holder's key is left.
        assertThat(lockKeys("stock:sku-42"))
                .singleElement()
                .satisfies(kv -> assertThat(kv.getCreateRevision()).isEqualTo(first.fencingToken()));

        first.release();
        first.release(); // idempotent
        assertThat(first.isValid()).isFalse();
        assertThat(first.remaining()).isZero();
        assertThat(first.lost()).isNotDone();
        assertThat(lockKeys("stock:sku-42")).isEmpty();

        try (FencedLease second = b.tryAcquire("stock:sku-42", TTL).orElseThrow()) {
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        }
    }

    @Test
    void contendingClientsExcludeEachOtherAndTheTokensOfSuccessiveHoldersStrictlyIncrease() throws Exception {
        int threads = 4;
        int rounds = 10;
        AtomicInteger inside = new AtomicInteger();
        AtomicBoolean overlap = new AtomicBoolean();
        List<Long> tokens = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long start = System.nanoTime();
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                EtcdLock lock = t % 2 == 0 ? a : b;
                runs.add(pool.submit(() -> {
                    for (int i = 0; i < rounds; i++) {
                        try (FencedLease lease = lock.acquire("counter", TTL, WAIT)) {
                            if (inside.incrementAndGet() != 1) {
                                overlap.set(true);
                            }
                            synchronized (tokens) {
                                tokens.add(lease.fencingToken());
                            }
                            Thread.yield();
                            inside.decrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> run : runs) {
                run.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        log.info("{} contended acquisitions by 2 clients in {} ms", threads * rounds, elapsedMillis(start));
        assertThat(overlap).isFalse();
        assertThat(tokens).hasSize(threads * rounds).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void aRevokedLeaseReportsItsLossAndTheNextHolderGetsALargerToken() throws Exception {
        Duration ttl = Duration.ofSeconds(3);
        FencedLease holder = a.acquire("invoice-number", ttl, WAIT);
        long leaseId = lockKeys("invoice-number").get(0).getLease();

        long start = System.nanoTime();
        admin.getLeaseClient().revoke(leaseId).get(5, TimeUnit.SECONDS);

        LeaseLostException loss = holder.lost().get(TestTime.scaled(ttl).toMillis(), TimeUnit.MILLISECONDS);
        log.info("the revoked lease reported its loss after {} ms", elapsedMillis(start));
        assertThat(loss.resource()).isEqualTo("invoice-number");
        assertThat(loss.getMessage())
                .contains(
                        "etcd no longer knows the lease", Long.toHexString(leaseId), "token " + holder.fencingToken());
        assertThat(holder.isValid()).isFalse();
        assertThat(holder.remaining()).isZero();

        try (FencedLease next = b.acquire("invoice-number", ttl, Duration.ofMillis(500))) {
            assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
        }
        holder.release(); // quiet: the lease is already gone
        assertThatThrownBy(() -> holder.extend(ttl)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void withLockInterruptsTheWorkAndThrowsWhenTheLeaseIsLost() {
        CountDownLatch working = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        Thread revoker = new Thread(() -> {
            try {
                working.await();
                admin.getLeaseClient()
                        .revoke(lockKeys("report").get(0).getLease())
                        .get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                log.error("could not revoke", e);
            }
        });
        revoker.start();

        long start = System.nanoTime();
        LeaseLostException lost = catchThrowableOfType(
                LeaseLostException.class,
                () -> a.withLock("report", Duration.ofSeconds(3), WAIT, () -> outlivesItsLease(working, interrupted)));

        assertThat(lost).isNotNull();
        assertThat(lost.resource()).isEqualTo("report");
        assertThat(lost.getSuppressed()).singleElement().isInstanceOf(InterruptedException.class);
        assertThat(interrupted).isTrue();
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
        assertThat(elapsedMillis(start))
                .isLessThan(TestTime.scaled(Duration.ofSeconds(10)).toMillis());
        assertThat(lockKeys("report")).isEmpty();

        assertThat(a.withLock("report", TTL, WAIT, () -> "done")).isEqualTo("done");
        assertThat(lockKeys("report")).isEmpty();
    }

    @Test
    void withLeaseHandsTheWorkItsFencingToken() {
        long first = a.withLease("fenced-work", TTL, WAIT, FencedLease::fencingToken);
        long second = a.withLease("fenced-work", TTL, WAIT, lease -> {
            assertThat(lockKeys("fenced-work")).hasSize(1);
            return lease.fencingToken();
        });
        assertThat(second).isGreaterThan(first);
        assertThat(lockKeys("fenced-work")).isEmpty();
    }

    @Test
    void aLeaseIsKeptAliveBeyondItsTtlAndCanBeExtended() {
        Duration ttl = Duration.ofSeconds(2);
        try (FencedLease lease = a.acquire("long-job", ttl, WAIT)) {
            long start = System.nanoTime();
            TestTime.await(
                    Duration.ofSeconds(10),
                    () -> !lease.isValid() || elapsedMillis(start) > 3_000,
                    "3 s to pass, longer than the TTL");
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.lost()).isNotDone();
            assertThat(lockKeys("long-job")).hasSize(1);

            assertThat(lease.extend(Duration.ofSeconds(1))).isTrue();
            assertThat(lease.remaining()).isGreaterThan(Duration.ofMillis(1500));
            assertThatThrownBy(() -> lease.extend(Duration.ofMinutes(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("etcd cannot lengthen a lease's TTL");
        }
    }

    @Test
    void aLeaseWhoseKeepAliveFailsIsMarkedLost() throws Exception {
        FencedLease lease = a.acquire("nightly-export", TTL, WAIT);

        long start = System.nanoTime();
        etcd.get(0).stop(); // the only member: the keep-alive stream breaks

        LeaseLostException loss = lease.lost().get(TestTime.scaled(TTL).toMillis(), TimeUnit.MILLISECONDS);
        log.info(
                "the lease reported its loss {} ms after its only member was killed: {}",
                elapsedMillis(start),
                loss.getMessage());
        assertThat(lease.isValid()).isFalse();
        etcd.get(0).startAgain();
        lease.release();
        // The lock is usable again, and it was not left behind.
        try (FencedLease next = b.acquire("nightly-export", TTL, WAIT)) {
            assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        }
    }

    @Test
    void aCrashedHoldersLockIsFreedWhenItsLeaseRunsOutWhileTheWaiterIsKeptAlive() throws Exception {
        // A holder that dies without releasing: a raw client takes the lock on a 2 s lease and goes away.
        long crashedToken;
        try (Client crashed = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build()) {
            long leaseId =
                    crashed.getLeaseClient().grant(2).get(5, TimeUnit.SECONDS).getID();
            ByteSequence name = ByteSequence.from("/quorumlock/locks/payout", StandardCharsets.UTF_8);
            crashed.getLockClient().lock(name, leaseId).get(5, TimeUnit.SECONDS);
            crashedToken = lockKeys("payout").get(0).getCreateRevision();
        }
        long start = System.nanoTime();
        // The waiter's own lease (1 s TTL, raised by etcd to its minimum) must stay alive while it waits.
        try (FencedLease lease = a.acquire("payout", Duration.ofSeconds(1), WAIT)) {
            log.info("the crashed holder's lock was free after {} ms", elapsedMillis(start));
            assertThat(lease.fencingToken()).isGreaterThan(crashedToken);
            assertThat(lease.isValid()).isTrue();
            assertThat(elapsedMillis(start)).isGreaterThan(1_000);
        }
    }

    @Test
    void aWaiterWhoseLeaseIsLostWhileWaitingTriesAgainWithANewLease() throws Exception {
        FencedLease holder = a.acquire("ledger", TTL, WAIT);
        ExecutorService waiter = Executors.newSingleThreadExecutor();
        try {
            Future<FencedLease> waiting = waiter.submit(() -> b.acquire("ledger", Duration.ofSeconds(2), WAIT));
            TestTime.await(Duration.ofSeconds(5), () -> lockKeys("ledger").size() == 2, "the waiter's key");
            long firstLease = lockKeys("ledger").get(1).getLease();
            admin.getLeaseClient().revoke(firstLease).get(5, TimeUnit.SECONDS);

            TestTime.await(
                    Duration.ofSeconds(5),
                    () -> {
                        List<KeyValue> keys = lockKeys("ledger");
                        return keys.size() == 2 && keys.get(1).getLease() != firstLease;
                    },
                    "the waiter to queue again with a new lease");
            assertThat(waiting).isNotDone();
            holder.release();
            try (FencedLease next = waiting.get(10, TimeUnit.SECONDS)) {
                assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
                assertThat(lockKeys("ledger"))
                        .singleElement()
                        .satisfies(kv -> assertThat(kv.getLease()).isNotEqualTo(firstLease));
            }
        } finally {
            waiter.shutdownNow();
        }
    }

    /**
     * etcd's lock service answers a waiter once the keys ahead are gone, even when the waiter's
     * lease was revoked meanwhile (its key with it). The waiter's TTL is long, so its keep-alive
     * does not notice the revoke before the grant: the read of the key after the grant must.
     */
    @Test
    void aWaiterWhoseLeaseIsRevokedJustBeforeItsGrantIsNotHandedThatLease() throws Exception {
        FencedLease holder = a.acquire("ledger-revoked", TTL, WAIT);
        ExecutorService waiter = Executors.newSingleThreadExecutor();
        try {
            long watchers = watchers();
            Future<FencedLease> waiting =
                    waiter.submit(() -> b.acquire("ledger-revoked", Duration.ofSeconds(60), WAIT));
            TestTime.await(
                    Duration.ofSeconds(5), () -> lockKeys("ledger-revoked").size() == 2, "the waiter's key");
            // etcd's lock service watches the key ahead once it waits: the revoke comes after that.
            TestTime.await(Duration.ofSeconds(5), () -> watchers() > watchers, "the waiter queued in etcd's lock");
            long revoked = lockKeys("ledger-revoked").get(1).getLease();
            admin.getLeaseClient().revoke(revoked).get(5, TimeUnit.SECONDS);
            holder.release();
            try (FencedLease next = waiting.get(TestTime.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)) {
                assertThat(((EtcdLease) next).leaseId()).isNotEqualTo(revoked);
                assertThat(lockKeys("ledger-revoked")).singleElement().satisfies(kv -> {
                    assertThat(kv.getLease()).isEqualTo(((EtcdLease) next).leaseId());
                    assertThat(kv.getCreateRevision()).isEqualTo(next.fencingToken());
                });
                assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
            }
        } finally {
            waiter.shutdownNow();
        }
    }

    @Test
    void closingALockReleasesItsLeases() {
        EtcdLock lock = EtcdLock.builder().endpoints(etcd.endpoints()).build();
        FencedLease lease = lock.acquire("cache-rebuild", TTL, WAIT);
        assertThat(lockKeys("cache-rebuild")).hasSize(1);

        lock.close();
        lock.close(); // idempotent

        assertThat(lease.isValid()).isFalse();
        assertThat(lease.lost())
                .isCompletedWithValueMatching(e -> e.getMessage().contains("was closed"));
        assertThat(lockKeys("cache-rebuild")).isEmpty();
        assertThatThrownBy(() -> lock.tryAcquire("cache-rebuild", TTL))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void closingALockInterruptsTheWorkUnderItsLeasesAndEndsItInLeaseLost() throws Exception {
        EtcdLock closing = EtcdLock.builder().endpoints(etcd.endpoints()).build();
        CountDownLatch working = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        CompletableFuture<Throwable> ended = CompletableFuture.supplyAsync(() -> catchThrowableOfType(
                LeaseLostException.class,
                () -> closing.withLock("nightly-close", TTL, WAIT, () -> outlivesItsLease(working, interrupted))));
        assertThat(working.await(10, TimeUnit.SECONDS)).isTrue();

        closing.close();
        long closed = System.nanoTime();
        Throwable lost = ended.get(20, TimeUnit.SECONDS);
        log.info(
                "work under a lease ended {} ms after close() returned: {}",
                elapsedMillis(closed),
                String.valueOf(lost));
        assertThat(lost).isInstanceOf(LeaseLostException.class).hasMessageContaining("was closed");
        assertThat(interrupted).isTrue();
        assertThat(elapsedMillis(closed))
                .isLessThan(TestTime.scaled(Duration.ofSeconds(1)).toMillis());
        assertThat(lockKeys("nightly-close")).isEmpty();
    }

    @Test
    void closingALockEndsItsWaitingAcquireAndLeavesNoKey() throws Exception {
        FencedLease holder = a.acquire("archive", TTL, WAIT);
        EtcdLock closing = EtcdLock.builder().endpoints(etcd.endpoints()).build();
        ExecutorService waiter = Executors.newSingleThreadExecutor();
        try {
            Future<FencedLease> waiting = waiter.submit(() -> closing.acquire("archive", TTL, Duration.ofSeconds(30)));
            TestTime.await(Duration.ofSeconds(5), () -> lockKeys("archive").size() == 2, "the waiter's key");

            closing.close();
            long closed = System.nanoTime();
            Throwable ended = catchThrowableOfType(ExecutionException.class, () -> waiting.get(20, TimeUnit.SECONDS))
                    .getCause();
            long afterClose = elapsedMillis(closed);
            log.info(
                    "an acquire waiting behind a holder ended {} ms after close() returned: {}",
                    afterClose,
                    ended.toString());
            assertThat(ended).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            assertThat(afterClose)
                    .isLessThan(TestTime.scaled(Duration.ofSeconds(1)).toMillis());
            TestTime.await(Duration.ofSeconds(5), () -> lockKeys("archive").size() == 1, "the waiter's key gone");
            assertThat(lockKeys("archive").get(0).getCreateRevision()).isEqualTo(holder.fencingToken());
        } finally {
            waiter.shutdownNow();
            closing.close();
            holder.release();
        }
    }

    @Test
    void aWaitingAcquireOfALockClosedOverASharedClientIsNotGrantedLater() throws Exception {
        FencedLease holder = a.acquire("invoice-numbers", TTL, WAIT);
        EtcdLock closing = EtcdLock.builder().client(admin).build();
        ExecutorService waiter = Executors.newSingleThreadExecutor();
        try {
            Future<FencedLease> waiting =
                    waiter.submit(() -> closing.acquire("invoice-numbers", TTL, Duration.ofSeconds(30)));
            TestTime.await(
                    Duration.ofSeconds(5), () -> lockKeys("invoice-numbers").size() == 2, "the waiter's key");

            closing.close();
            holder.release(); // were the waiter still queued, etcd would grant it now
            Throwable ended = catchThrowableOfType(ExecutionException.class, () -> waiting.get(20, TimeUnit.SECONDS))
                    .getCause();
            assertThat(ended).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            TestTime.await(
                    Duration.ofSeconds(5), () -> lockKeys("invoice-numbers").isEmpty(), "no key left by the waiter");
        } finally {
            waiter.shutdownNow();
            holder.release();
        }
    }

    @Test
    void aKeyAheadInTheQueueIsShownOnlyWithinBounds() throws Exception {
        // Another program's key in the lock's queue: 100 KB long, with a line break and a terminal escape.
        ByteSequence hostile = ByteSequence.from(
                "/quorumlock/locks/hostile-key/\n\u001b[2J" + "x".repeat(100_000), StandardCharsets.UTF_8);
        admin.getKVClient().put(hostile, ByteSequence.EMPTY).get(5, TimeUnit.SECONDS);
        try {
            LockUnavailableException refused = catchThrowableOfType(
                    LockUnavailableException.class, () -> a.acquire("hostile-key", TTL, Duration.ofMillis(300)));

            assertThat(refused).isNotNull();
            String evidence = refused.getMessage() + " " + refused.lastAttempt();
            assertThat(evidence.length())
                    .as(evidence.substring(0, Math.min(300, evidence.length())))
                    .isLessThan(2_000);
            assertThat(evidence).doesNotContain("\n", "\u001b").contains("... (100035 characters)");
            assertThat(refused.lastAttempt().get(0).detail()).contains("/quorumlock/locks/hostile-key/??[2J");
        } finally {
            admin.getKVClient().delete(hostile).get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void resourcesThatArePrefixesOfEachOtherDoNotShareALock() {
        try (FencedLease order = a.acquire("order", TTL, WAIT)) {
            Optional<FencedLease> line = b.tryAcquire("order/1", TTL);
            assertThat(line).isPresent();
            line.get().release();
            assertThat(order.isValid()).isTrue();
        }
    }

    /** The keys of the waiters and the holder of a resource, oldest first. */
    /** Work that would outlive its lease: says it started, sleeps until interrupted, and says so. */
    private static String outlivesItsLease(CountDownLatch working, AtomicBoolean interrupted)
            throws InterruptedException {
        working.countDown();
        try {
            Thread.sleep(TestTime.scaled(Duration.ofSeconds(30)).toMillis());
        } catch (InterruptedException e) {
            interrupted.set(true);
            throw e;
        }
        return "done";
    }

    /** The watchers etcd has open, from its metrics: etcd's lock service opens one per waiter. */
    static long watchers() {
        return EtcdQueueState.watchers(etcd.endpoints().get(0));
    }

    // ---- holder(resource) ------------------------------------------------------------------------

    private static final Duration HOLDER_WAIT = TestTime.scaled(Duration.ofSeconds(10));

    private final List<EtcdLock> holderLocks = new ArrayList<>();
    private final ExecutorService holderThreads = Executors.newCachedThreadPool();

    @AfterEach
    void closeHolderLocks() {
        holderThreads.shutdownNow();
        holderLocks.forEach(EtcdLock::close);
    }

    @Test
    void aSecondAcquireByTheSameHolderSaysLeasesAreNotReentrant() {
        EtcdLock lock = holderLock("billing-1");
        try (FencedLease held = lock.acquire("reentry", TTL, WAIT)) {
            assertThatThrownBy(() -> lock.acquire("reentry", TTL, Duration.ZERO))
                    .isInstanceOf(LockUnavailableException.class)
                    .hasMessageContaining("held by billing-1")
                    .hasMessageContaining("not reentrant")
                    .hasMessageContaining("asLock(resource, ttl)");
        }
    }

    private EtcdLock holderLock(String holder) {
        return opened(EtcdLock.builder().endpoints(etcd.endpoints()).holder(holder));
    }

    private EtcdLock opened(EtcdLockBuilder builder) {
        EtcdLock lock = builder.build();
        holderLocks.add(lock);
        return lock;
    }

    @Test
    void holderIsTheFirstLockKeyWithItsTokenAndFreeAfterTheRelease() {
        EtcdLock billing = holderLock("billing-worker-1");
        EtcdLock observer = holderLock("observer");
        assertThat(observer.holder("holder-report")).isEmpty();

        FencedLease lease = billing.acquire("holder-report", TTL, HOLDER_WAIT);
        assertThat(observer.holder("holder-report"))
                .contains(new LockHolder("billing-worker-1", OptionalLong.of(lease.fencingToken())));
        assertThat(observer.tryAcquire("holder-report", TTL)).as("still held").isEmpty();
        lease.release();
        assertThat(observer.holder("holder-report")).as("released").isEmpty();

        FencedLease next = observer.acquire("holder-report", TTL, Duration.ZERO); // the reads took nothing
        assertThat(billing.holder("holder-report"))
                .contains(new LockHolder("observer", OptionalLong.of(next.fencingToken())));
        next.release();
    }

    @Test
    void holderDisturbsNoWaiterAndTheSuccessorOfAHolderWhoseLeaseEndedIsTheHolder() throws Exception {
        EtcdLock billing = holderLock("billing-worker-1");
        EtcdLock waiting = holderLock("billing-worker-2");
        EtcdLock observer = holderLock("observer");
        FencedLease held = billing.acquire("holder-ledger", TTL, HOLDER_WAIT);
        Future<FencedLease> waiter =
                holderThreads.submit(() -> waiting.acquire("holder-ledger", TTL, Duration.ofSeconds(30)));
        TestTime.await(HOLDER_WAIT, () -> lockKeys("holder-ledger").size() == 2, "the waiter's key");
        for (int i = 0; i < 10; i++) {
            assertThat(observer.holder("holder-ledger").orElseThrow().fencingToken())
                    .hasValue(held.fencingToken());
        }
        assertThat(waiter).isNotDone();
        assertThat(lockKeys("holder-ledger")).as("the reads queued nothing").hasSize(2);

        // The holder's etcd lease ends without a release, as when it expires.
        long leaseId = lockKeys("holder-ledger").get(0).getLease();
        admin.getLeaseClient().revoke(leaseId).get(5, TimeUnit.SECONDS);

        FencedLease next = waiter.get(HOLDER_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(observer.holder("holder-ledger"))
                .contains(new LockHolder("billing-worker-2", OptionalLong.of(next.fencingToken())));
        next.release();
        assertThat(observer.holder("holder-ledger")).isEmpty();
    }

    @Test
    void holderOfAKeyWithoutAHolderNameIsUnnamed() throws Exception {
        // As etcd's own lock clients (etcdctl lock) and older quorumlock versions leave them: no value.
        ByteSequence key = ByteSequence.from("/quorumlock/locks/foreign/694d8b1c", StandardCharsets.UTF_8);
        long revision = admin.getKVClient()
                .put(key, ByteSequence.EMPTY)
                .get(5, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
        assertThat(holderLock("observer").holder("foreign")).contains(new LockHolder("", OptionalLong.of(revision)));
        admin.getKVClient().delete(key).get(5, TimeUnit.SECONDS);
    }

    /** A lock on a port where nothing listens, with a request timeout of 1 s. */
    private EtcdLock withoutACluster() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort(); // closed again: nothing listens there
        }
        return opened(EtcdLock.builder().endpoints("http://127.0.0.1:" + port).requestTimeout(Duration.ofSeconds(1)));
    }

    @Test
    void holderWithoutAClusterIsAnOutageWithinTheRequestTimeout() throws Exception {
        EtcdLock nowhere = withoutACluster();
        long start = System.nanoTime();
        assertThatThrownBy(() -> nowhere.holder("r"))
                .isInstanceOf(QuorumlockException.class)
                .hasMessageContaining("could not tell who holds 'r'");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isLessThan(Duration.ofSeconds(1).plus(TestTime.scaled(Duration.ofSeconds(2))));
    }

    @Test
    void tryAcquireWithoutAClusterThrowsWithTheEvidence() throws Exception {
        EtcdLock nowhere = withoutACluster();
        LockUnavailableException down = org.junit.jupiter.api.Assertions.assertThrows(
                LockUnavailableException.class, () -> nowhere.tryAcquire("r", TTL), "tryAcquire without a cluster");
        assertThat(down.busy()).isFalse();
        assertThat(down.lastAttempt())
                .singleElement()
                .extracting(ServerAnswer::kind)
                .isNotEqualTo(ServerAnswer.Kind.HELD_BY_OTHER);
    }

    @Test
    void theHolderNameIsChecked() {
        assertThatThrownBy(() -> EtcdLock.builder()
                        .endpoints(etcd.endpoints())
                        .holder("x".repeat(65))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holder");
    }

    static List<KeyValue> lockKeys(String resource) {
        return EtcdQueueState.lockKeys(admin, resource);
    }

    static long elapsedMillis(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }
}
