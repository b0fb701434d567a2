package io.quorumlock.bench;

import io.quorumlock.Lease;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.RedisServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import redis.clients.jedis.JedisPool;

/**
 * The 5 nodes behind the test kit's fault proxies, each adding {@link #LATENCY} each way: the
 * round trip (a PING's), then the cycle times of quorumlock, the sequential Redlock and
 * RedissonRedLock, one thread each; then quorumlock again with one node {@link #SLOW_NODE_EXTRA}
 * slower each way. A cycle needs two round trips at the least (the SET, the compare-and-delete).
 */
final class SlowNetwork {

    static final Duration LATENCY = Duration.ofMillis(1);
    static final Duration SLOW_NODE_EXTRA = Duration.ofMillis(20);
    /** The node made slower, of 5. */
    static final int SLOW_NODE = 4;

    private SlowNetwork() {}

    /** Runs the cases, adding each result to {@code results} as soon as it is measured. */
    @SuppressWarnings("deprecation") // JedisPool, as the article uses it
    static void run(RedisServers servers, Duration warmup, Duration time, Consumer<CaseResult> results) {
        int n = servers.servers().size();
        try (FaultProxies proxies = FaultProxies.inFrontOf(servers)) {
            proxies.forEach(p -> p.latency(LATENCY));
            List<String> uris = proxies.uris();
            try (RawFanout ping = new RawFanout(uris.subList(0, 1))) {
                results.accept(ManyCallers.measure(
                        Plan.SLOW,
                        Plan.PING,
                        1,
                        List.of(resource -> {
                            ping.pingAll();
                            return true;
                        }),
                        1,
                        warmup,
                        time));
            }
            try (Redlock redlock = Clients.quorumlock(uris)) {
                ManyCallers.Caller cycle = resource -> {
                    Optional<Lease> lease = redlock.tryAcquire(resource, Trial.TTL);
                    lease.ifPresent(Lease::release);
                    return lease.isPresent();
                };
                results.accept(ManyCallers.measure(Plan.SLOW, Plan.QUORUMLOCK, n, List.of(cycle), 1, warmup, time));
                List<JedisPool> pools = new ArrayList<>();
                try {
                    SequentialRedlock sequential = Clients.sequentialRedlock(uris, pools);
                    results.accept(ManyCallers.measure(
                            Plan.SLOW,
                            Plan.SEQUENTIAL,
                            n,
                            List.of(resource -> sequential
                                    .tryLock(resource, Trial.TTL.toMillis())
                                    .map(h -> {
                                        sequential.unlock(h);
                                        return true;
                                    })
                                    .orElse(false)),
                            1,
                            warmup,
                            time));
                } finally {
                    pools.forEach(JedisPool::close);
                }
                results.accept(ManyCallers.run(Plan.SLOW, Plan.REDLOCK, uris, List.of(), 1, 1, warmup, time));
                FaultProxy slow = proxies.get(SLOW_NODE);
                slow.latency(LATENCY.plus(SLOW_NODE_EXTRA));
                CaseResult withSlowNode =
                        ManyCallers.measure(Plan.SLOW_NODE, Plan.QUORUMLOCK, n, List.of(cycle), 1, warmup, time);
                withSlowNode.extra().put("slow_node", SLOW_NODE + 1);
                results.accept(withSlowNode);
            }
        } catch (RuntimeException e) {
            results.accept(CaseResult.failed(Plan.SLOW, Plan.QUORUMLOCK, n, 1, e.toString()));
        } finally {
            servers.forEach(s -> s.flushAll());
        }
    }
}
