package io.quorumlock.bench;

import io.quorumlock.Lease;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import redis.clients.jedis.Jedis;

/**
 * What one quorumlock client over 5 nodes costs in threads and connections, counted from the
 * outside: the JVM's live threads before the client is built, after, after some cycles by one
 * caller and by several callers at once, and after it is closed; and each node's {@code
 * connected_clients}, before and after.
 *
 * @param threadsAfterBuild threads the client started in {@code build()}
 * @param threadsAfterFewCycles threads after a few cycles by one caller
 * @param threadsAfterCycles threads after all cycles by one caller
 * @param threadsWithCallers threads after the concurrent callers (not counting the callers)
 * @param threadsAfterClose threads left once the client is closed
 * @param threadNames the client's threads by name (digits replaced by #), with their counts
 * @param connectionsPerNode the most connections any one node gained, one caller
 * @param connectionsPerNodeWithCallers the same with {@code callers} concurrent callers
 * @param cycles the cycles of the single caller
 * @param callers how many concurrent callers in the second part
 * @param error why the probe failed, or null
 */
record Resources(
        int threadsAfterBuild,
        int threadsAfterFewCycles,
        int threadsAfterCycles,
        int threadsWithCallers,
        int threadsAfterClose,
        Map<String, Integer> threadNames,
        int connectionsPerNode,
        int connectionsPerNodeWithCallers,
        int cycles,
        int callers,
        String error) {

    static final int CALLERS = 4;
    private static final int FEW_CYCLES = 100;
    private static final String CALLER_PREFIX = "bench-caller-";

    static Resources measure(RedisServers servers, int cycles) {
        List<Jedis> probes = new ArrayList<>();
        try {
            for (RedisServer server : servers) {
                probes.add(server.connect(Duration.ofSeconds(5)));
            }
            Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
            int[] clientsBefore = connectedClients(probes);
            Redlock redlock = Clients.quorumlock(servers.uris());
            int afterBuild;
            int afterFew;
            int afterAll;
            int withCallers;
            Map<String, Integer> names;
            int connections;
            int connectionsWithCallers;
            try {
                afterBuild = newThreads(before).size();
                runCycles(redlock, "bench:resources:0", FEW_CYCLES);
                afterFew = newThreads(before).size();
                runCycles(redlock, "bench:resources:0", cycles);
                List<Thread> clientThreads = newThreads(before);
                afterAll = clientThreads.size();
                names = names(clientThreads);
                connections = maxGain(clientsBefore, connectedClients(probes));

                AtomicReference<RuntimeException> failure = new AtomicReference<>();
                List<Thread> callers = new ArrayList<>();
                for (int i = 1; i <= CALLERS; i++) {
                    String key = "bench:resources:" + i;
                    callers.add(new Thread(
                            () -> {
                                try {
                                    runCycles(redlock, key, cycles / CALLERS);
                                } catch (RuntimeException e) {
                                    failure.compareAndSet(null, e);
                                }
                            },
                            CALLER_PREFIX + i));
                }
                callers.forEach(Thread::start);
                for (Thread caller : callers) {
                    caller.join();
                }
                if (failure.get() != null) {
                    throw failure.get();
                }
                withCallers = newThreads(before).size();
                connectionsWithCallers = maxGain(clientsBefore, connectedClients(probes));
            } finally {
                redlock.close();
            }
            Thread.sleep(200); // threads that end on close need a moment
            int afterClose = newThreads(before).size();
            return new Resources(
                    afterBuild,
                    afterFew,
                    afterAll,
                    withCallers,
                    afterClose,
                    names,
                    connections,
                    connectionsWithCallers,
                    cycles,
                    CALLERS,
                    null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return failed("interrupted");
        } catch (RuntimeException e) {
            return failed(e.toString());
        } finally {
            probes.forEach(Jedis::close);
        }
    }

    private static Resources failed(String why) {
        return new Resources(-1, -1, -1, -1, -1, Map.of(), -1, -1, 0, CALLERS, why);
    }

    private static void runCycles(Redlock redlock, String key, int cycles) {
        for (int i = 0; i < cycles; i++) {
            Optional<Lease> lease = redlock.tryAcquire(key, Trial.TTL);
            lease.ifPresent(Lease::release);
        }
    }

    /** Live threads that were not there before, other than the probe's own callers. */
    private static List<Thread> newThreads(Set<Thread> before) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> !before.contains(t))
                .filter(Thread::isAlive)
                .filter(t -> !t.getName().startsWith(CALLER_PREFIX))
                .toList();
    }

    private static Map<String, Integer> names(List<Thread> threads) {
        Map<String, Integer> names = new TreeMap<>();
        for (Thread thread : threads) {
            names.merge(thread.getName().replaceAll("\\d+", "#"), 1, Integer::sum);
        }
        return names;
    }

    private static int[] connectedClients(List<Jedis> probes) {
        int[] counts = new int[probes.size()];
        for (int i = 0; i < counts.length; i++) {
            String info = probes.get(i).info("clients");
            counts[i] = info.lines()
                    .filter(line -> line.startsWith("connected_clients:"))
                    .map(line -> Integer.parseInt(
                            line.substring(line.indexOf(':') + 1).trim()))
                    .findFirst()
                    .orElse(-1);
        }
        return counts;
    }

    private static int maxGain(int[] before, int[] after) {
        int max = 0;
        for (int i = 0; i < before.length; i++) {
            max = Math.max(max, after[i] - before[i]);
        }
        return max;
    }
}
