package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.redis.NodeCheck.Verdict;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.InfoReply;
import io.quorumlock.redis.client.Reply;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The judgement of INFO and CONFIG answers; the real-server side is in RedlockIT. */
class NodeInspectorTest {

    private static NodeCheck check(String name, String runId) {
        return new NodeCheck(name, "master", Optional.of(runId), "aof, fsync always", Verdict.OK, List.of());
    }

    @Test
    void parsesInfoLines() {
        assertThat(InfoReply.fields("# Replication\r\nrole:slave\r\nmaster_host:10.0.0.1\r\n"))
                .containsEntry("role", "slave")
                .containsEntry("master_host", "10.0.0.1")
                .doesNotContainKey("# Replication");
    }

    /** A persistent master, as INFO and CONFIG GET describe it. */
    private static Reply fitNode(Command request) {
        return switch (request.kind()) {
            case INFO ->
                new Reply.Bulk("# " + request.key() + "\r\nrole:master\r\nrun_id:r1\r\nconnected_slaves:0\r\n");
            case CONFIG_GET ->
                new Reply.Array(List.of(
                        new Reply.Bulk(request.key()),
                        new Reply.Bulk(request.key().equals("appendonly") ? "yes" : "always")));
            default -> new Reply.Error("ERR unexpected");
        };
    }

    @Test
    void showsWhenTheRestartGuardKeepsANodeOut() {
        assertThat(NodeInspector.inspect("redis://a:1", NodeInspectorTest::fitNode, () -> null, Optional.empty())
                        .verdict())
                .isEqualTo(Verdict.OK);
        NodeCheck kept = NodeInspector.inspect(
                "redis://a:1",
                NodeInspectorTest::fitNode,
                () -> "restart guard: up 3 s, votes in 27 s",
                Optional.empty());
        assertThat(kept.verdict()).isEqualTo(Verdict.WARNING);
        assertThat(kept.findings()).containsExactly("restart guard: up 3 s, votes in 27 s");
        assertThat(kept.runId()).contains("r1");
    }

    /** The master Sentinel names: where it was found and its replicas, which a failover promotes. */
    @Test
    void aMasterBehindSentinelShowsWhereItWasFoundAndItsReplicas() {
        NodeCheck check = NodeInspector.inspect(
                "redis-sentinel://s1:26379#m",
                request -> request.kind() != Command.Kind.INFO
                        ? fitNode(request)
                        : new Reply.Bulk(
                                request.key().equals("replication")
                                        ? "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n"
                                                + "slave0:ip=10.0.0.8,port=6379,state=online,offset=42,lag=0\r\n"
                                                + "slave1:ip=10.0.0.9,port=6379,state=wait_bgsave,offset=0,lag=1\r\n"
                                        : "# Other\r\nrun_id:r1\r\n"),
                () -> null,
                Optional.of("the master 10.0.0.7:6379, named by the sentinel s1:26379 (of 3)"));
        assertThat(check.verdict()).isEqualTo(Verdict.WARNING);
        assertThat(check.findings())
                .containsExactly("the master 10.0.0.7:6379, named by the sentinel s1:26379 (of 3), with 2 connected"
                        + " replica(s) (10.0.0.8:6379 online, lag 0 s; 10.0.0.9:6379 wait_bgsave, lag 1 s): replication"
                        + " is asynchronous, so a failover may promote a replica that never got a holder's key; a lease"
                        + " kept alive is then lost with its notice, and one that is not may be granted twice");
    }

    @Test
    void flagsEveryEntryOfTheSameServer() {
        List<NodeCheck> checks = NodeInspector.flagSameServers(
                List.of(check("redis://a:1", "r1"), check("redis://b:1", "r2"), check("redis://c:1", "r1")));
        assertThat(checks).extracting(NodeCheck::verdict).containsExactly(Verdict.ERROR, Verdict.OK, Verdict.ERROR);
        assertThat(checks.get(0).findings().get(0)).contains("same server as redis://c:1", "list independent servers");
    }
}
