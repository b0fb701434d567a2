package io.quorumlock.bench;

import io.quorumlock.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the nodes themselves can answer: {@code SET} requests per second, pipelined {@link #DEPTH}
 * deep on one connection per node and thread, from one thread per core of the bench's JVM. A lock
 * cycle is at least two requests per node, so half of this per node is what no client can pass.
 */
final class ServerCapacity {

    /** Requests in flight per connection. */
    static final int DEPTH = 64;

    private ServerCapacity() {}

    static CaseResult run(List<RedisServer> nodes, Duration warmup, Duration time) {
        List<String> uris = nodes.stream().map(RedisServer::uri).toList();
        int threads = Runtime.getRuntime().availableProcessors();
        AtomicLong requests = new AtomicLong();
        long start = System.nanoTime() + warmup.toNanos();
        long end = start + time.toNanos();
        List<Thread> workers = new ArrayList<>();
        String[] error = {null};
        for (int t = 0; t < threads; t++) {
            String key = "bench:capacity:" + t;
            Thread worker = new Thread(
                    () -> {
                        RawFanout.Request batch = new RawFanout.Request();
                        batch.start(3).arg("SET").arg(key).arg("x").repeat(DEPTH);
                        try (RawFanout all = new RawFanout(uris)) {
                            for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
                                all.pipeline(batch, DEPTH);
                                if (now >= start) {
                                    requests.addAndGet((long) DEPTH * uris.size());
                                }
                            }
                        } catch (RuntimeException e) {
                            error[0] = e.toString();
                        }
                    },
                    "bench-capacity-" + t);
            worker.start();
            workers.add(worker);
        }
        for (Thread worker : workers) {
            try {
                worker.join(warmup.plus(time).toMillis() + 30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        nodes.forEach(RedisServer::flushAll);
        if (error[0] != null) {
            return CaseResult.failed(Plan.CAPACITY, Plan.PIPELINED, nodes.size(), threads, error[0]);
        }
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("pipeline_depth", DEPTH);
        double perSecond = requests.get() / (time.toNanos() / 1e9);
        extra.put("set_per_s_per_node", perSecond / nodes.size());
        return new CaseResult(
                Plan.CAPACITY, Plan.PIPELINED, nodes.size(), threads, perSecond, null, null, null, extra, null, null);
    }
}
