package io.quorumlock.bench;

import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;

/**
 * Many threads of one process waiting on one resource of one lock instance, as the threads of a
 * busy service do: the bench's thread takes the lock; {@code threads} platform threads (virtual
 * threads need Java 21) call {@code acquire(resource, ttl, maxWait)} on the same instance; once the
 * servers hold all of them in the queue behind the holder (counted by the backend), the holder
 * releases, and the threads hand the lock on one by one, each releasing as soon as it is granted.
 * A sample is the time from one holder's release call to the next holder's grant. A grant before
 * the previous holder's release call is an overlap, counted apart (must be 0).
 */
final class QueuedHandOffs {

    /** How long the threads may take to be queued, all of them. */
    static final Duration QUEUE_TIMEOUT = Duration.ofSeconds(60);

    /** A thread's maximum wait: far more than the whole queue takes to drain. */
    static final Duration MAX_WAIT = Duration.ofMinutes(3);

    /** The stack of each waiting thread: they only wait, and a thousand default stacks is a lot to reserve. */
    private static final long STACK_BYTES = 256 * 1024;

    private static final long POLL_MILLIS = 50;
    private static final long JOIN_MARGIN_MILLIS = 10_000;

    private QueuedHandOffs() {}

    /**
     * Runs the queue and returns its row.
     *
     * @param caseId the row's case, such as {@link Plan#ZK_QUEUE}
     * @param nodes the servers behind the lock, for the row
     * @param lock the one lock instance every thread uses; not closed here
     * @param resource the resource they queue on
     * @param threads how many threads queue
     * @param queued how many contenders (holder included) the servers have for the resource now
     * @param waiting how the threads wait, for the row's notes
     * @param progress where to show the count
     */
    static CaseResult run(
            String caseId,
            int nodes,
            DistributedLock<? extends Lease> lock,
            String resource,
            int threads,
            IntSupplier queued,
            String waiting,
            Progress progress) {
        Optional<? extends Lease> first;
        try {
            first = lock.tryAcquire(resource, Trial.TTL);
        } catch (RuntimeException e) {
            return CaseResult.failed(caseId, Plan.QUORUMLOCK, nodes, threads, "the holder: " + e);
        }
        if (first.isEmpty()) {
            return CaseResult.failed(
                    caseId,
                    Plan.QUORUMLOCK,
                    nodes,
                    threads,
                    "the holder could not take the free lock '" + resource + "'");
        }
        long[] grants = new long[threads + 1];
        long[] releases = new long[threads + 1];
        AtomicInteger turn = new AtomicInteger();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicReference<String> failure = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(threads);
        List<Thread> started = new ArrayList<>();
        long queuedNanos = 0;
        long start;
        long end;
        try {
            long calling = System.nanoTime();
            for (int i = 0; i < threads; i++) {
                Thread thread = new Thread(
                        null,
                        () -> {
                            try {
                                Lease lease = lock.acquire(resource, Trial.TTL, MAX_WAIT);
                                long granted = System.nanoTime();
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                int k = turn.incrementAndGet();
                                grants[k] = granted;
                                inside.decrementAndGet();
                                releases[k] = System.nanoTime();
                                lease.release();
                            } catch (RuntimeException e) {
                                failure.compareAndSet(
                                        null, Thread.currentThread().getName() + ": " + e);
                            } finally {
                                done.countDown();
                            }
                        },
                        "bench-queued-" + i,
                        STACK_BYTES);
                thread.setDaemon(true);
                thread.start();
                started.add(thread);
            }
            long deadline = calling + QUEUE_TIMEOUT.toNanos();
            for (int n = queued.getAsInt(); n < threads + 1; n = queued.getAsInt()) {
                if (failure.get() != null) {
                    break;
                }
                if (System.nanoTime() - deadline > 0) {
                    failure.compareAndSet(
                            null,
                            (n - 1) + " of " + threads + " threads queued within " + QUEUE_TIMEOUT.toSeconds() + " s");
                    break;
                }
                progress.status(caseId + ": " + Math.max(0, n - 1) + " of " + threads + " threads queued");
                Thread.sleep(POLL_MILLIS);
            }
            queuedNanos = System.nanoTime() - calling;
            progress.status(caseId + ": " + threads + " threads handing on");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure.compareAndSet(null, "interrupted");
        } finally {
            start = System.nanoTime();
            releases[0] = start;
            first.get().release();
        }
        try {
            if (!done.await(MAX_WAIT.toMillis() + JOIN_MARGIN_MILLIS, TimeUnit.MILLISECONDS)) {
                failure.compareAndSet(
                        null, (threads - done.getCount()) + " of " + threads + " threads done within " + MAX_WAIT);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure.compareAndSet(null, "interrupted");
        }
        end = System.nanoTime();
        if (failure.get() != null) {
            started.forEach(Thread::interrupt);
            return CaseResult.failed(caseId, Plan.QUORUMLOCK, nodes, threads, failure.get());
        }
        long[] samples = new long[threads];
        for (int k = 1; k <= threads; k++) {
            long handOff = grants[k] - releases[k - 1];
            if (handOff < 0) {
                overlaps.incrementAndGet();
            }
            samples[k - 1] = Math.max(0, handOff);
        }
        Arrays.sort(samples);
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("hand_offs", threads);
        extra.put("waiting", waiting);
        extra.put("queued_ms", JmhCases.round(queuedNanos / 1e6, 1));
        extra.put("total_ms", JmhCases.round((end - start) / 1e6, 1));
        extra.put("hand_off_max_us", ManyCallers.percentile(samples, 1.0));
        extra.put("overlaps", overlaps.get());
        return new CaseResult(
                caseId,
                Plan.QUORUMLOCK,
                nodes,
                threads,
                null,
                ManyCallers.percentile(samples, 0.50),
                ManyCallers.percentile(samples, 0.99),
                null,
                extra,
                null,
                null);
    }
}
