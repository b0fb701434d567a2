package io.quorumlock.bench;

import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The hand-off of one lock between two clients of one library, each with a client of its own as two
 * service instances would have: the holder takes the free lock; the waiter calls its library's
 * waiting acquire with a generous maximum wait ({@link #MAX_WAIT}); the holder releases at a random
 * moment {@link #HOLD_MIN} to {@link #HOLD_MIN} + {@link #HOLD_SPREAD} after the waiter's call, so
 * that the release falls anywhere in the waiter's polling; the time from the holder's release call
 * to the waiter's grant is one sample. The waiter then releases, and the next hand-off starts. One
 * hand-off is run first and not counted (connections, JIT). A grant before the release call is an
 * overlap, counted apart (must be 0).
 */
final class HandOff {

    /** How long the waiter may wait: far more than any hand-off takes. */
    static final Duration MAX_WAIT = Duration.ofSeconds(10);

    /** The least time between the waiter's call and the holder's release: its first attempt is refused. */
    static final Duration HOLD_MIN = Duration.ofMillis(20);

    /** The spread of the release moment past {@link #HOLD_MIN}, uniform. */
    static final Duration HOLD_SPREAD = Duration.ofMillis(400);

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

        @Override
        void close();
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
     * @param library the library's name, for the row
     * @param factory makes a client of its own (called twice: the holder, the waiter)
     * @param waiting how the waiter waits, for the row's notes
     * @param handOffs how many hand-offs to count
     * @param progress where to show the count
     */
    static CaseResult run(String library, Supplier<Client> factory, String waiting, int handOffs, Progress progress) {
        Client holder = null;
        Client waiter = null;
        try {
            holder = factory.get();
            waiter = factory.get();
            long[] samples = new long[handOffs];
            long[] releases = new long[handOffs];
            int overlaps = 0;
            for (int i = -1; i < handOffs; i++) {
                progress.status(i < 0 ? "warm-up hand-off" : "hand-off " + (i + 1) + " of " + handOffs);
                long[] one = once(holder, waiter);
                if (i < 0) {
                    continue;
                }
                long afterRelease = one[1] - one[0];
                if (afterRelease < 0) {
                    overlaps++;
                }
                samples[i] = Math.max(0, afterRelease);
                releases[i] = one[2] - one[0];
            }
            Arrays.sort(samples);
            Arrays.sort(releases);
            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put("hand_offs", handOffs);
            extra.put("waiting", waiting);
            extra.put(
                    "hold_ms",
                    HOLD_MIN.toMillis() + "-" + HOLD_MIN.plus(HOLD_SPREAD).toMillis());
            extra.put("hand_off_max_us", JmhCases.round(samples[handOffs - 1] / 1e3, 1));
            extra.put("release_p50_us", ManyCallers.percentile(releases, 0.50));
            extra.put("overlaps", overlaps);
            return new CaseResult(
                    Plan.DB_HAND_OFF,
                    library,
                    1,
                    2,
                    null,
                    ManyCallers.percentile(samples, 0.50),
                    ManyCallers.percentile(samples, 0.99),
                    null,
                    extra,
                    null,
                    null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return CaseResult.failed(Plan.DB_HAND_OFF, library, 1, 2, "interrupted");
        } catch (RuntimeException e) {
            return CaseResult.failed(Plan.DB_HAND_OFF, library, 1, 2, e.toString());
        } finally {
            if (holder != null) {
                holder.close();
            }
            if (waiter != null) {
                waiter.close();
            }
        }
    }

    /**
     * One hand-off; the holder takes and releases on this thread, the waiter on a thread of its own.
     *
     * @return the release call's start, the waiter's grant and the release call's return, by {@link System#nanoTime()}
     */
    private static long[] once(Client holder, Client waiter) throws InterruptedException {
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
            long at =
                    called[0] + HOLD_MIN.toNanos() + ThreadLocalRandom.current().nextLong(HOLD_SPREAD.toNanos() + 1);
            for (long left = at - System.nanoTime(); left > 0; left = at - System.nanoTime()) {
                LockSupport.parkNanos(left);
            }
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
