package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.TestTime;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;

/**
 * What {@code quorumlock run} says about nodes that are not as the lock needs them, as a user meets
 * them: a Redis Cluster member, a password for nodes that have none, a node down while a bare quorum
 * grants the lock. Each problem is one line on stderr that names the node; {@code check} says the same.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunNodeProblemsIT {

    private static final String PASSWORD = "s3cret-Unneeded";

    @TempDir
    Path dir;

    /** A redis-server started by the test itself (the kit starts no Cluster member); killed after the test. */
    private Process clusterMember;

    @AfterEach
    void stopTheClusterMember() throws InterruptedException {
        if (clusterMember != null) {
            clusterMember.destroyForcibly();
            clusterMember.waitFor(TestTime.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** An empty config file, so that a ~/.config/quorumlock/config on this machine plays no part. */
    private String noConfig() throws IOException {
        return Files.writeString(dir.resolve("empty-config"), "").toString();
    }

    @Test
    void aRedisClusterMemberIsRefusedByRunAsByCheckWithExitCode1() throws Exception {
        String uri = startAOneNodeCluster();
        Path ran = dir.resolve("ran");

        try (RunProcess run = RunProcess.start(
                        dir,
                        "--redis",
                        uri,
                        "--resource",
                        "job",
                        "--config",
                        noConfig(),
                        "--",
                        "touch",
                        ran.toString());
                RunProcess check = RunProcess.command(dir, Map.of(), "check", "--redis", uri, "--config", noConfig())) {
            assertThat(check.exitCode()).as(check.out()).isEqualTo(1);
            String reason = "is a Redis Cluster member (1 master(s), 0 replica(s); this node is a master of slots"
                    + " 0-16383 (16384 of 16384)): given as redis://, the lock does not follow the cluster's hash"
                    + " slots, so it would serve only the resources in this node's slots and be refused the others"
                    + " (MOVED); name the cluster as redis-cluster://host:port[,host:port...]";
            assertThat(check.out().replaceAll("\\n {4}", " ")).contains("  - " + reason);

            assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
            assertThat(run.err().lines().toList()).containsExactly("quorumlock run: " + uri + " " + reason);
            assertThat(ran).as("the command must not run").doesNotExist();
            assertThat(run.out()).isEmpty();
        }
    }

    @Test
    void aPasswordForNodesWithoutOneIsOneLinePerNodeNamingTheSettingAndTheRemedy() throws Exception {
        try (RedisServers nodes = RedisServers.start(3, true)) {
            String list = String.join(",", nodes.uris());
            Map<String, String> env = Map.of("QUORUMLOCK_REDIS_PASSWORD", PASSWORD);
            try (RunProcess run = RunProcess.start(
                            dir, env, "--redis", list, "--resource", "job", "--config", noConfig(), "--", "true");
                    RunProcess check = RunProcess.command(dir, env, "check", "--redis", list, "--config", noConfig())) {
                assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
                List<String> lines = run.err().lines().toList();
                assertThat(lines).as(run.err()).hasSize(3);
                for (int i = 0; i < 3; i++) {
                    assertThat(lines.get(i))
                            .isEqualTo("quorumlock run: " + nodes.uris().get(i) + " has no password, but"
                                    + " QUORUMLOCK_REDIS_PASSWORD gives one: unset QUORUMLOCK_REDIS_PASSWORD, or set"
                                    + " a password on the node (requirepass)");
                }

                assertThat(check.exitCode()).as(check.out()).isEqualTo(1);
                String findings = check.out().replaceAll("\\n {4}", " ");
                for (String uri : nodes.uris()) {
                    assertThat(findings)
                            .contains(
                                    uri + "  ERROR\n  - has no password, but QUORUMLOCK_REDIS_PASSWORD gives one:"
                                            + " unset QUORUMLOCK_REDIS_PASSWORD, or set a password on the node (requirepass)\n");
                }
                assertThat(run.err() + check.out() + check.err())
                        .as("the node's own error text, and the password, are not repeated")
                        .doesNotContain("without any password configured")
                        .doesNotContain(PASSWORD);
            }

            // The password in a node's URI: the remedy names the URI.
            String withPassword = nodes.uris().get(0).replace("redis://", "redis://:" + PASSWORD + "@");
            try (RunProcess run = RunProcess.start(
                    dir, "--redis", withPassword, "--resource", "job", "--config", noConfig(), "--", "true")) {
                assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
                assertThat(run.err().lines().toList())
                        .containsExactly("quorumlock run: " + nodes.uris().get(0) + " has no password, but its URI"
                                + " gives one: remove the password from its URI, or set a password on the node"
                                + " (requirepass)");
            }
        }
    }

    @Test
    void aLockGrantedByABareQuorumIsOneWarningNamingTheNodesThatDidNotAnswer() throws Exception {
        // Nodes that fsync every write vote at once: the restart guard does not keep them out.
        try (RedisServers nodes = RedisServers.start(3, true)) {
            String list = String.join(",", nodes.uris());
            try (RunProcess run = RunProcess.start(
                    dir, "--redis", list, "--resource", "job", "--config", noConfig(), "--", "echo", "ran")) {
                assertThat(run.exitCode()).as(run.err()).isZero();
                assertThat(run.out()).isEqualTo("ran\n");
                assertThat(run.err()).as("every node answered: no warning").isEmpty();
            }

            RedisServer down = nodes.get(2);
            down.stop();
            try (RunProcess run = RunProcess.start(
                    dir, "--redis", list, "--resource", "job", "--config", noConfig(), "--", "echo", "ran")) {
                assertThat(run.exitCode()).as(run.err()).isZero();
                assertThat(run.out()).isEqualTo("ran\n");
                assertThat(run.err().lines().toList())
                        .containsExactly("quorumlock run: warning: lock 'job' granted by 2 of 3 nodes, the bare"
                                + " quorum: no answer from " + down.uri() + " (unreachable); with one more node"
                                + " down no host gets the lock");
            }
        }
    }

    /**
     * A redis-server with {@code cluster-enabled yes} that serves every slot itself: a Redis Cluster
     * of one node, which accepts any key. Returns its URI once the cluster is up.
     */
    private String startAOneNodeCluster() throws IOException {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Path home = Files.createDirectories(dir.resolve("cluster-member"));
        clusterMember = new ProcessBuilder(
                        RedisServer.binary().toString(),
                        "--port",
                        Integer.toString(port),
                        "--bind",
                        "127.0.0.1",
                        "--dir",
                        home.toString(),
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        home.resolve("nodes.conf").toString(),
                        "--save",
                        "",
                        "--appendonly",
                        "no")
                .redirectErrorStream(true)
                .redirectOutput(home.resolve("redis.log").toFile())
                .start();
        TestTime.await(Duration.ofSeconds(10), () -> ping(port), "the cluster member to answer on port " + port);
        try (Jedis jedis = new Jedis("127.0.0.1", port, 2_000)) {
            int[] slots = IntStream.range(0, 16384).toArray();
            jedis.clusterAddSlots(slots);
        }
        TestTime.await(
                Duration.ofSeconds(20),
                () -> clusterInfo(port).contains("cluster_state:ok"),
                "the one-node cluster on port " + port + " to serve its slots");
        return "redis://127.0.0.1:" + port;
    }

    private static boolean ping(int port) {
        try (Jedis jedis = new Jedis("127.0.0.1", port, 500)) {
            return "PONG".equals(jedis.ping());
        } catch (RuntimeException notYet) {
            return false;
        }
    }

    private static String clusterInfo(int port) {
        try (Jedis jedis = new Jedis("127.0.0.1", port, 500)) {
            return new String((byte[]) jedis.sendCommand(Protocol.Command.CLUSTER, "INFO"));
        } catch (RuntimeException notYet) {
            return "";
        }
    }
}
