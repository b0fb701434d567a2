package io.quorumlock.bench;

import io.quorumlock.testkit.RedisServers;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.redisson.api.RedissonClient;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;

/**
 * The hand-off on Redis ({@link HandOff}): quorumlock's {@code Redlock} on one of the bench's nodes
 * and on all 5, Redisson's {@code RLock} and Spring Integration's {@code RedisLockRegistry} on the
 * one node, each library's holder and waiter on clients of their own, the four series in turns
 * (A B C D, then D C B A, ...). Beside them, measured just before on the same nodes, the round trip
 * of a plain PING ({@link RawFanout}): to the one node, and to the 5 at once (the slowest of the 5
 * replies), the unit of the hand-off target.
 */
final class RedisLocks {

    /** The node of the single-node rows: the first of the bench's nodes. */
    private static final int NODE = 0;

    /** Spring Integration's registry key: the same in every client, as in every instance of one service. */
    static final String REGISTRY_KEY = "bench-hand-off";

    /** Redisson's lock names start with this, apart from the keys of the other libraries. */
    private static final String REDISSON_PREFIX = "bench:redisson:";

    /** One series: its case, library, nodes, how a client of its own is made and how it waits. */
    private record Library(String caseId, String name, int nodes, Supplier<HandOff.Client> client, String waiting) {}

    private RedisLocks() {}

    /** The step's label. */
    static String label() {
        return Plan.REDIS_HAND_OFF + ", " + Plan.REDIS5_HAND_OFF + " / "
                + String.join(", ", Plan.PING, Plan.QUORUMLOCK, Plan.REDISSON, Plan.SPRING_INTEGRATION_REDIS);
    }

    /**
     * Runs the cases on the bench's nodes and adds their results to {@code results}.
     *
     * @param servers the bench's nodes
     * @param handOffs the counted hand-offs per library
     * @param pingTime how long the PINGs are warmed up, and then measured, each
     * @param progress where to show the count
     * @param results where the rows go, each case's PING first
     */
    static void run(
            RedisServers servers, int handOffs, Duration pingTime, Progress progress, Consumer<CaseResult> results) {
        List<String> all = servers.uris();
        List<String> one = all.subList(NODE, NODE + 1);
        try {
            progress.status(Plan.REDIS_HAND_OFF + " / " + Plan.PING);
            CaseResult ping1 =
                    ping(Plan.REDIS_HAND_OFF, one, pingTime, "one PING to the node: the round trip; requests/s");
            progress.status(Plan.REDIS5_HAND_OFF + " / " + Plan.PING);
            CaseResult ping5 = ping(
                    Plan.REDIS5_HAND_OFF,
                    all,
                    pingTime,
                    "one PING to each of the " + all.size() + " nodes at once: the slowest round trip; requests/s");
            String wait = HandOff.MAX_WAIT.toSeconds() + " s";
            List<Library> libraries = List.of(
                    new Library(
                            Plan.REDIS_HAND_OFF,
                            Plan.QUORUMLOCK,
                            1,
                            () -> HandOff.quorumlock(Clients.quorumlock(one)),
                            "Redlock.acquire(resource, ttl, " + wait + "), the builder's defaults"),
                    new Library(
                            Plan.REDIS_HAND_OFF,
                            Plan.REDISSON,
                            1,
                            () -> redisson(one.get(0)),
                            "RLock.tryLock(" + wait + ", ttl, MILLISECONDS): woken by the unlock's publish"),
                    new Library(
                            Plan.REDIS_HAND_OFF,
                            Plan.SPRING_INTEGRATION_REDIS,
                            1,
                            () -> springIntegration(one.get(0)),
                            "RedisLockRegistry, defaults (spin lock): tryLock(" + wait + "), idleBetweenTries 100 ms"),
                    new Library(
                            Plan.REDIS5_HAND_OFF,
                            Plan.QUORUMLOCK,
                            all.size(),
                            () -> HandOff.quorumlock(Clients.quorumlock(all)),
                            "Redlock.acquire(resource, ttl, " + wait + "), the builder's defaults"));
            List<HandOff.Series> series = new ArrayList<>();
            for (Library library : libraries) {
                progress.status(library.caseId() + " / " + library.name() + ": connecting");
                series.add(new HandOff.Series(
                        library.caseId(),
                        library.name(),
                        library.nodes(),
                        library.client(),
                        library.waiting(),
                        handOffs));
            }
            List<CaseResult> measured = HandOff.interleaved(series, progress);
            progress.status(Plan.REDIS_HAND_OFF + " / " + Plan.IDLE_PING);
            CaseResult idle1 = idlePing(Plan.REDIS_HAND_OFF, one, handOffs);
            progress.status(Plan.REDIS5_HAND_OFF + " / " + Plan.IDLE_PING);
            CaseResult idle5 = idlePing(Plan.REDIS5_HAND_OFF, all, handOffs);
            // each case's rows together, its PINGs first
            for (List<CaseResult> pings : List.of(List.of(ping1, idle1), List.of(ping5, idle5))) {
                pings.forEach(results);
                measured.stream()
                        .filter(r -> r.caseId().equals(pings.get(0).caseId()))
                        .forEach(results);
            }
        } finally {
            servers.forEach(s -> s.flushAll());
        }
    }

