package io.quorumlock.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.DistributedLock;
import io.quorumlock.DistributedReadWriteLock;
import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.jdbc.StaleTokenException;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The read-write lock on every backend, on real servers: readers share, a writer is alone, a
 * waiting writer goes before the readers that come after it, and on the fenced backends each
 * writer's token is larger than the last one's, which a fence checks.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DistributedReadWriteLockIT extends OnEveryBackend {

    private static final Duration TTL = Duration.ofSeconds(10);

    private final String name = "catalog-" + UUID.randomUUID().toString().substring(0, 8);

    private DistributedReadWriteLock<Lease> rw(Backend backend, String holder) throws Exception {
        return DistributedReadWriteLock.of(lock(backend, holder), name, 3);
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void readersShareAndAWriterIsAlone(Backend backend) throws Exception {
        DistributedReadWriteLock<Lease> a = rw(backend, "host-a");
        DistributedReadWriteLock<Lease> b = rw(backend, "host-b");
        DistributedReadWriteLock<Lease> c = rw(backend, "host-c");

        Lease readA = a.acquireRead(TTL, Duration.ZERO);
        Lease readB = b.tryAcquireRead(TTL).orElseThrow();
        assertThat(c.tryAcquireWrite(TTL)).as("a writer beside two readers").isEmpty();
        assertThatThrownBy(() -> c.acquireWrite(TTL, Duration.ofMillis(100)))
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining(name + "#read#");
        readA.release();
        readB.release();

        Lease write = c.acquireWrite(TTL, Duration.ZERO);
        assertThat(write.resource()).isEqualTo(name);
        assertThat(write.isValid()).isTrue();
        assertThat(a.tryAcquireRead(TTL)).as("a reader beside a writer").isEmpty();
        assertThat(b.tryAcquireWrite(TTL)).as("a second writer").isEmpty();
        assertThat(write.extend(TTL)).isTrue();
        write.release();
        assertThat(write.isValid()).isFalse();

        try (Lease read = a.tryAcquireRead(TTL).orElseThrow()) {
            assertThat(read.resource()).isEqualTo(name);
            assertThat(read).isInstanceOf(backend.fenced() ? FencedLease.class : Lease.class);
        }
    }

    @ParameterizedTest
    @EnumSource(Backend.class)
    void aWaitingWriterGoesBeforeTheReadersThatCameAfterIt(Backend backend) throws Exception {
        DistributedReadWriteLock<Lease> reader = rw(backend, "reader");
        DistributedReadWriteLock<Lease> writer = rw(backend, "writer");
        DistributedReadWriteLock<Lease> late = rw(backend, "late-reader");
        DistributedLock<Lease> look = lock(backend, "look");
        Lease read = reader.acquireRead(TTL, Duration.ZERO);

        List<String> order = new ArrayList<>();
        Duration wait = TestTime.scaled(Duration.ofSeconds(30));
        CompletableFuture<Lease> write = CompletableFuture.supplyAsync(() -> {
            Lease lease = writer.acquireWrite(TTL, wait);
            synchronized (order) {
                order.add("writer");
            }
            return lease;
        });
        TestTime.await(wait, () -> look.holder(name + "#write").isPresent(), "the writer waiting for the reader");
        assertThat(late.tryAcquireRead(TTL)).as("a reader while a writer waits").isEmpty();
        CompletableFuture<Lease> lateRead = CompletableFuture.supplyAsync(() -> {
            Lease lease = late.acquireRead(TTL, wait);
            synchronized (order) {
                order.add("late reader");
            }
            return lease;
        });

        read.release();
        Lease written = write.get(60, TimeUnit.SECONDS);
        assertThat(lateRead).as("the late reader waits for the writer").isNotDone();
        written.release();
        lateRead.get(60, TimeUnit.SECONDS).release();
        assertThat(order).containsExactly("writer", "late reader");
    }

    /** Four processes read and write at random: a writer is never beside anyone. */
    @ParameterizedTest
    @EnumSource(Backend.class)
    void neverAWriterBesideAReaderOrAnotherWriter(Backend backend) throws Exception {
        AtomicInteger readers = new AtomicInteger();
        AtomicInteger writers = new AtomicInteger();
        AtomicReference<String> overlap = new AtomicReference<>();
        AtomicInteger writes = new AtomicInteger();
        List<DistributedReadWriteLock<Lease>> processes = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            processes.add(rw(backend, "host-" + p));
        }
        ExecutorService threads = Executors.newFixedThreadPool(processes.size());
        try {
            List<Future<?>> done = new ArrayList<>();
            for (DistributedReadWriteLock<Lease> process : processes) {
                done.add(threads.submit(() -> {
                    for (int r = 0; r < 6; r++) {
                        boolean writing = ThreadLocalRandom.current().nextInt(3) == 0;
                        Duration wait = TestTime.scaled(Duration.ofSeconds(30));
                        try (Lease lease = writing ? process.acquireWrite(TTL, wait) : process.acquireRead(TTL, wait)) {
                            int w = writing ? writers.incrementAndGet() : writers.get();
                            int rd = writing ? readers.get() : readers.incrementAndGet();
                            if (w > 1 || (w == 1 && rd > 0)) {
                                overlap.compareAndSet(null, w + " writers beside " + rd + " readers");
                            }
                            Thread.sleep(10);
                            if (writing) {
                                writes.incrementAndGet();
                                writers.decrementAndGet();
                            } else {
                                readers.decrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> each : done) {
                each.get(90, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(overlap.get()).isNull();
    }

    @ParameterizedTest
    @EnumSource(
            value = Backend.class,
            names = {"ZOOKEEPER", "ETCD", "POSTGRESQL", "MARIADB"})
    void eachWriterHasALargerTokenAndAPausedWritersLateWriteIsRefused(Backend backend) throws Exception {
        FencedStore store = new FencedStore();
        DistributedReadWriteLock<Lease> first = rw(backend, "host-a");
        DistributedReadWriteLock<Lease> second = rw(backend, "host-b");

        FencedLease paused = (FencedLease) first.acquireWrite(TTL, Duration.ZERO);
        store.write(paused.resource(), paused.fencingToken());
        paused.release(); // as its leases end while its writer is paused
        FencedLease next = (FencedLease) second.acquireWrite(TTL, Duration.ZERO);
        assertThat(next.fencingToken()).isGreaterThan(paused.fencingToken());
        store.write(next.resource(), next.fencingToken());
        assertThatThrownBy(() -> store.write(paused.resource(), paused.fencingToken()))
                .isInstanceOf(StaleTokenException.class);
        assertThat(next.lost()).isNotDone();
        next.release();
    }

    /**
     * A writer paused past its lease whose late write comes after a reader took the lock: the
     * reader's read lease carries a token of the writers' sequence, newer than the paused writer's,
     * so a reader that reads through the fence ({@code JdbcFence.raise}) makes the late write
     * refused, while readers never refuse each other (found by the torture: a torn read on
     * ZooKeeper, the late write landing between a reader's two reads).
     */
    @ParameterizedTest
    @EnumSource(
            value = Backend.class,
            names = {"ZOOKEEPER", "ETCD", "POSTGRESQL", "MARIADB"})
    void aReaderThatReadsThroughTheFenceMakesAPausedWritersLateWriteRefused(Backend backend) throws Exception {
        FencedStore store = new FencedStore();
        DistributedReadWriteLock<Lease> writer = rw(backend, "writer");
        DistributedReadWriteLock<Lease> reader = rw(backend, "reader");

        FencedLease paused = (FencedLease) writer.acquireWrite(TTL, Duration.ZERO);
        store.write(paused.resource(), paused.fencingToken());
        paused.release(); // as its leases end while its writer is paused

        Lease read = reader.acquireRead(TTL, Duration.ZERO);
        assertThat(read).as("a read lease on a fenced backend").isInstanceOf(FencedLease.class);
        FencedLease fencedRead = (FencedLease) read;
        assertThat(fencedRead.resource()).isEqualTo(name);
        assertThat(fencedRead.fencingToken()).isGreaterThan(paused.fencingToken());
        // A second reader took its token after the first and reads first: neither read is refused.
        FencedLease second = (FencedLease) rw(backend, "reader-2").acquireRead(TTL, Duration.ZERO);
        assertThat(second.fencingToken()).isGreaterThan(fencedRead.fencingToken());
        store.read(second);
        store.read(fencedRead); // the first reader's read, through the fence
        second.release();

        assertThatThrownBy(() -> store.write(paused.resource(), paused.fencingToken()))
                .as("the paused writer's late write")
                .isInstanceOf(StaleTokenException.class);
        read.release();
    }

    @Test
    void badSettingsAreRefusedNamingThem() throws Exception {
        DistributedLock<Lease> lock = lock(Backend.REDIS, "host-a");
        assertThatThrownBy(() -> DistributedReadWriteLock.of(lock, name, 0))
                .isInstanceOf(IllegalSettingException.class)
                .hasMessage("maxReaders must be 1 to 64 (a writer takes a permit of each reader), was 0");
        assertThat(DistributedReadWriteLock.of(lock, name, 2))
                .hasToString("DistributedReadWriteLock[" + name + ", 2 readers]");
    }

    /**
     * A reader whose lock refuses it {@code NAME#write} for a moment while a wait for it is granted
     * at once (a lock whose answers disagree) ends at its wait, refused, rather than trying for ever.
     */
    @Test
    void aReaderThatKeepsSeeingAWriterEndsAtItsWait() throws Exception {
        DistributedLock<Lease> real = lock(Backend.REDIS, "host-a");
        DistributedLock<Lease> lagging = new DistributedLock<>() {
            @Override
            public java.util.Optional<Lease> tryAcquire(String resource, Duration ttl) {
                return resource.endsWith("#write") ? java.util.Optional.empty() : real.tryAcquire(resource, ttl);
            }

            @Override
            public Lease acquire(String resource, Duration ttl, Duration maxWait) {
                return real.acquire(resource, ttl, maxWait);
            }

            @Override
            public <T, X extends Exception> T withLease(
                    String resource, Duration ttl, Duration maxWait, io.quorumlock.LeasedSection<Lease, T, X> work)
                    throws X {
                return real.withLease(resource, ttl, maxWait, work);
            }

            @Override
            public Duration lossNotice(Duration ttl) {
                return real.lossNotice(ttl);
            }

            @Override
            public java.util.Optional<io.quorumlock.LockHolder> holder(String resource) {
                return resource.endsWith("#write")
                        ? java.util.Optional.of(
                                new io.quorumlock.LockHolder("a writer gone", java.util.OptionalLong.empty()))
                        : real.holder(resource);
            }

            @Override
            public void close() {}
        };
        DistributedReadWriteLock<Lease> rw = DistributedReadWriteLock.of(lagging, name, 2);
        CompletableFuture<Lease> read =
                CompletableFuture.supplyAsync(() -> rw.acquireRead(TTL, Duration.ofMillis(200)));
        assertThatThrownBy(
                        () -> read.get(TestTime.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS))
                .as("refused at its wait, not retried for ever")
                .hasCauseInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("a writer gone");
        read.cancel(true);
    }
}
