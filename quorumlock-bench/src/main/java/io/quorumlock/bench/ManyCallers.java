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
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.Jedis;

/**
 * Many threads share ONE quorumlock client, each locking a resource of its own, as the worker pool
 * of one service would: cycles per second and cycle times over a fixed time after a warm-up, cycles
 * not acquired (must be none: a free lock is never refused because the client is busy), and the
 * connections the client opened per node (at most its {@code maxConnectionsPerNode}, 8).
 */
final class ManyCallers {

    private static final long JOIN_TIMEOUT_MILLIS = 30_000;
    /** Each thread keeps at most this many cycle times: enough for the percentiles. */
    private static final int SAMPLES_PER_THREAD = 20_000;

    private ManyCallers() {}

    static CaseResult run(List<RedisServer> nodes, int threads, Duration warmup, Duration time) {
        List<String> uris = nodes.stream().map(RedisServer::uri).toList();
        try (Redlock redlock = Clients.quorumlock(uris)) {
            AtomicLong cycles = new AtomicLong();
            AtomicLong failures = new AtomicLong();
            long[][] samples = new long[threads][SAMPLES_PER_THREAD];
            int[] counts = new int[threads];
            long start = System.nanoTime() + warmup.toNanos();
            long end = start + time.toNanos();
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                String resource = "bench:many:" + t;
                Thread worker = new Thread(
                        () -> {
                            await(go);
                            for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
                                Optional<Lease> lease = redlock.tryAcquire(resource, Trial.TTL);
                                lease.ifPresent(Lease::release);
                                long took = System.nanoTime() - now;
                                if (now < start) {
                                    continue; // warm-up
                                }
                                if (lease.isEmpty()) {
                                    failures.incrementAndGet();
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
            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put("failures", failures.get());
            extra.put("connections_per_node", connectionsPerNode(nodes));
            return new CaseResult(
                    Plan.MANY,
                    Plan.QUORUMLOCK,
                    nodes.size(),
                    threads,
                    cycles.get() / (time.toNanos() / 1e9),
                    percentile(all, 0.50),
                    percentile(all, 0.99),
                    null,
                    extra,
                    null,
                    null);
        } catch (RuntimeException e) {
            return CaseResult.failed(Plan.MANY, Plan.QUORUMLOCK, nodes.size(), threads, e.toString());
        }
    }

    /** The most connections the client holds to one node, as the nodes count them (CLIENT LIST). */
    private static int connectionsPerNode(List<RedisServer> nodes) {
        int most = 0;
        for (RedisServer node : nodes) {
            try (Jedis jedis = node.connect(Duration.ofSeconds(2))) {
                int ours = (int) jedis.clientList()
                        .lines()
                        .filter(line -> line.contains(" name=quorumlock "))
                        .count();
                most = Math.max(most, ours);
            }
        }
        return most;
    }

    private static Double percentile(long[] sorted, double p) {
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
