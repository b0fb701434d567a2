package io.quorumlock.bench;

import io.quorumlock.Lease;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * Many threads run lock cycles at once over 5 nodes, as the worker pool of one service would:
 * quorumlock with ONE client shared by all threads, {@code raw-fanout} with sockets of its own per
 * thread, RedissonRedLock with one Redisson client per node shared by all threads. Acquired
 * cycles per second and cycle times over a fixed time after a warm-up, cycles not acquired (none
 * on distinct resources: a free lock is never refused because the client is busy), and the
 * connections quorumlock's client opened per node (at most its {@code maxConnectionsPerNode}, 8).
 */
final class ManyCallers {

    private static final long JOIN_TIMEOUT_MILLIS = 30_000;
    /** Each thread keeps at most this many cycle times: enough for the percentiles. */
    private static final int SAMPLES_PER_THREAD = 20_000;

    /** One caller's lock cycle on a resource: true if it acquired (and released) the lock. */
    interface Caller extends AutoCloseable {
        boolean cycle(String resource);

        @Override
        default void close() {}
    }

    private ManyCallers() {}

    /**
     * Runs {@code threads} threads of {@code library} (quorumlock, raw-fanout or redisson-redlock)
     * on {@code resources} resources over the nodes {@code uris}, thread {@code t} on resource
     * {@code t % resources}; quorumlock's connections are counted on {@code counted} (the same
     * nodes, or none when they are behind proxies).
     */
    static CaseResult run(
            String caseId,
            String library,
            List<String> uris,
            List<RedisServer> counted,
            int threads,
            int resources,
            Duration warmup,
            Duration time) {
        Shared shared = new Shared(library, uris);
        List<Caller> callers = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                callers.add(shared.caller());
            }
            CaseResult result = measure(caseId, library, uris.size(), callers, resources, warmup, time);
            if (library.equals(Plan.QUORUMLOCK) && !counted.isEmpty()) {
                result.extra().put("connections_per_node", connectionsPerNode(counted));
            }
            return result;
        } catch (RuntimeException e) {
            return CaseResult.failed(caseId, library, uris.size(), threads, e.toString());
        } finally {
            callers.forEach(Caller::close);
            shared.close();
        }
    }

    /** What the callers of one library share: quorumlock's one client, Redisson's client per node. */
    private static final class Shared implements AutoCloseable {
        private final String library;
        private final List<String> uris;
        private final Redlock redlock;
        private final List<RedissonClient> redisson = new ArrayList<>();

        Shared(String library, List<String> uris) {
            this.library = library;
            this.uris = uris;
            this.redlock = library.equals(Plan.QUORUMLOCK) ? Clients.quorumlock(uris) : null;
            if (library.equals(Plan.REDLOCK)) {
                uris.forEach(uri -> redisson.add(Clients.redisson(uri)));
            }
        }

        Caller caller() {
            return switch (library) {
                case Plan.QUORUMLOCK ->
                    resource -> {
                        Optional<Lease> lease = redlock.tryAcquire(resource, Trial.TTL);
                        lease.ifPresent(Lease::release);
                        return lease.isPresent();
                    };
                case Plan.FANOUT -> fanout(new RawFanout(uris));
                case Plan.REDLOCK -> this::redissonCycle;
                default -> throw new IllegalArgumentException("no many-callers case for " + library);
            };
        }

        private static Caller fanout(RawFanout fanout) {
            return new Caller() {
                @Override
                public boolean cycle(String resource) {
                    String token = RawFanout.token();
                    return fanout.cycle(resource, token) >= fanout.quorum();
                }

                @Override
                public void close() {
                    fanout.close();
                }
            };
        }

        @SuppressWarnings("deprecation") // RedissonRedLock is deprecated, and it is what we compare against
        private boolean redissonCycle(String resource) {
            RedissonRedLock redLock = new RedissonRedLock(
                    redisson.stream().map(c -> c.getLock(resource)).toArray(RLock[]::new));
            try {
                if (!redLock.tryLock(-1, Trial.TTL.toMillis(), TimeUnit.MILLISECONDS)) {
                    return false;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            redLock.unlock();
            return true;
        }

        @Override
        public void close() {
            if (redlock != null) {
                redlock.close();
            }
            redisson.forEach(RedissonClient::shutdown);
        }
    }

    /** Runs every caller in a thread of its own, caller {@code t} on resource {@code t % resources}. */
    static CaseResult measure(
            String caseId,
            String library,
            int nodes,
            List<Caller> callers,
            int resources,
            Duration warmup,
            Duration time) {
        int threads = callers.size();
        AtomicLong cycles = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        String[] firstError = {null};
        long[][] samples = new long[threads][SAMPLES_PER_THREAD];
        int[] counts = new int[threads];
        long start = System.nanoTime() + warmup.toNanos();
        long end = start + time.toNanos();
        // A window in which no cycle has ended measures nothing (a short smoke window on a busy
        // machine, whose first cycles are slow): it then lasts until the first one ends.
        long latest = end + Math.max(20 * time.toNanos(), TimeUnit.SECONDS.toNanos(30));
        AtomicLong firstEnded = new AtomicLong(Long.MAX_VALUE);
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            Caller caller = callers.get(t);
            String resource = "bench:many:" + (t % resources);
            Thread worker = new Thread(
                    () -> {
                        await(go);
                        for (long now = System.nanoTime();
                                now < end || (firstEnded.get() == Long.MAX_VALUE && now < latest);
                                now = System.nanoTime()) {
                            boolean acquired;
                            try {
                                acquired = caller.cycle(resource);
                            } catch (RuntimeException e) {
                                if (errors.getAndIncrement() == 0) {
                                    firstError[0] = e.toString();
                                }
                                acquired = false;
                            }
                            long took = System.nanoTime() - now;
                            if (now < start) {
                                continue; // warm-up
                            }
                            firstEnded.accumulateAndGet(now + took, Math::min);
                            if (!acquired) {
                                failures.incrementAndGet();
                                continue;
                            }
                            cycles.incrementAndGet();
                            if (counts[me] < SAMPLES_PER_THREAD) {
                                samples[me][counts[me]++] = took;
                            }
                        }
                    },
                    "bench-many-" + t);
            worker.start();
            workers.add(worker);
        }
        go.countDown();
        for (Thread worker : workers) {
            join(worker);
        }
        long[] all = new long[Arrays.stream(counts).sum()];
        int at = 0;
        for (int t = 0; t < threads; t++) {
            System.arraycopy(samples[t], 0, all, at, counts[t]);
            at += counts[t];
        }
        Arrays.sort(all);
        long window = firstEnded.get() == Long.MAX_VALUE
                ? time.toNanos()
                : Math.max(time.toNanos(), firstEnded.get() - start);
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("resources", resources);
        extra.put("failures", failures.get());
        extra.put("errors", errors.get());
        if (firstError[0] != null) {
            extra.put("first_error", firstError[0]);
        }
        return new CaseResult(
                caseId,
                library,
                nodes,
                threads,
                cycles.get() / (window / 1e9),
                percentile(all, 0.50),
                percentile(all, 0.99),
                null,
                extra,
                null,
                null);
    }

    /** The most connections the client holds to one node, as the nodes count them (CLIENT LIST). */
    private static int connectionsPerNode(List<RedisServer> nodes) {
        return nodes.stream()
                .mapToInt(n -> n.connectionsNamed("quorumlock"))
                .max()
                .orElse(0);
    }

    static Double percentile(long[] sorted, double p) {
        return sorted.length == 0 ? null : sorted[(int) Math.min(sorted.length - 1, p * sorted.length)] / 1000.0;
    }

    private static void await(CountDownLatch go) {
        try {
            go.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void join(Thread worker) {
        try {
            worker.join(JOIN_TIMEOUT_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
