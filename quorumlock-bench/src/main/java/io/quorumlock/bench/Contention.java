package io.quorumlock.bench;

import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.ServerAnswer;
import io.quorumlock.redis.Redlock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;
import redis.clients.jedis.JedisPool;

/**
 * Several clients, each with its own lock client as separate service instances would have, contend
 * for ONE resource. Each loops: acquire (one attempt; after a failed one, the same jittered backoff
 * for every library, {@link RetryPolicy#delayAfter}), a short critical section that checks that
 * nobody else is in it, release. Counted over a fixed time after a warm-up: wins per client, failed
 * attempts, overlaps (two clients in the critical section at once: must be 0) and, for quorumlock,
 * split votes: failed attempts in which fewer than a quorum of nodes was held by another client, so
 * that nobody may have won.
 */
@SuppressWarnings("deprecation") // JedisPool, for the article's sequential Redlock
final class Contention {

    /**
     * The backoff of every library here: from 1 ms, doubling, up to 10 ms, with full jitter. With
     * it the sequential reference reproduces the anchors of the benchmark issue (about 950 wins/s,
     * fairness about 0.75); much shorter delays make 8 clients on 2 cores burn the CPU on failed
     * attempts, much longer ones let the releasing client win again and again (the library's
     * default of 10..200 ms gives a fairness under 0.5 for both).
     */
    static final RetryPolicy BACKOFF = RetryPolicy.jitteredBackoff(Duration.ofMillis(1), Duration.ofMillis(10));

    /** How long a client stays in the critical section: long enough for an overlap to be seen. */
    static final long CRITICAL_SECTION_NANOS = 20_000;

    private static final String RESOURCE = "bench:contention";
    private static final long JOIN_TIMEOUT_MILLIS = 10_000;

    /** One contending client. */
    interface Client extends AutoCloseable {
        /** One attempt: WON (holding the lock now), HELD, or SPLIT (nobody held a quorum; quorumlock only). */
        Attempt attempt();

        /** Releases the lock won by the last attempt. */
        void release();

        @Override
        void close();
    }

    enum Attempt {
        WON,
        HELD,
        SPLIT
    }

    private Contention() {}

    /** The backoff, for the results file. */
    static String backoffText() {
        return String.format(
                java.util.Locale.ROOT,
                "RetryPolicy.jitteredBackoff(%d us, %d us), slept with LockSupport.parkNanos",
                BACKOFF.minDelay().toNanos() / 1000,
                BACKOFF.maxDelay().toNanos() / 1000);
    }

    /** A quorumlock client: {@code acquire(resource, ttl, 0)} is one attempt whose failure carries the votes. */
    static Client quorumlock(List<String> uris) {
        return quorumlock(Clients.quorumlockBuilder(uris).retry(BACKOFF).build(), Duration.ZERO);
    }

    /**
     * A quorumlock client that waits as the library does: {@code acquire(resource, ttl, maxWait)}
     * with the library's defaults, woken by releases, its backoff after split votes its own. Every
     * attempt wins, so failed attempts are not seen; the waits are.
     */
    static Client waiting(List<String> uris) {
        return quorumlock(Clients.quorumlockBuilder(uris).build(), WAIT);
    }

    private static Client quorumlock(Redlock redlock, Duration maxWait) {
        return new Client() {
            private Lease lease;

            @Override
            public Attempt attempt() {
                try {
                    lease = redlock.acquire(RESOURCE, Trial.TTL, maxWait);
                    return Attempt.WON;
                } catch (LockUnavailableException e) {
                    long held = e.lastAttempt().stream()
                            .filter(o -> o.kind() == ServerAnswer.Kind.HELD_BY_OTHER)
                            .count();
                    return held < e.quorum() ? Attempt.SPLIT : Attempt.HELD;
                }
            }

            @Override
            public void release() {
                lease.release();
                lease = null;
            }

            @Override
            public void close() {
                redlock.close();
            }
        };
    }

    /** How long a waiting client waits at most: far more than 8 clients' turns take. */
    static final Duration WAIT = Duration.ofSeconds(10);

    /** The article's sequential Redlock; it does not say why an attempt failed, so no split votes. */
    static Client sequential(List<String> uris) {
        List<JedisPool> pools = new ArrayList<>();
        SequentialRedlock redlock = Clients.sequentialRedlock(uris, pools);
        return new Client() {
            private SequentialRedlock.LockHandle handle;

            @Override
            public Attempt attempt() {
                Optional<SequentialRedlock.LockHandle> taken = redlock.tryLock(RESOURCE, Trial.TTL.toMillis());
                handle = taken.orElse(null);
                return taken.isPresent() ? Attempt.WON : Attempt.HELD;
            }

            @Override
            public void release() {
                redlock.unlock(handle);
                handle = null;
            }

            @Override
            public void close() {
                pools.forEach(JedisPool::close);
            }
        };
    }

