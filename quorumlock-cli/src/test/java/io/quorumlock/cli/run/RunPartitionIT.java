package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.FaultProxies;
import io.quorumlock.testkit.Processes;
import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Host A runs a command that ignores SIGTERM; its link to the lock service is cut by fault proxies
 * while host B, which reaches the service directly, waits for the lock. A's command must be gone
 * before B's starts, on every backend: the notice of loss and the grace that must fit in it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunPartitionIT {

    @TempDir
    Path dir;

    @TempDir
    Path zkDir;

    /** A command that ignores SIGTERM, so only the SIGKILL after the grace ends it. */
    private String[] stubborn(Path started) {
        return new String[] {
            "sh",
            "-c",
            "trap '' TERM; echo $$ > " + started + ".tmp; mv " + started + ".tmp " + started
                    + "; while true; do sleep 0.05; done"
        };
    }

    /** Runs the scenario; returns the ms from A's command's end to B's command's start. */
    private long gap(String[] a, String[] b, Runnable partition) throws Exception {
        Path started = dir.resolve("a.started");
        Path bStarted = dir.resolve("b.started");
        // A short grace: the test is of the notice of loss, which the grace must fit in.
        String[] aArgs = concat(
                a,
                new String[] {"--resource", "partitioned", "--wait", "15s", "--grace", "100ms", "--"},
                stubborn(started));
        try (RunProcess hostA = RunProcess.start(dir, aArgs)) {
            // A's run starts a JVM and connects first: on a busy machine that takes longer.
            TestTime.await(
                    TestTime.scaledByLoad(Duration.ofSeconds(20)),
                    () -> Files.exists(started),
                    "A's command to start: " + hostA.err());
            ProcessHandle command = ProcessHandle.of(
                            Long.parseLong(Files.readString(started).trim()))
                    .orElseThrow();
            // When A's command ends, not when A's run exits: run still releases the lock after that.
            // Polled closely (onExit polls a process that is not our child only now and then), and
            // a zombie counts as ended.
            java.util.concurrent.CompletableFuture<Long> commandEnded = new java.util.concurrent.CompletableFuture<>();
            Thread watcher = new Thread(() -> {
                while (Processes.isRunning(command)) {
                    java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                }
                commandEnded.complete(System.currentTimeMillis());
            });
            watcher.setDaemon(true);
            watcher.start();
            partition.run();
            String[] bArgs = concat(b, new String[] {"--resource", "partitioned", "--wait", "30s", "--"}, new String[] {
                "sh", "-c", "date +%s%N > " + bStarted
            });
            try (RunProcess hostB = RunProcess.start(dir, bArgs)) {
                long aEnded = commandEnded.get(30, TimeUnit.SECONDS);
                assertThat(hostB.exitCode(Duration.ofSeconds(40)))
                        .as(hostB.err())
                        .isZero();
                long bStartedAt = Long.parseLong(Files.readString(bStarted).trim()) / 1_000_000;
                assertThat(hostA.exitCode(Duration.ofSeconds(30)))
                        .as(hostA.err())
                        .isEqualTo(RunCommand.LEASE_LOST);
                return bStartedAt - aEnded;
            }
        }
    }

    private static String[] concat(String[]... parts) {
        return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream).toArray(String[]::new);
    }

    @Test
    void redis() throws Exception {
        try (RedisServers nodes = RedisServers.start(3, false);
                FaultProxies proxies = FaultProxies.inFrontOf(nodes)) {
            long gap = gap(
                    new String[] {"--redis", String.join(",", proxies.uris()), "--ttl", "2s"},
                    new String[] {"--redis", String.join(",", nodes.uris()), "--ttl", "2s"},
                    () -> proxies.partition(0, 1, 2));
            System.out.printf("Redis: B's command started %d ms after A's ended%n", gap);
            assertThat(gap).as("ms from A's end to B's start").isPositive();
        }
    }

    @Test
    void zooKeeper() throws Exception {
        try (TestingCluster cluster = ZooKeeperServers.cluster(zkDir, 3);
                FaultProxies proxies = ZooKeeperServers.proxies(cluster)) {
            long gap = gap(
                    new String[] {"--zookeeper", proxies.connectString(), "--ttl", "3s"},
                    new String[] {"--zookeeper", cluster.getConnectString(), "--ttl", "3s"},
                    () -> proxies.partition(0, 1, 2));
            System.out.printf("ZooKeeper: B's command started %d ms after A's ended%n", gap);
            assertThat(gap).as("ms from A's end to B's start").isPositive();
        }
    }

    @Test
    void etcd() throws Exception {
        Assumptions.assumeTrue(
                EtcdCluster.available(), () -> EtcdCluster.unavailableReason().orElse("no etcd"));
        try (EtcdCluster etcd = EtcdCluster.start(1);
                FaultProxies proxies = FaultProxies.inFrontOf(etcd)) {
            long gap = gap(
                    new String[] {"--etcd", String.join(",", proxies.uris()), "--ttl", "3s"},
                    new String[] {"--etcd", String.join(",", etcd.endpoints()), "--ttl", "3s"},
                    () -> proxies.partition(0));
            System.out.printf("etcd: B's command started %d ms after A's ended%n", gap);
            assertThat(gap).as("ms from A's end to B's start").isPositive();
        }
    }
}
