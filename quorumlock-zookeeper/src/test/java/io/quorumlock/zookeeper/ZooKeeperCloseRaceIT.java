package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * close() while acquires and releases run in other threads, at every point of their attempts: each
 * acquire ends with a lease or an IllegalStateException soon after close() returned, a lease handed
 * out after close() returned is already lost, and no lock node is left. The sessions are long, so a
 * node left behind would stay; over a supplied client, which close() leaves open, such a node would
 * block its resource for everyone until that client closes.
 */
@Timeout(60)
class ZooKeeperCloseRaceIT {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperCloseRaceIT.class);

    private static final Duration TTL = Duration.ofSeconds(30);
    /** Longer than the test: a node left behind stays until a delete. */
    private static final Duration SESSION = Duration.ofSeconds(30);
    /** Far longer than the contention of a round: an acquire on an open lock is granted. */
    private static final Duration WAIT = Duration.ofSeconds(10);

    private static final int ROUNDS = 30;
    private static final int THREADS = 8;

    @TempDir
    static Path dataDir;

    private static TestingServer server;
    /** Another session, to look for nodes left by the locks that own their client. */
    private static CuratorFramework admin;

    private final ExecutorService threads = Executors.newFixedThreadPool(THREADS);

    @BeforeAll
    static void startServer() throws Exception {
        server = ZooKeeperServers.server(dataDir);
        admin = client();
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (admin != null) {
            admin.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void stopThreads() throws InterruptedException {
        threads.shutdownNow();
        assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private static CuratorFramework client() {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(server.getConnectString())
                .sessionTimeoutMs((int) SESSION.toMillis())
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryOneTime(100))
                .build();
        client.start();
        return client;
    }

    @Test
    void closingALockThatOwnsItsClientWhileAcquiresRun() throws Exception {
        race(
                "owned",
                basePath -> ZooKeeperLock.builder()
                        .connectString(server.getConnectString())
                        .sessionTimeout(SESSION)
                        .connectTimeout(Duration.ofSeconds(5))
                        .basePath(basePath)
                        .build(),
                admin);
    }

    @Test
    void closingALockOverASuppliedClientWhileAcquiresRun() throws Exception {
        try (CuratorFramework supplied = client()) {
            race(
                    "supplied",
                    basePath -> ZooKeeperLock.builder()
                            .client(supplied)
                            .basePath(basePath)
                            .build(),
                    supplied);
        }
    }

    /**
     * Rounds of THREADS acquiring on a lock closed a few ms in; {@code lookWith} looks for the lock
     * nodes left behind (for a supplied client, that client: its session outlives the lock).
     */
    private void race(String name, LockFactory locks, CuratorFramework lookWith) throws Exception {
        Map<String, AtomicInteger> endings = new ConcurrentHashMap<>();
        List<String> wrong = new ArrayList<>();
        Queue<String> notLost = new ConcurrentLinkedQueue<>();
        AtomicInteger leasesAfterClose = new AtomicInteger();
        long latest = Long.MIN_VALUE;
        for (int round = 0; round < ROUNDS; round++) {
            String basePath = "/close-race/" + name + "-" + round;
            ZooKeeperLock lock = locks.lock(basePath);
            lock.acquire("warm-up", TTL, WAIT).release();
            AtomicBoolean closeStarted = new AtomicBoolean();
            AtomicBoolean closeReturned = new AtomicBoolean();
            List<Future<Ending>> running = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                // Most on resources of their own (granted at once), some on one they share (queued).
                String resource = t % 3 == 0 ? "shared" : "own-" + t;
                running.add(threads.submit(() -> {
                    while (true) {
                        FencedLease lease;
                        try {
                            lease = lock.acquire(resource, TTL, WAIT);
                        } catch (RuntimeException e) {
                            return new Ending(e, System.nanoTime());
                        }
                        if (closeStarted.get()) {
                            // Handed out once close() had begun: lost by the time close() returns.
                            TestTime.await(Duration.ofSeconds(5), closeReturned::get, "close() to return");
                            leasesAfterClose.incrementAndGet();
                            if (lease.isValid() || !lease.lost().isDone()) {
                                notLost.add(lease.toString());
                            }
                        }
                        lease.release();
                    }
                }));
            }
            Thread.sleep(ThreadLocalRandom.current().nextInt(2, 40));
            closeStarted.set(true);
            lock.close();
            long closed = System.nanoTime();
            closeReturned.set(true);
            for (Future<Ending> future : running) {
                Ending ending = future.get(20, TimeUnit.SECONDS);
                RuntimeException ended = ending.exception();
                latest = Math.max(latest, TimeUnit.NANOSECONDS.toMillis(ending.at() - closed));
                endings.computeIfAbsent(ended.getClass().getSimpleName(), k -> new AtomicInteger())
                        .incrementAndGet();
                if (!(ended instanceof IllegalStateException)) {
                    wrong.add("round " + round + ": " + ended);
                    log.warn("round {}: an acquire on the closed lock ended with {}", round, ended.toString(), ended);
                }
            }
            int r = round;
            Supplier<List<String>> left = () -> nodes(lookWith, basePath);
            try {
                TestTime.await(Duration.ofSeconds(3), () -> left.get().isEmpty(), "no lock node left by round " + r);
            } catch (AssertionError e) {
                throw new AssertionError(name + " round " + r + ": lock nodes left: " + left.get(), e);
            }
        }
        log.info(
                "{}: acquires on a closing lock ended {}, the last {} ms after close() returned; {} leases handed out during or after it",
                name,
                endings,
                latest,
                leasesAfterClose.get());
        assertThat(wrong)
                .as("acquires that ended with something else than IllegalStateException")
                .isEmpty();
        assertThat(notLost)
                .as("leases handed out after close() began and not lost when it returned")
                .isEmpty();
        // Far below the session and the TTL (30 s), which an acquire left waiting would reach.
        assertThat(latest)
                .isLessThan(TestTime.scaledByLoad(Duration.ofSeconds(1)).toMillis());
    }

    /** The lock nodes under {@code basePath}, as seen by {@code client}. */
    private static List<String> nodes(CuratorFramework client, String basePath) {
        List<String> nodes = new ArrayList<>();
        try {
            if (client.checkExists().forPath(basePath) == null) {
                return nodes;
            }
            for (String dir : client.getChildren().forPath(basePath)) {
                try {
                    for (String node : client.getChildren().forPath(basePath + "/" + dir)) {
                        nodes.add(dir + "/" + node);
                    }
                } catch (KeeperException.NoNodeException gone) {
                    // an empty container the server deleted meanwhile
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("could not list " + basePath, e);
        }
        return nodes;
    }

    @FunctionalInterface
    private interface LockFactory {
        ZooKeeperLock lock(String basePath);
    }

    /** How an acquire on the closing lock ended, and when (System.nanoTime). */
    private record Ending(RuntimeException exception, long at) {}
}