    /**
     * Runs the contention and returns its row.
     *
     * @param library the library's name, for the row
     * @param factory makes client number i (0-based)
     * @param nodes how many nodes the clients use
     * @param clients how many clients (threads)
     * @param warmup how long to run before counting
     * @param measure how long to count
     * @param progress where to show the running count
     * @param splitVotes whether the library reports split votes
     */
    static CaseResult run(
            String library,
            IntFunction<Client> factory,
            int nodes,
            int clients,
            Duration warmup,
            Duration measure,
            Progress progress,
            boolean splitVotes) {
        List<Client> built = new ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) {
                built.add(factory.apply(i));
            }
            Shared shared = new Shared(clients);
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                int index = i;
                Client client = built.get(i);
                Thread thread = new Thread(() -> loop(client, index, shared), "bench-contender-" + (i + 1));
                thread.setDaemon(true);
                threads.add(thread);
            }
            threads.forEach(Thread::start);
            sleepShowing(warmup, shared, progress, "warm-up");
            shared.measuring = true;
            long start = System.nanoTime();
            sleepShowing(measure, shared, progress, "measuring");
            shared.measuring = false;
            double seconds = (System.nanoTime() - start) / 1e9;
            shared.stop = true;
            for (Thread thread : threads) {
                thread.join(JOIN_TIMEOUT_MILLIS);
                if (thread.isAlive()) {
                    return CaseResult.failed(
                            Plan.CONTENTION, library, nodes, clients, thread.getName() + " did not stop");
                }
            }
            if (shared.error.get() != null) {
                return CaseResult.failed(Plan.CONTENTION, library, nodes, clients, shared.error.get());
            }
            return result(library, nodes, clients, shared, seconds, splitVotes);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return CaseResult.failed(Plan.CONTENTION, library, nodes, clients, "interrupted");
        } catch (RuntimeException e) {
            return CaseResult.failed(Plan.CONTENTION, library, nodes, clients, e.toString());
        } finally {
            built.forEach(Client::close);
        }
    }

    private static CaseResult result(
            String library, int nodes, int clients, Shared shared, double seconds, boolean splitVotes) {
        long wins = 0;
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < clients; i++) {
            long w = shared.wins[i].get();
            wins += w;
            min = Math.min(min, w);
            max = Math.max(max, w);
        }
        long failed = shared.failedAttempts.get();
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("wins", wins);
        extra.put("fairness", max == 0 ? 0.0 : JmhCases.round((double) min / max, 3));
        extra.put("min_wins_per_client", min);
        extra.put("max_wins_per_client", max);
        extra.put("overlaps", shared.overlaps.get());
        extra.put("failed_attempts", failed);
        if (splitVotes) {
            extra.put("split_votes", shared.splitVotes.get());
            extra.put(
                    "split_vote_rate",
                    failed == 0 ? 0.0 : JmhCases.round((double) shared.splitVotes.get() / failed, 4));
        }
        long[] waits = shared.waits.stream().mapToLong(Long::longValue).sorted().toArray();
        if (waits.length > 0) {
            // A hand-off: the mean time between two wins; a waiter's wait in hand-offs says how many turns it let pass.
            double handOffNanos = seconds * 1e9 / Math.max(1, wins);
            long p99 = waits[(int) Math.min(waits.length - 1, Math.ceil(waits.length * 0.99) - 1)];
            extra.put("wait_p50_us", waits[waits.length / 2] / 1000);
            extra.put("wait_p99_us", p99 / 1000);
            extra.put("wait_p99_hand_offs", JmhCases.round(p99 / handOffNanos, 1));
        }
        extra.put("seconds", JmhCases.round(seconds, 2));
        return new CaseResult(
                Plan.CONTENTION, library, nodes, clients, wins / seconds, null, null, null, extra, null, null);
    }

    private static void loop(Client client, int index, Shared shared) {
        try {
            while (!shared.stop) {
                int failures = 0;
                Attempt attempt;
                long asked = System.nanoTime();
                while ((attempt = client.attempt()) != Attempt.WON) {
                    failures++;
                    if (shared.measuring) {
                        shared.failedAttempts.incrementAndGet();
                        if (attempt == Attempt.SPLIT) {
                            shared.splitVotes.incrementAndGet();
                        }
                    }
                    if (shared.stop) {
                        return;
                    }
                    LockSupport.parkNanos(BACKOFF.delayAfter(failures).toNanos());
                }
                if (shared.inCriticalSection.incrementAndGet() != 1) {
                    shared.overlaps.incrementAndGet();
                }
                long until = System.nanoTime() + CRITICAL_SECTION_NANOS;
                while (System.nanoTime() - until < 0) {
                    Thread.onSpinWait();
                }
                shared.inCriticalSection.decrementAndGet();
                client.release();
                if (shared.measuring) {
                    shared.wins[index].incrementAndGet();
                    shared.waits.add(System.nanoTime() - asked);
                }
            }
        } catch (RuntimeException e) {
            shared.error.compareAndSet(null, Thread.currentThread().getName() + ": " + e);
            shared.stop = true;
        }
    }

    private static void sleepShowing(Duration time, Shared shared, Progress progress, String phase)
            throws InterruptedException {
        long end = System.nanoTime() + time.toNanos();
        long left;
        while ((left = end - System.nanoTime()) > 0 && !shared.stop) {
            long total = 0;
            for (AtomicLong w : shared.wins) {
                total += w.get();
            }
            progress.status(phase + (shared.measuring ? ", " + Report.count(total) + " wins" : ""));
            Thread.sleep(Math.min(250, Math.max(1, left / 1_000_000)));
        }
    }

    private static final class Shared {
        final AtomicLong[] wins;
        final AtomicLong failedAttempts = new AtomicLong();
        final AtomicLong splitVotes = new AtomicLong();
        final AtomicLong overlaps = new AtomicLong();
        /** From a client's first attempt to its win, for each win counted. */
        final java.util.concurrent.ConcurrentLinkedQueue<Long> waits =
                new java.util.concurrent.ConcurrentLinkedQueue<>();

        final AtomicInteger inCriticalSection = new AtomicInteger();
        final java.util.concurrent.atomic.AtomicReference<String> error =
                new java.util.concurrent.atomic.AtomicReference<>();
        volatile boolean measuring;
        volatile boolean stop;

        Shared(int clients) {
            wins = new AtomicLong[clients];
            for (int i = 0; i < clients; i++) {
                wins[i] = new AtomicLong();
            }
        }
    }
}
