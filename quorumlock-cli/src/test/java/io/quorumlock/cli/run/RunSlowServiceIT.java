package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.ZooKeeperServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lock service that answers, only slowly (or a client JVM that is slow to make its first
 * connection, as on a busy machine), is not down: {@code run} with one attempt takes the free lock.
 * The --connect-timeout bounds reaching the service, not the first requests of a cold client.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunSlowServiceIT {

    /** Each way: a new connection and the first grant take several round trips, past 2 s. */
    private static final Duration LATENCY = Duration.ofMillis(300);

    @TempDir
    Path dir;

    @TempDir
    Path zkDir;

    @Test
    void aZooKeeperEnsembleThatAnswersSlowlyGrantsAFreeLockToOneAttempt() throws Exception {
        try (TestingServer zooKeeper = ZooKeeperServers.server(zkDir);
                FaultProxy proxy = FaultProxy.start("127.0.0.1", zooKeeper.getPort())) {
            // Each way. The first lock of a resource creates its parent nodes first: some eight
            // round trips, 1.6 s, where a single attempt's requests had 250 ms.
            proxy.latency(Duration.ofMillis(100));
            Path ran = dir.resolve("ran");
            try (RunProcess run = RunProcess.start(
                    dir,
                    "--zookeeper",
                    proxy.address(),
                    "--resource",
                    "invoice-numbers",
                    "--ttl",
                    "10s",
                    "--",
                    "touch",
                    ran.toString())) {
                assertThat(run.exitCode(Duration.ofSeconds(60))).as(run.err()).isZero();
                assertThat(ran).exists();
            }
        }
    }

    @Test
    void anEtcdMemberThatAnswersSlowlyGrantsAFreeLockToOneAttempt() throws Exception {
        Assumptions.assumeTrue(
                EtcdCluster.available(), () -> EtcdCluster.unavailableReason().orElse("no etcd"));
        try (EtcdCluster etcd = EtcdCluster.start(1);
                FaultProxy proxy = FaultProxy.inFrontOf(etcd.get(0))) {
            proxy.latency(LATENCY);
            Path ran = dir.resolve("ran");
            try (RunProcess run = RunProcess.start(
                    dir, "--etcd", proxy.uri(), "--resource", "stock", "--ttl", "10s", "--", "touch", ran.toString())) {
                assertThat(run.exitCode(Duration.ofSeconds(60))).as(run.err()).isZero();
                assertThat(ran).exists();
            }
        }
    }
}
