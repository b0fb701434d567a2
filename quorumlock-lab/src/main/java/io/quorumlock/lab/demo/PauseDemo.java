package io.quorumlock.lab.demo;

import io.quorumlock.FencedLease;
import io.quorumlock.Lease;
import io.quorumlock.examples.LeaderPauseTimeline;
import io.quorumlock.examples.PauseTimeline;
import io.quorumlock.jdbc.JdbcFence;
import io.quorumlock.lab.ProgressLine;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.ZooKeeperServers;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.h2.jdbcx.JdbcDataSource;

/**
 * The second part of the demo: the process-pause timeline of the Redlock debate, once with
 * Redlock alone and once with a fenced ZooKeeper lease and {@link JdbcFence}.
 */
final class PauseDemo {

    static final int ROUNDS = 5;
    private static final Duration REDLOCK_TTL = Duration.ofMillis(400);

    private PauseDemo() {}

    /** Plays both timelines; says on {@code progress} what it waits for. */
    static List<PauseTimeline.Result> run(ProgressLine progress) throws Exception {
        Path dir = Files.createTempDirectory("quorumlock-zk-");
        JdbcDataSource database = new JdbcDataSource();
        database.setURL("jdbc:h2:mem:pause-demo;DB_CLOSE_DELAY=-1");
        try (RedisServers redis = RedisServers.start(3);
                TestingServer zookeeper = ZooKeeperServers.server(dir)) {
            PauseTimeline.Result unfenced;
            try (Redlock a = Redlock.builder().nodes(redis.uris()).build();
                    Redlock b = Redlock.builder().nodes(redis.uris()).build()) {
                awaitTheRestartGuard(progress, a, b);
                unfenced = new PauseTimeline(database, REDLOCK_TTL)
                        .unfenced("Redlock alone", a, b, PauseDemo::sleepPastTheLease, ROUNDS);
            }
            JdbcFence fence = JdbcFence.builder().build();
            try (Connection c = database.getConnection()) {
                fence.createTable(c);
            }
            String ensemble = zookeeper.getConnectString();
            try (CuratorFramework clientA =
                            CuratorFrameworkFactory.newClient(ensemble, 5_000, 2_000, new RetryOneTime(100));
                    ZooKeeperLock b =
                            ZooKeeperLock.builder().connectString(ensemble).build()) {
                clientA.start();
                try (ZooKeeperLock a = ZooKeeperLock.builder().client(clientA).build()) {
                    PauseTimeline.Result fenced = new PauseTimeline(database, Duration.ofSeconds(10))
                            .fenced(
                                    "ZooKeeper + JdbcFence",
                                    a,
                                    b,
                                    lease -> expire(clientA, ensemble, lease),
                                    fence,
                                    ROUNDS);
                    return List.of(unfenced, fenced);
                }
            }
        } finally {
            deleteQuietly(dir);
        }
    }

    /**
     * The third part: two instances elect a leader on ZooKeeper; the leader pauses after its read
     * until its session is gone (the ensemble ends it, as it ends a silent client's), the other is
     * elected with a larger token and sells; the old leader wakes and its late write is refused.
     */
    static LeaderPauseTimeline.Result leader() throws Exception {
        Path dir = Files.createTempDirectory("quorumlock-zk-");
        JdbcDataSource database = new JdbcDataSource();
        database.setURL("jdbc:h2:mem:leader-demo;DB_CLOSE_DELAY=-1");
        try (TestingServer zookeeper = ZooKeeperServers.server(dir)) {
            String ensemble = zookeeper.getConnectString();
            try (CuratorFramework clientA =
                            CuratorFrameworkFactory.newClient(ensemble, 5_000, 2_000, new RetryOneTime(100));
                    ZooKeeperLock b = ZooKeeperLock.builder()
                            .connectString(ensemble)
                            .holder("B")
                            .build()) {
                clientA.start();
                try (ZooKeeperLock a =
                        ZooKeeperLock.builder().client(clientA).holder("A").build()) {
                    // The term lasts as long as A's session (5 s); the expiry stands for a longer pause.
                    return new LeaderPauseTimeline(database, Duration.ofSeconds(5))
                            .play(a, b, () -> ZooKeeperServers.expireSession(clientA, ensemble));
                }
            }
        } finally {
            deleteQuietly(dir);
        }
    }

    /**
     * Redlock's restart guard, on by default, counts a node's vote only once it has been up for the
     * longest TTL: the nodes were just started, so each client's first lock waits for that.
     */
    private static void awaitTheRestartGuard(ProgressLine progress, Redlock... clients) {
        progress.println("The 3 Redis nodes were just started; Redlock's restart guard counts their votes once they"
                + " have been up for the TTL (" + REDLOCK_TTL.toMillis() + " ms): waiting for that.");
        for (Redlock client : clients) {
            client.acquire("warm-up", REDLOCK_TTL, Duration.ofSeconds(5)).release();
        }
    }

    /** A paused process sees nothing; its lease simply runs out meanwhile. */
    private static void sleepPastTheLease(Lease lease) {
        while (lease.isValid()) {
            sleep(lease.remaining().toMillis() + 1);
        }
    }

    /** While A is paused, the ensemble stops hearing from it and ends its session. */
    private static void expire(CuratorFramework client, String ensemble, FencedLease lease) {
        try {
            ZooKeeperServers.expireSession(client, ensemble);
            lease.lost().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("the pause did not end A's session: " + e, e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static void deleteQuietly(Path dir) {
        try (var paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        } catch (java.io.IOException e) {
            // a temp dir left behind is harmless
        }
    }

    /** The results as an aligned table. */
    static List<String> table(List<PauseTimeline.Result> results) {
        String format = "%-24s %16s %14s %22s";
        java.util.ArrayList<String> lines = new java.util.ArrayList<>();
        lines.add(String.format(format, "lock", "writes attempted", "lost updates", "stale writes rejected"));
        for (PauseTimeline.Result r : results) {
            lines.add(String.format(format, r.lock(), r.writesAttempted(), r.lostUpdates(), r.staleWritesRejected()));
        }
        return lines;
    }
}
