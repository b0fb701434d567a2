package io.quorumlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * {@link DistributedReentrantLock} over Redlock on three real redis-server nodes: two clients (two
 * Redlocks, as two processes would have) contend for one resource.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LockAdapterIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final String RESOURCE = "adapter:invoices";
    private static final Duration TTL = TestTime.scaled(Duration.ofSeconds(2));
    private static final Duration LONG = TestTime.scaled(Duration.ofSeconds(10));

    private Redlock first;
    private Redlock second;
    private DistributedReentrantLock<Lease> mine;
    private DistributedReentrantLock<Lease> theirs;

    @BeforeEach
    void clients() {
        first = client("first");
        second = client("second");
        mine = first.asLock(RESOURCE, TTL);
        theirs = second.asLock(RESOURCE, TTL);
    }

    private static Redlock client(String holder) {
        return Redlock.builder()
                .nodes(redis.uris())
                .restartGuard(false)
                .holder(holder)
                .nodeTimeout(TestTime.scaled(Duration.ofMillis(100)))
                .retry(RetryPolicy.jitteredBackoff(Duration.ofMillis(5), Duration.ofMillis(50)))
                .build();
    }

    @AfterEach
    void close() {
        first.close();
        second.close();
    }

    @Test
    void oneClientAtATime() throws Exception {
        mine.lock();
        assertThat(mine.isHeldByCurrentThread()).isTrue();
        assertThat(mine.lease()).isPresent();

        CompletableFuture<Boolean> tryNow = inThread(theirs::tryLock);
        assertThat(tryNow.get()).as("tryLock() while another client holds it").isFalse();
        long start = System.nanoTime();
        Duration wait = Duration.ofMillis(300);
        CompletableFuture<Boolean> tryAWhile = inThread(() -> theirs.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS));
        assertThat(tryAWhile.get())
                .as("tryLock(300 ms) while another client holds it")
                .isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(wait);
        assertThat(theirs.isLocked()).isFalse();

        CountDownLatch released = new CountDownLatch(1);
        CompletableFuture<Boolean> waiting = inThread(() -> {
            boolean got = theirs.tryLock(LONG.toMillis(), TimeUnit.MILLISECONDS);
            try {
                return got && released.getCount() == 0;
            } finally {
                if (got) {
                    theirs.unlock();
                }
            }
        });
        Thread.sleep(100); // the waiter is in its wait (if not yet, it waits the same)
        released.countDown();
        mine.unlock();
        assertThat(waiting.get(LONG.toMillis() * 2, TimeUnit.MILLISECONDS))
                .as("the other client got the lock, after the release")
                .isTrue();
        assertThat(mine.lease()).isEmpty();
    }

    @Test
    void reentrantPerThreadAndOnlyTheLastUnlockReleases() throws Exception {
        mine.lock();
        Lease lease = mine.lease().orElseThrow();
        assertThat(mine.tryLock()).isTrue();
        assertThat(mine.tryLock(1, TimeUnit.MILLISECONDS)).isTrue();
        mine.lockInterruptibly();
        assertThat(mine.getHoldCount()).isEqualTo(4);
        assertThat(mine.lease()).containsSame(lease);

        mine.unlock();
        mine.unlock();
        mine.unlock();
        assertThat(mine.getHoldCount()).isEqualTo(1);
        assertThat(lease.isValid()).isTrue();
        assertThat(inThread(theirs::tryLock).get())
                .as("still held after 3 of 4 unlocks")
                .isFalse();

        mine.unlock();
        assertThat(mine.getHoldCount()).isZero();
        assertThat(lease.isValid()).as("released by the last unlock").isFalse();
        assertThat(theOtherClientTakesAndReleases())
                .as("free after the last unlock")
                .isTrue();
    }

    @Test
    void twoAdaptersOfOneLockForOneResourceAreOneHoldReentrantByName() throws Exception {
        DistributedReentrantLock<Lease> again = first.asLock(RESOURCE, LONG);
        mine.lock();
        Lease lease = mine.lease().orElseThrow();

        assertThat(again.tryLock())
                .as("a second asLock of the resource, in the thread that holds it")
                .isTrue();
        assertThat(again.tryLock(Duration.ZERO, TTL)).isTrue();
        assertThat(mine.getHoldCount()).isEqualTo(3);
        assertThat(again.isHeldByCurrentThread()).isTrue();
        assertThat(again.lease()).as("one hold, one lease").containsSame(lease);
        assertThat(inThread(again::tryLock).get())
                .as("another thread of this process, through the second adapter")
                .isFalse();

        again.unlock();
        mine.unlock();
        assertThat(lease.isValid()).as("held until the last unlock").isTrue();
        again.unlock();
        assertThat(lease.isValid())
                .as("released by the last unlock, through either adapter")
                .isFalse();
        assertThat(mine.isLocked()).isFalse();
        assertThat(SharedHold.find(first, RESOURCE))
                .as("forgotten once no thread holds or waits")
                .isNull();
        assertThat(theOtherClientTakesAndReleases())
                .as("another lock object: another owner, free after the last unlock")
                .isTrue();
    }

    @Test
    void tryLockIsFalseWhenTheLockServiceCannotDecide() throws Exception {
        redis.get(1).stop();
        redis.get(2).stop();
        assertThat(mine.tryLock()).as("tryLock() with two of three nodes down").isFalse();
        assertThat(mine.tryLock(50, TimeUnit.MILLISECONDS))
                .as("tryLock(time) with two of three nodes down")
                .isFalse();
        assertThat(mine.isLocked()).isFalse();
    }

    @Test
    void threadsOfOneProcessQueueLocallyWithoutCallingTheServers() throws Exception {
        mine.lock();
        long sets = setCalls();
        AtomicBoolean got = new AtomicBoolean();
        CompletableFuture<Boolean> other = inThread(() -> {
            boolean acquired = mine.tryLock(LONG.toMillis(), TimeUnit.MILLISECONDS);
            got.set(acquired);
            if (acquired) {
                mine.unlock();
            }
            return acquired;
        });
        assertThat(inThread(mine::tryLock).get())
                .as("tryLock() of another thread")
                .isFalse();
        assertThat(inThread(() -> mine.tryLock(50, TimeUnit.MILLISECONDS)).get())
                .isFalse();
        Thread.sleep(TestTime.scaled(Duration.ofMillis(300)).toMillis()); // the waiter waits in this process
        assertThat(got).isFalse();
        assertThat(setCalls())
                .as("SET commands while the other threads waited for this process's hold")
                .isEqualTo(sets);
        mine.unlock();
        assertThat(other.get()).isTrue();
    }

    @Test
    void unlockByAThreadThatDoesNotHoldItIsRefused() throws Exception {
        assertThatThrownBy(mine::unlock).isInstanceOf(IllegalMonitorStateException.class);
        mine.lock();
        CompletableFuture<Object> other = inThread(() -> {
            mine.unlock();
            return null;
        });
        assertThatThrownBy(other::get)
                .hasCauseInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("not locked by this thread");
        assertThat(mine.isHeldByCurrentThread()).isTrue();
        assertThat(mine.lease().orElseThrow().isValid()).isTrue();
        assertThatThrownBy(mine::newCondition).isInstanceOf(UnsupportedOperationException.class);
        mine.unlock();
    }

    @Test
    void lockInterruptiblyThrowsOnEntryAndWhileWaiting() throws Exception {
        Thread.currentThread().interrupt();
        assertThatThrownBy(mine::lockInterruptibly).isInstanceOf(InterruptedException.class);
        assertThat(Thread.interrupted()).as("the interrupt status is cleared").isFalse();
        assertThat(mine.isLocked()).isFalse();

        theirs.lock();
        try {
            Thread.currentThread().interrupt();
            assertThatThrownBy(() -> mine.tryLock(LONG.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(InterruptedException.class);
            assertThat(Thread.interrupted()).isFalse();

            AtomicReference<Thread> waiter = new AtomicReference<>();
            CompletableFuture<Object> waiting = inThread(() -> {
                waiter.set(Thread.currentThread());
                mine.lockInterruptibly();
                return "locked";
            });
            CompletableFuture<Boolean> timedWaiting = inThread(() -> {
                boolean got = mine.tryLock(LONG.toMillis(), TimeUnit.MILLISECONDS);
                if (got) {
                    mine.unlock();
                }
                return got;
            });
            TestTime.await(Duration.ofSeconds(5), () -> waiter.get() != null, "the waiter to start");
            Thread.sleep(100);
            waiter.get().interrupt();
            assertThatThrownBy(() -> waiting.get(LONG.toMillis(), TimeUnit.MILLISECONDS))
                    .hasCauseInstanceOf(InterruptedException.class);
            assertThat(timedWaiting.isDone()).as("the other waiter waits on").isFalse();
            theirs.unlock();
            assertThat(timedWaiting.get(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        } finally {
            if (theirs.isHeldByCurrentThread()) {
                theirs.unlock();
            }
        }
    }

    @Test
    void lockWaitsThroughAnInterruptAndKeepsTheStatus() throws Exception {
        theirs.lock();
        AtomicReference<Thread> waiter = new AtomicReference<>();
        CompletableFuture<Boolean> waiting = inThread(() -> {
            waiter.set(Thread.currentThread());
            mine.lock();
            try {
                return Thread.currentThread().isInterrupted();
            } finally {
                mine.unlock();
            }
        });
        TestTime.await(Duration.ofSeconds(5), () -> waiter.get() != null, "the waiter to start");
        Thread.sleep(100);
        waiter.get().interrupt();
        Thread.sleep(TestTime.scaled(Duration.ofMillis(200)).toMillis());
        assertThat(waiting.isDone()).as("lock() waits on after an interrupt").isFalse();
        theirs.unlock();
        assertThat(waiting.get(LONG.toMillis(), TimeUnit.MILLISECONDS))
                .as("interrupted status after lock() returned")
                .isTrue();
    }

    @Test
    void anUnlockByAnInterruptedThreadFreesTheLockAtOnceAndKeepsTheStatus() throws Exception {
        // As Spring Integration's leader initiator unlocks when its context stops: from a thread
        // that the stop interrupted.
        CompletableFuture<Boolean> holder = inThread(() -> {
            mine.lock();
            Thread.currentThread().interrupt();
            mine.unlock();
            return Thread.currentThread().isInterrupted();
        });
        assertThat(holder.get(LONG.toMillis(), TimeUnit.MILLISECONDS))
                .as("interrupted status after unlock()")
                .isTrue();
        assertThat(mine.isLocked()).isFalse();
        for (RedisServer node : redis.servers().servers()) {
            try (Jedis jedis = node.connect(Duration.ofSeconds(2))) {
                assertThat(jedis.exists(RESOURCE))
                        .as("the key on %s after the unlock", node)
                        .isFalse();
            }
        }
        CompletableFuture<Boolean> other = inThread(() -> {
            boolean taken = theirs.tryLock();
            if (taken) {
                theirs.unlock();
            }
            return taken;
        });
        assertThat(other.get(LONG.toMillis(), TimeUnit.MILLISECONDS))
                .as("another client's tryLock() right after the unlock")
                .isTrue();
    }

    @Test
    void aLostLeaseIsNoticedAndReportedByUnlock() throws Exception {
        mine.lock();
        mine.lock();
        CompletableFuture<LeaseLostException> lost = mine.lost();
        assertThat(lost).isNotDone();
        for (RedisServer node : redis.servers().servers()) {
            node.flushAll(); // someone deletes the key: the watchdog's next extension finds it gone
        }
        LeaseLostException notice = lost.get(LONG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(notice.resource()).isEqualTo(RESOURCE);

        assertThatThrownBy(mine::lock).as("taking it again after the loss").isInstanceOf(LeaseLostException.class);
        assertThat(mine.getHoldCount()).isEqualTo(2);
        mine.unlock();
        assertThatThrownBy(mine::unlock).isInstanceOf(LeaseLostException.class).hasMessageContaining(RESOURCE);
        assertThat(mine.isLocked()).as("the hold ended all the same").isFalse();
        assertThat(mine.tryLock()).as("and the lock can be taken again").isTrue();
        mine.unlock();
    }

    @Test
    void aRevokedHoldIsToldBeforeItsLeaseIsReleased() throws Exception {
        assertThat(mine.revoke("not held")).isEmpty();
        mine.lock();
        CompletableFuture<LeaseLostException> lost = mine.lost();
        Lease lease = inThread(() -> mine.revoke("taken away").orElseThrow()).get();

        assertThat(lost.getNow(null)).as("the notice, at once").isNotNull();
        assertThat(lost.getNow(null).getMessage()).contains(RESOURCE, "taken away");
        assertThat(mine.isLocked()).as("isLocked() once told").isFalse();
        assertThat(lease.isValid())
                .as("the lease, still held for the holder to stop")
                .isTrue();
        assertThat(inThread(theirs::tryLock).get())
                .as("another client meanwhile")
                .isFalse();

        assertThatThrownBy(mine::unlock).isInstanceOf(LeaseLostException.class).hasMessageContaining("taken away");
        assertThat(lease.isValid()).as("the lease after the holder's unlock").isFalse();
        assertThat(theOtherClientTakesAndReleases())
                .as("another client after the unlock")
                .isTrue();
    }

    @Test
    void aLeaseOutlivesItsTtlWhileHeld() throws Exception {
        mine.lock();
        Thread.sleep(TTL.multipliedBy(2).toMillis());
        assertThat(mine.lost()).isNotDone();
        assertThat(inThread(theirs::tryLock).get()).isFalse();
        mine.unlock(); // no LeaseLostException
    }

    @Test
    void aSecondLeaseOfTheSameHolderIsRefusedNamingAsLock() {
        try (Lease lease = first.acquire("adapter:twice", TTL, Duration.ZERO)) {
            assertThatThrownBy(() -> first.acquire("adapter:twice", TTL, Duration.ZERO))
                    .isInstanceOf(LockUnavailableException.class)
                    .hasMessageContaining("holder first")
                    .hasMessageContaining("this process")
                    .hasMessageContaining("not reentrant")
                    .hasMessageContaining("asLock(");
            assertThatThrownBy(() -> second.acquire("adapter:twice", TTL, Duration.ZERO))
                    .isInstanceOf(LockUnavailableException.class)
                    .hasMessageContaining("holder first")
                    .message()
                    .doesNotContain("asLock(");
        }
    }

    private static long setCalls() {
        long calls = 0;
        for (RedisServer node : redis.servers().servers()) {
            try (Jedis jedis = node.connect(Duration.ofSeconds(2))) {
                for (String line : jedis.info("commandstats").split("\r?\n")) {
                    if (line.startsWith("cmdstat_set:")) {
                        String part = line.substring(line.indexOf("calls=") + "calls=".length());
                        calls += Long.parseLong(part.substring(0, part.indexOf(',')));
                    }
                }
            }
        }
        return calls;
    }

    /** Whether the other client, in a thread of its own, takes the lock at once (and then unlocks). */
    private boolean theOtherClientTakesAndReleases() throws Exception {
        return inThread(() -> {
                    boolean got = theirs.tryLock();
                    if (got) {
                        theirs.unlock();
                    }
                    return got;
                })
                .get();
    }

    private interface Call<T> {
        T call() throws Exception;
    }

    private static <T> CompletableFuture<T> inThread(Call<T> call) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                result.complete(call.call());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        thread.setDaemon(true);
        thread.start();
        return result;
    }
}
