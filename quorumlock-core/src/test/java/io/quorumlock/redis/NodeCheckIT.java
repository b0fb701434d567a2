package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.redis.NodeCheck.Verdict;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/** checkNodes() against real servers set up the wrong ways the article lists. */
class NodeCheckIT {

    @RegisterExtension
    static final RedisServersExtension volatileNodes = RedisServersExtension.nodes(3);

    @RegisterExtension
    static final RedisServersExtension durableNodes =
            RedisServersExtension.nodes(1).persistent();

    private static NodeCheckReport check(String... uris) {
        try (Redlock redlock = Redlock.builder()
                .nodes(java.util.List.of(uris))
                .nodeTimeout(Duration.ofMillis(200))
                .build()) {
            return redlock.checkNodes();
        }
    }

    private static Jedis jedis(RedisServer server) {
        return server.connect(Duration.ofMillis(2000));
    }

    @Test
    void aPersistentIndependentMasterIsFine() {
        NodeCheckReport report = check(durableNodes.get(0).uri());
        NodeCheck node = report.nodes().get(0);
        assertThat(node.verdict()).as(report.toString()).isEqualTo(Verdict.OK);
        assertThat(node.role()).isEqualTo("master");
        assertThat(node.persistence()).isEqualTo("aof, fsync always");
        assertThat(node.runId()).get().asString().hasSize(40);
        assertThat(report.hasErrors()).isFalse();
        assertThat(report.hasWarnings()).isFalse();
    }

    @Test
    void aNodeThatMayEvictLockKeysGetsAWarningWithTheRemedy() {
        RedisServer durable = durableNodes.get(0);
        try (Jedis j = jedis(durable)) {
            try {
                j.configSet("maxmemory-policy", "volatile-lru");
                assertThat(check(durable.uri()).nodes().get(0).verdict())
                        .as("no memory limit: nothing is evicted, whatever the policy")
                        .isEqualTo(Verdict.OK);

                j.configSet("maxmemory", "100mb");
                NodeCheck node = check(durable.uri()).nodes().get(0);
                assertThat(node.verdict()).isEqualTo(Verdict.WARNING);
                assertThat(node.findings())
                        .singleElement()
                        .asString()
                        .contains("maxmemory-policy volatile-lru", "maxmemory 104857600", "noeviction");
            } finally {
                j.configSet("maxmemory", "0");
                j.configSet("maxmemory-policy", "noeviction");
            }
        }
    }

    @Test
    void nodesWithoutPersistenceGetAWarningWithTheRemedy() {
        NodeCheck node = check(volatileNodes.get(0).uri()).nodes().get(0);
        assertThat(node.verdict()).isEqualTo(Verdict.WARNING);
        assertThat(node.persistence()).isEqualTo("none");
        assertThat(node.findings())
                .singleElement()
                .asString()
                .contains("appendonly no", "appendfsync always", "longest TTL");
    }

    @Test
    void flagsAReplicaAndItsMaster() {
        RedisServer master = volatileNodes.get(0);
        RedisServer replica = volatileNodes.get(1);
        try (Jedis j = jedis(replica)) {
            j.replicaof(master.host(), master.port());
            TestTime.await(
                    Duration.ofSeconds(10),
                    () -> {
                        try (Jedis m = jedis(master)) {
                            return m.info("replication").contains("connected_slaves:1");
                        }
                    },
                    "the replica to connect");
            NodeCheckReport report =
                    check(master.uri(), replica.uri(), volatileNodes.get(2).uri());
            assertThat(report.hasErrors()).isTrue();
            NodeCheck replicaCheck = report.nodes().get(1);
            assertThat(replicaCheck.verdict()).isEqualTo(Verdict.ERROR);
            assertThat(replicaCheck.role()).isEqualTo("replica");
            assertThat(replicaCheck.findings().get(0)).contains("is a replica of", "list masters only");
            NodeCheck masterCheck = report.nodes().get(0);
            assertThat(masterCheck.verdict()).isEqualTo(Verdict.WARNING);
            assertThat(masterCheck.findings()).anyMatch(f -> f.contains("1 connected replica"));
        } finally {
            try (Jedis j = jedis(replica)) {
                j.replicaofNoOne();
            }
        }
    }

    @Test
    void flagsTheSameServerListedUnderTwoAddresses() {
        RedisServer node = volatileNodes.get(2);
        // An alias that build() cannot see through (a NAT, a proxy): the run_id tells.
        try (Forwarder alias = new Forwarder(node.port())) {
            NodeCheckReport report =
                    check(node.uri(), alias.uri(), volatileNodes.get(0).uri());
            assertThat(report.nodes())
                    .extracting(NodeCheck::verdict)
                    .containsExactly(Verdict.ERROR, Verdict.ERROR, Verdict.WARNING);
            assertThat(report.nodes().get(0).findings().get(0))
                    .contains("same server as " + alias.uri(), "same run_id");
        }
    }

    @Test
    void reportsUnknownPersistenceWhenConfigIsDenied() {
        RedisServer node = volatileNodes.get(0);
        try (Jedis j = jedis(node)) {
            j.aclSetUser("limited", "on", ">s3cret", "~*", "+@all", "-config");
        }
        try {
            NodeCheck check = check("redis://limited:s3cret@127.0.0.1:" + node.port())
                    .nodes()
                    .get(0);
            assertThat(check.persistence()).isEqualTo("unknown");
            assertThat(check.verdict()).isEqualTo(Verdict.WARNING);
            assertThat(check.findings().get(0)).contains("CONFIG is renamed or denied");
            assertThat(check.node()).doesNotContain("s3cret");
        } finally {
            try (Jedis j = jedis(node)) {
                j.aclDelUser("limited");
            }
        }
    }

    @Test
    void showsTheNodesTheRestartGuardKeepsOut() {
        try (Redlock redlock = Redlock.builder()
                .nodes(volatileNodes.uris())
                .nodeTimeout(Duration.ofMillis(200))
                .build()) {
            assertThat(redlock.checkNodes().toString())
                    .as("no TTL asked for yet")
                    .doesNotContain("restart guard");
            // The nodes were started for this class, far less than 10 minutes ago.
            assertThat(redlock.tryAcquire("r", Duration.ofMinutes(10))).isEmpty();
            NodeCheckReport report = redlock.checkNodes();
            assertThat(report.nodes()).allSatisfy(node -> {
                assertThat(node.verdict()).isEqualTo(Verdict.WARNING);
                assertThat(node.findings())
                        .anySatisfy(f -> assertThat(f)
                                .matches("restart guard: up [0-9.]+ s, votes in [0-9.]+ s: .*")
                                .contains("less than the longest TTL asked for (600 s)"));
            });
        }
    }

    @Test
    void anUnreachableNodeIsAnError() {
        RedisServer node = volatileNodes.get(1);
        node.stop();
        NodeCheck check = check(node.uri()).nodes().get(0);
        assertThat(check.verdict()).isEqualTo(Verdict.ERROR);
        assertThat(check.findings().get(0)).contains("unreachable", "start the node or remove it");
    }
}
