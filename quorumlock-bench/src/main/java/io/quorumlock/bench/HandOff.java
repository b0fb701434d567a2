package io.quorumlock.bench;

import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The hand-off of one lock between two clients of one library, each with a client of its own as two
 * service instances would have: the holder takes the free lock; the waiter calls its library's
 * waiting acquire with a generous maximum wait ({@link #MAX_WAIT}); the holder releases at a random
 * moment {@link #HOLD_MIN} to {@link #HOLD_MIN} + {@link #HOLD_SPREAD} after the waiter's call, so
 * that the release falls anywhere in the waiter's polling; the time from the holder's release call
 * to the waiter's grant is one sample. The waiter then releases, and the next hand-off starts.
 * Hand-offs released 1 to 2 ms after the waiter's call are run first, for up to {@link #WARM_UP},
 * and not counted (connections, the JIT). A grant before the release call is an overlap, counted
 * apart (must be 0).
 */
final class HandOff {

    /** How long the waiter may wait: far more than any hand-off takes. */
    static final Duration MAX_WAIT = Duration.ofSeconds(10);

    /** The least time between the waiter's call and the holder's release: its first attempt is refused. */
    static final Duration HOLD_MIN = Duration.ofMillis(20);

    /** The spread of the release moment past {@link #HOLD_MIN}, uniform. */
    static final Duration HOLD_SPREAD = Duration.ofMillis(400);

    /** The longest warm-up of a library before its counted hand-offs. */
    static final Duration WARM_UP = Duration.ofSeconds(1);

    private static final long WARM_UP_PER_HAND_OFF_NANOS = TimeUnit.MILLISECONDS.toNanos(60);
    private static final long WARM_UP_HOLD_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private static final String RESOURCE = "bench:hand-off";
    private static final long JOIN_MARGIN_MILLIS = 5_000;

    /** One client of a library: a holder or a waiter. */
    interface Client extends AutoCloseable {
        /** One attempt, no waiting: true if this client holds the lock now. */
        boolean tryLock(String resource);

        /** The library's own waiting acquire, up to {@code maxWait}: true if this client holds the lock now. */
        boolean await(String resource, Duration maxWait) throws InterruptedException;

        /** Releases the lock this client holds, from the thread that took it. */
        void unlock();

        /**
         * One acquire and release of a free resource, as the cycle rows measure it: by default
         * {@link #tryLock} then {@link #unlock}. True if this client held the lock.
         */
        default boolean cycle(String resource) {
            if (!tryLock(resource)) {
                return false;
            }
            unlock();
            return true;
        }

        @Override
        void close();
    }

    /** A client over one of quorumlock's locks, which it closes with itself. */
    static Client quorumlock(DistributedLock<? extends Lease> lock) {
        return new Client() {
            private Lease lease;

            @Override
            public boolean tryLock(String resource) {
                lease = lock.tryAcquire(resource, Trial.TTL).orElse(null);
                return lease != null;
            }

            @Override
            public boolean await(String resource, Duration maxWait) {
                try {
                    lease = lock.acquire(resource, Trial.TTL, maxWait);
                    return true;
                } catch (LockUnavailableException e) {
                    return false;
                }
            }

            @Override
            public void unlock() {
                lease.release();
                lease = null;
            }

            @Override
            public void close() {
                lock.close();
            }
        };
    }

    /** One attempt on a lock of a library, waiting up to {@code wait} (zero: no waiting). */
    interface Attempt<L extends Lock> {
        boolean tryLock(L lock, Duration wait) throws InterruptedException;
    }

    /**
     * A client over a registry of {@link Lock}s, such as Spring Integration's: {@code tryLock()},
     * {@code tryLock(maxWait)} and {@code unlock()} of the registry's lock for the resource.
     *
     * @param obtain the registry's lock for a resource
     * @param close closes what the client holds
     */
    static Client locks(Function<String, Lock> obtain, Runnable close) {
        return locks(
                obtain,
                (lock, wait) -> wait.isZero() ? lock.tryLock() : lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS),
                close);
    }

    /**
     * A client over a library's {@link Lock}s, each taken by {@code attempt} and released by
     * {@code unlock()}.
     *
     * @param obtain the library's lock for a resource
     * @param attempt takes a lock, waiting or not
     * @param close closes what the client holds
     */
    static <L extends Lock> Client locks(Function<String, L> obtain, Attempt<L> attempt, Runnable close) {
        return new Client() {
            private Lock held;

            @Override
            public boolean tryLock(String resource) {
                try {
                    return await(resource, Duration.ZERO);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                }
            }

            @Override
            public boolean await(String resource, Duration maxWait) throws InterruptedException {
                L lock = obtain.apply(resource);
                held = attempt.tryLock(lock, maxWait) ? lock : null;
                return held != null;
            }

            @Override
            public void unlock() {
                held.unlock();
                held = null;
            }

            @Override
            public void close() {
                close.run();
            }
        };
    }

    private HandOff() {}

    /** The hand-off setting, for the results file. */
    static String settingsText() {
        return String.format(
                java.util.Locale.ROOT,
                "waiter in its library's waiting acquire (max wait %d s); the holder releases %d to %d ms after"
                        + " the waiter's call; measured from the release call to the waiter's grant",
                MAX_WAIT.toSeconds(),
                HOLD_MIN.toMillis(),
                HOLD_MIN.plus(HOLD_SPREAD).toMillis());
    }

    /**
     * Runs {@code handOffs} counted hand-offs between a holder and a waiter of {@code library} and
     * returns their row.
     *
     * @param caseId the row's case, such as {@link Plan#DB_HAND_OFF}
     * @param library the library's name, for the row
     * @param nodes the servers behind the lock, for the row
     * @param factory makes a client of its own (called twice: the holder, the waiter)
     * @param waiting how the waiter waits, for the row's notes
     * @param handOffs how many hand-offs to count
     * @param progress where to show the count
     */
    static CaseResult run(
            String caseId,
            String library,
            int nodes,
            Supplier<Client> factory,
            String waiting,
            int handOffs,
            Progress progress) {
        return interleaved(List.of(new Series(caseId, library, nodes, factory, waiting, handOffs)), progress)
                .get(0);
    }

    /**
     * Runs the hand-offs of several libraries in turns, one hand-off of each per turn, in the
     * order given and then in reverse (A B, B A, A B, ...), so that what the machine does meanwhile
     * falls on all of them alike; returns their rows in the order given.
     */
    static List<CaseResult> interleaved(List<Series> series, Progress progress) {
        try {
            for (int turn = 0; series.stream().anyMatch(s -> !s.finished()); turn++) {
                List<Series> order = new ArrayList<>(series);
                if (turn % 2 == 1) {
                    Collections.reverse(order);
                }
                for (Series s : order) {
                    if (!s.finished()) {
                        progress.status(s.library + ": " + s.status());
                        s.step();
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            series.forEach(s -> s.fail("interrupted"));
        } finally {
            series.forEach(Series::close);
        }
        return series.stream().map(Series::result).toList();
    }

    /** One library's hand-offs: its holder and waiter, and the hand-offs measured so far. */
    static final class Series implements AutoCloseable {
        private final String caseId;
        private final String library;
        private final int nodes;
        private final String waiting;
        private final int handOffs;
        private final long[] samples;
        private final long[] releases;
        private Client holder;
        private Client waiter;
        /** The hand-offs done; -1 until the first, not counted, is done. */
        private int done = -1;

        private int overlaps;
        private String error;

        /**
         * Makes the holder and the waiter; a failure to make them is the row's error.
         *
         * @param caseId the row's case, such as {@link Plan#DB_HAND_OFF}
         * @param library the library's name, for the row
         * @param nodes the servers behind the lock, for the row
         * @param factory makes a client of its own (called twice: the holder, the waiter)
         * @param waiting how the waiter waits, for the row's notes
         * @param handOffs how many hand-offs to count
         */
        Series(String caseId, String library, int nodes, Supplier<Client> factory, String waiting, int handOffs) {
            this.caseId = caseId;
            this.library = library;
            this.nodes = nodes;
            this.waiting = waiting;
            this.handOffs = handOffs;
            this.samples = new long[handOffs];
            this.releases = new long[handOffs];
            try {
                holder = factory.get();
                waiter = factory.get();
            } catch (RuntimeException e) {
                error = e.toString();
            }
        }

        boolean finished() {
            return error != null || done >= handOffs;
        }

        String status() {
            return done < 0 ? "warm-up hand-offs" : "hand-off " + (done + 1) + " of " + handOffs;
        }

        void fail(String why) {
            if (error == null) {
                error = why;
            }
        }

        /**
         * The next hand-off; a failure ends the series with the error. The first step warms the
         * library up instead: hand-offs released 1 to 2 ms after the waiter's call, not counted,
         * for up to {@link #WARM_UP} (60 ms per counted hand-off, so a short run stays short), so
         * that the counted ones run compiled code rather than the JVM's interpreter.
         */
        void step() throws InterruptedException {
            long[] one;
            try {
                if (done < 0) {
                    long end = System.nanoTime() + Math.min(WARM_UP.toNanos(), handOffs * WARM_UP_PER_HAND_OFF_NANOS);
                    do {
                        once(holder, waiter, WARM_UP_HOLD_NANOS, WARM_UP_HOLD_NANOS);
                    } while (System.nanoTime() - end < 0);
                    done = 0;
                    return;
                }
                one = once(holder, waiter, HOLD_MIN.toNanos(), HOLD_SPREAD.toNanos());
            } catch (RuntimeException e) {
                error = e.toString();
                return;
            }
            long afterRelease = one[1] - one[0];
            if (afterRelease < 0) {
                overlaps++;
            }
            samples[done] = Math.max(0, afterRelease);
            releases[done] = one[2] - one[0];
            done++;
        }

        CaseResult result() {
            if (error != null) {
                return CaseResult.failed(caseId, library, nodes, 2, error);
            }
            long[] sorted = samples.clone();
            long[] sortedReleases = releases.clone();
            Arrays.sort(sorted);
            Arrays.sort(sortedReleases);
            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put("hand_offs", handOffs);
            extra.put("waiting", waiting);
            extra.put(
                    "hold_ms",
                    HOLD_MIN.toMillis() + "-" + HOLD_MIN.plus(HOLD_SPREAD).toMillis());
            extra.put("hand_off_max_us", ManyCallers.percentile(sorted, 1.0));
            extra.put("release_p50_us", ManyCallers.percentile(sortedReleases, 0.50));
            extra.put("overlaps", overlaps);
            return new CaseResult(
                    caseId,
                    library,
                    nodes,
                    2,
                    null,
                    ManyCallers.percentile(sorted, 0.50),
                    ManyCallers.percentile(sorted, 0.99),
                    null,
                    extra,
                    null,
                    null);
        }

        @Override
        public void close() {
            try {
                if (holder != null) {
                    holder.close();
                }
            } finally {
                holder = null;
                if (waiter != null) {
                    waiter.close();
                }
                waiter = null;
            }
        }
    }

    /**
     * Sleeps until a random moment {@code minNanos} to {@code minNanos + spreadNanos} after {@code
     * fromNanos} (by {@link System#nanoTime()}): a holder's hold.
     */
    static void holdUntil(long fromNanos, long minNanos, long spreadNanos) {
        long at = fromNanos + minNanos + ThreadLocalRandom.current().nextLong(spreadNanos + 1);
        for (long left = at - System.nanoTime(); left > 0; left = at - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    /**
     * One hand-off; the holder takes and releases on this thread, the waiter on a thread of its own.
     *
     * @return the release call's start, the waiter's grant and the release call's return, by {@link System#nanoTime()}
     */
    private static long[] once(Client holder, Client waiter, long holdMinNanos, long holdSpreadNanos)
            throws InterruptedException {
        if (!holder.tryLock(RESOURCE)) {
            throw new IllegalStateException("the holder could not take the free lock '" + RESOURCE + "'");
        }
        CountDownLatch calling = new CountDownLatch(1);
        long[] called = new long[1];
        long[] granted = new long[1];
        AtomicReference<String> failure = new AtomicReference<>();
        Thread thread = new Thread(
                () -> {
                    try {
                        called[0] = System.nanoTime();
                        calling.countDown();
                        if (!waiter.await(RESOURCE, MAX_WAIT)) {
                            failure.set("the waiter was not granted the lock within " + MAX_WAIT.toSeconds() + " s");
                            return;
                        }
                        granted[0] = System.nanoTime();
                        waiter.unlock();
                    } catch (InterruptedException e) {
                        failure.set("the waiter was interrupted");
                    } catch (RuntimeException e) {
                        failure.compareAndSet(null, "the waiter: " + e);
                    }
                },
                "bench-waiter");
        thread.setDaemon(true);
        thread.start();
        long release;
        long released;
        try {
            calling.await();
            holdUntil(called[0], holdMinNanos, holdSpreadNanos);
        } finally {
            release = System.nanoTime();
            holder.unlock();
            released = System.nanoTime();
        }
        thread.join(MAX_WAIT.toMillis() + JOIN_MARGIN_MILLIS);
        if (thread.isAlive()) {
            thread.interrupt();
            throw new IllegalStateException("the waiter did not return within "
                    + TimeUnit.MILLISECONDS.toSeconds(MAX_WAIT.toMillis() + JOIN_MARGIN_MILLIS) + " s");
        }
        if (failure.get() != null) {
            throw new IllegalStateException(failure.get());
        }
        return new long[] {release, granted[0], released};
    }
}