    /** One thread's PINGs to {@code uris} (to all at once), warmed up for {@code time}, then measured as long. */
    private static CaseResult ping(String caseId, List<String> uris, Duration time, String calls) {
        CaseResult result;
        try (RawFanout ping = new RawFanout(uris)) {
            result = ManyCallers.measure(
                    caseId,
                    Plan.PING,
                    uris.size(),
                    List.of(resource -> {
                        ping.pingAll();
                        return true;
                    }),
                    1,
                    time,
                    time);
        } catch (RuntimeException e) {
            return CaseResult.failed(caseId, Plan.PING, uris.size(), 1, e.toString());
        }
        result.extra().remove("resources");
        result.extra().put("calls", calls);
        return result;
    }

    /**
     * {@code samples} PINGs to {@code uris} (to all at once), each sent after the thread slept as
     * long as a hand-off's holder holds: the round trip a hand-off's messages meet, with the
     * sender, the servers and the machine idle since the last one (a PING in a loop never is).
     */
    private static CaseResult idlePing(String caseId, List<String> uris, int samples) {
        long[] nanos = new long[samples];
        try (RawFanout ping = new RawFanout(uris)) {
            for (int i = 0; i < IDLE_PING_WARM_UP; i++) {
                ping.pingAll();
            }
            for (int i = 0; i < samples; i++) {
                HandOff.holdUntil(System.nanoTime(), HandOff.HOLD_MIN.toNanos(), HandOff.HOLD_SPREAD.toNanos());
                long start = System.nanoTime();
                ping.pingAll();
                nanos[i] = System.nanoTime() - start;
            }
        } catch (RuntimeException e) {
            return CaseResult.failed(caseId, Plan.IDLE_PING, uris.size(), 1, e.toString());
        }
        Arrays.sort(nanos);
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("pings", samples);
        extra.put(
                "calls",
                "one PING" + (uris.size() > 1 ? " to each node at once" : "") + " after "
                        + HandOff.HOLD_MIN.toMillis() + "-"
                        + HandOff.HOLD_MIN.plus(HandOff.HOLD_SPREAD).toMillis()
                        + " ms idle, as a hand-off's holder holds");
        return new CaseResult(
                caseId,
                Plan.IDLE_PING,
                uris.size(),
                1,
                null,
                ManyCallers.percentile(nanos, 0.50),
                ManyCallers.percentile(nanos, 0.99),
                null,
                extra,
                null,
                null);
    }

    /** PINGs in a loop before the idle ones: the connection and the JIT warm. */
    private static final int IDLE_PING_WARM_UP = 2_000;

    /**
     * Redisson's {@code RLock} on a client of its own with Redisson's defaults: {@code
     * tryLock(wait, ttl, MILLISECONDS)}, whose waiter subscribes to the lock's channel and is woken
     * by the unlock's publish; a lease time of {@link Trial#TTL}, as the others' TTL.
     */
    private static HandOff.Client redisson(String uri) {
        RedissonClient client = Clients.redisson(uri);
        return HandOff.locks(
                resource -> client.getLock(REDISSON_PREFIX + resource),
                (lock, wait) -> lock.tryLock(wait.toMillis(), Trial.TTL.toMillis(), TimeUnit.MILLISECONDS),
                client::shutdown);
    }

    /**
     * Spring Integration's {@code RedisLockRegistry} with its defaults (a spin lock that tries again
     * every 100 ms), a TTL of {@link Trial#TTL}, on a Spring Data Redis {@code JedisConnectionFactory}
     * of its own (a client id of its own, as each service instance has), set up outside an
     * application context as the context would: its initialization and start callbacks.
     */
    private static HandOff.Client springIntegration(String uri) {
        URI parsed = URI.create(uri);
        JedisConnectionFactory factory =
                new JedisConnectionFactory(new RedisStandaloneConfiguration(parsed.getHost(), parsed.getPort()));
        factory.afterPropertiesSet();
        factory.start();
        RedisLockRegistry registry = new RedisLockRegistry(factory, REGISTRY_KEY, Trial.TTL);
        return HandOff.locks(registry::obtain, () -> {
            try {
                registry.destroy();
            } finally {
                factory.destroy();
            }
        });
    }

    /** The settings of the Redis hand-off, for the results file. */
    static Map<String, Object> settings() {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("single_node", "node " + (NODE + 1) + " of the bench's nodes");
        settings.put("spring_integration_registry_key", REGISTRY_KEY);
        settings.put("hand_off", HandOff.settingsText());
        return settings;
    }
}
