package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code quorumlock run} against a lock service that is down exits 69 (EX_UNAVAILABLE), not 75
 * (EX_TEMPFAIL, the lock is busy), with one line naming what could not be reached; and with
 * {@code --wait 0} it says so within --connect-timeout (2 s by default), on every backend.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunUnreachableIT {

    /** The default --connect-timeout, within which run reports a ZooKeeper or etcd service that is down. */
    private static final Duration DOWN_BOUND = Duration.ofSeconds(2);

    /**
     * What closing a ZooKeeper client that never connected may take: the client sleeps a random
     * time of up to 1 s before each new connection attempt, and its close waits for that attempt
     * (measured: 0.2-1.1 s), in this run and in the one it is compared with.
     */
    private static final Duration ZOOKEEPER_CLOSE = Duration.ofSeconds(1);

    @TempDir
    Path dir;

    @TempDir
    Path zkDir;

    /**
     * Runs {@code run ARGS -- touch ran}; returns it exited within {@code bound} (scaled) and what
     * the JVM's own start and exit take on this machine now (measured with a usage error) 2.5 times
     * over: once for them, 1.5 times for the attempt and closing the client. Checked not to have
     * run the command.
     */
    private RunProcess runAndExit(Duration bound, List<String> args) throws Exception {
        return runAndExit(bound, args, 5);
    }

    /** As {@link #runAndExit(Duration, List)}, with {@code halves} halves of the JVM's own time as slack. */
    private RunProcess runAndExit(Duration bound, List<String> args, int halves) throws Exception {
        Timed usageError = timed(List.of("--resource", "job")); // no command: exit 2 at once
        usageError.run().close();
        Duration jvm = usageError.took();
        return runAndExit(
                TestTime.scaled(bound),
                args,
                jvm.multipliedBy(halves).dividedBy(2),
                halves / 2.0 + " times the JVM alone");
    }

    /**
     * Runs {@code run ARGS -- touch ran} against a service that is down, with the default
     * --connect-timeout; returns it exited within that timeout (scaled), {@code more} and 4 times
     * what the JVM's own start and exit take now: the client's classes, its start and its close
     * (measured: an etcd run is 0.33 s longer than its timeout where the JVM alone takes 0.24 s).
     * The bound is absolute, not relative to a run with a shorter timeout: a run that waits for
     * the service twice does so whatever the timeout, and a relative bound would hide it.
     */
    private RunProcess runAgainstAServiceThatIsDown(List<String> args, Duration more) throws Exception {
        return runAndExit(DOWN_BOUND.plus(more), args, 8);
    }

    private RunProcess runAndExit(Duration bound, List<String> args, Duration slack, String reference)
            throws Exception {
        Path ran = dir.resolve("ran");
        List<String> all = new java.util.ArrayList<>(args);
        all.addAll(List.of("--", "touch", ran.toString()));
        Timed timed = timed(all);
        RunProcess run = timed.run();
        System.out.printf(
                "run %s exited after %d ms (bound %d ms + %d ms, %s)%n",
                args, timed.took().toMillis(), bound.toMillis(), slack.toMillis(), reference);
        // The other fork's runs and the machine's load change between the reference and this run:
        // the limit grows with the load, still far below a run that waits or retries.
        Duration limit = Duration.ofNanos(Math.round(bound.plus(slack).toNanos() * TestTime.loadScale()));
        assertThat(timed.took()).as("run's time to exit; stderr: " + run.err()).isLessThan(limit);
        assertThat(ran).as("the command must not run").doesNotExist();
        return run;
    }

    private record Timed(RunProcess run, Duration took) {}

    private Timed timed(List<String> args) throws Exception {
        long start = System.nanoTime();
        RunProcess run = RunProcess.start(dir, args.toArray(String[]::new));
        run.exitCode(Duration.ofSeconds(30));
        return new Timed(run, Duration.ofNanos(System.nanoTime() - start));
    }

    @Test
    void everyRedisNodeDownExits69WithOneLineNamingTheNodes() throws Exception {
        List<String> uris;
        try (RedisServers nodes = RedisServers.start(3, false)) {
            uris = nodes.uris();
            nodes.forEach(node -> node.stop());
            try (RunProcess run = runAndExit(
                    DOWN_BOUND, List.of("--redis", String.join(",", uris), "--resource", "job", "--ttl", "2s"))) {
                assertThat(run.exitCode()).as(run.err()).isEqualTo(69);
                assertThat(run.err().lines().toList())
                        .singleElement()
                        .asString()
                        .startsWith("quorumlock run: lock 'job' not acquired: the lock service is unreachable (one"
                                + " attempt, --wait 0; 0 of 3 votes, 2 needed): unreachable: ")
                        .contains(uris);
            }
        }
    }

    @Test
    void aHolderOnOneNodeWithTheOtherTwoDownExits69AndWithOneDown75() throws Exception {
        try (RedisServers nodes = RedisServers.start(3, false);
                Redlock other = Redlock.builder()
                        .nodes(nodes.uris())
                        .restartGuard(false)
                        .build()) {
            other.acquire("job", Duration.ofSeconds(60), Duration.ofSeconds(10));
            List<String> args = List.of("--redis", String.join(",", nodes.uris()), "--resource", "job", "--ttl", "2s");
            nodes.get(2).stop();
            // Nodes 0 and 1 name the holder: they could have granted the lock, so it is busy.
            try (RunProcess run = runAndExit(DOWN_BOUND, args)) {
                assertThat(run.exitCode()).as(run.err()).isEqualTo(75);
                assertThat(run.err().lines().toList())
                        .singleElement()
                        .asString()
                        .startsWith("quorumlock run: lock 'job' not acquired (one attempt, --wait 0; 0 of 3 votes, 2"
                                + " needed): ")
                        .contains("held by another owner: ");
            }
            nodes.get(1).stop();
            // Node 0 holds the key of the other owner, but one node alone could not grant the lock to anyone.
            try (RunProcess run = runAndExit(DOWN_BOUND, args)) {
                assertThat(run.exitCode()).as(run.err()).isEqualTo(69);
                assertThat(run.err().lines().toList())
                        .singleElement()
                        .asString()
                        .startsWith("quorumlock run: lock 'job' not acquired: the lock service is unreachable (one"
                                + " attempt, --wait 0; 0 of 3 votes, 2 needed): ")
                        .contains("unreachable: ")
                        .contains(nodes.uris());
            }
        }
    }

    @Test
    void aZooKeeperEnsembleDownExits69WithinTheConnectTimeout() throws Exception {
        String connectString;
        try (TestingServer zooKeeper = ZooKeeperServers.server(zkDir)) {
            connectString = zooKeeper.getConnectString();
            zooKeeper.stop();
            try (RunProcess run = runAgainstAServiceThatIsDown(
                    List.of("--zookeeper", connectString, "--resource", "invoice-numbers"), ZOOKEEPER_CLOSE)) {
                assertThat(run.exitCode()).as(run.err()).isEqualTo(69);
                assertThat(run.err().lines().toList())
                        .singleElement()
                        .asString()
                        .startsWith("quorumlock run: lock 'invoice-numbers' not acquired: the lock service is"
                                + " unreachable (one attempt, --wait 0; --connect-timeout 2.00 s): unreachable:"
                                + " zookeeper://" + connectString);
            }
        }
    }

    @Test
    void aZooKeeperEnsembleDownExits69WithinTheWaitThatIncludesTheConnectTimeout() throws Exception {
        String connectString;
        try (TestingServer zooKeeper = ZooKeeperServers.server(zkDir)) {
            connectString = zooKeeper.getConnectString();
            zooKeeper.stop();
            // The connect timeout's wait is part of --wait 3s, not before it.
            try (RunProcess run = runAndExit(
                    Duration.ofSeconds(3).plus(ZOOKEEPER_CLOSE),
                    List.of("--zookeeper", connectString, "--resource", "invoice-numbers", "--wait", "3s"),
                    8)) {
                assertThat(run.exitCode()).as(run.err()).isEqualTo(69);
                assertThat(run.err().lines().toList())
                        .singleElement()
                        .asString()
                        .startsWith("quorumlock run: lock 'invoice-numbers' not acquired: the lock service is"
                                + " unreachable (within --wait 3.00 s")
                        .contains("zookeeper://" + connectString);
            }
        }
    }

    @Test
    void anEtcdClusterDownExits69WithinTheConnectTimeout() throws Exception {
        Assumptions.assumeTrue(
                EtcdCluster.available(), () -> EtcdCluster.unavailableReason().orElse("no etcd"));
        try (EtcdCluster etcd = EtcdCluster.start(1)) {
            String endpoint = etcd.get(0).clientUrl();
            etcd.get(0).stop();
            try (RunProcess run = runAgainstAServiceThatIsDown(
                    List.of("--etcd", endpoint, "--resource", "stock", "--ttl", "2s"), Duration.ZERO)) {
                assertThat(run.exitCode()).as(run.err()).isEqualTo(69);
                assertThat(run.err().lines().toList())
                        .singleElement()
                        .asString()
                        .startsWith("quorumlock run: lock 'stock' not acquired: the lock service is unreachable (one"
                                + " attempt, --wait 0; --connect-timeout 2.00 s): ")
                        .contains("etcd " + endpoint);
            }
        }
    }
}
