package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.quorumlock.FencedLease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.TestTime;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * close() while acquires run at every point of their attempt: each acquire ends with the lease or
 * an IllegalStateException, and no key is left behind (the TTL is long, so a key left would stay).
 */
@Timeout(120)
class EtcdCloseRaceIT {

    private static final Logger log = LoggerFactory.getLogger(EtcdCloseRaceIT.class);
    /** Long, so a key the close left behind is still there when looked for. */
    private static final Duration TTL = Duration.ofSeconds(60);

    private static final int ROUNDS = 80;
    private static final int THREADS = 12;

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    static Client admin;

    @BeforeAll
    static void connect() {
        if (!EtcdCluster.available()) {
            return;
        }
        admin = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build();
    }

    @AfterAll
    static void disconnect() {
        if (admin != null) {
            admin.close();
        }
    }

    @Test
    void closingALockWhileAcquiresRunEndsEachWithItsLeaseOrIllegalStateAndLeavesNoKey() throws Exception {
        Map<String, AtomicInteger> endings = new ConcurrentHashMap<>();
        List<String> others = new ArrayList<>();
        long latest = 0;
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                String prefix = "close-race-" + round + "-";
                EtcdLock lock = EtcdLock.builder().endpoints(etcd.endpoints()).build();
                lock.acquire(prefix + "warm-up", TTL, Duration.ofSeconds(5)).release();
                List<Future<Ending>> running = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    // Half on resources of their own (granted at once), half on one they share (waiting).
                    String resource = prefix + (t % 4 != 0 ? "own-" + t : "shared");
                    running.add(threads.submit(() -> {
                        while (true) {
                            FencedLease lease;
                            try {
                                lease = lock.acquire(resource, TTL, Duration.ofSeconds(2));
                            } catch (LockUnavailableException busy) {
                                continue;
                            } catch (RuntimeException e) {
                                return new Ending(e, System.nanoTime());
                            }
                            lease.release();
                        }
                    }));
                }
                Thread.sleep(ThreadLocalRandom.current().nextInt(5, 60));
                lock.close();
                long closed = System.nanoTime();
                for (Future<Ending> future : running) {
                    Ending ending = future.get(20, TimeUnit.SECONDS);
                    RuntimeException ended = ending.exception();
                    long late = TimeUnit.NANOSECONDS.toMillis(ending.at() - closed);
                    latest = Math.max(latest, late);
                    String kind = ended.getClass().getSimpleName();
                    endings.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
                    if (!(ended instanceof IllegalStateException)) {
                        others.add(ended.toString());
                        log.warn(
                                "round {}: an acquire on the closed lock ended with {}",
                                round,
                                ended.toString(),
                                ended);
                    }
                }
                String round_ = "round " + round;
                try {
                    TestTime.await(Duration.ofSeconds(3), () -> keys(prefix).isEmpty(), "no key left by " + round_);
                } catch (AssertionError left) {
                    for (KeyValue kv : keys(prefix)) {
                        log.warn(
                                "{}: key {} of lease {} left, TTL {}",
                                round_,
                                kv.getKey().toString(StandardCharsets.UTF_8),
                                Long.toHexString(kv.getLease()),
                                admin.getLeaseClient()
                                        .timeToLive(kv.getLease(), io.etcd.jetcd.options.LeaseOption.DEFAULT)
                                        .get(5, TimeUnit.SECONDS)
                                        .getTTL());
                    }
                    throw left;
                }
            }
        } finally {
            threads.shutdownNow();
        }
        log.info("acquires on a closing lock ended: {}, the last {} ms after close() returned", endings, latest);
        assertThat(latest).isLessThan(TestTime.scaled(Duration.ofSeconds(1)).toMillis());
        assertThat(others)
                .as("acquires that ended with something else than IllegalStateException")
                .isEmpty();
    }

    /** How an acquire on the closing lock ended, and when (System.nanoTime). */
    private record Ending(RuntimeException exception, long at) {}

    private static List<KeyValue> keys(String resourcePrefix) {
        ByteSequence prefix = ByteSequence.from("/quorumlock/locks/" + resourcePrefix, StandardCharsets.UTF_8);
        try {
            return admin.getKVClient()
                    .get(prefix, GetOption.builder().isPrefix(true).build())
                    .get(5, TimeUnit.SECONDS)
                    .getKvs();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
