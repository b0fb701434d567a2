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
        assertThat(NodeInspector.inspect("redis://a:1", NodeInspectorTest::fitNode, () -> null)
                        .verdict())
                .isEqualTo(Verdict.OK);
        NodeCheck kept = NodeInspector.inspect(
                "redis://a:1", NodeInspectorTest::fitNode, () -> "restart guard: up 3 s, votes in 27 s");
        assertThat(kept.verdict()).isEqualTo(Verdict.WARNING);
        assertThat(kept.findings()).containsExactly("restart guard: up 3 s, votes in 27 s");
        assertThat(kept.runId()).contains("r1");
    }

    @Test
    void flagsEveryEntryOfTheSameServer() {
        List<NodeCheck> checks = NodeInspector.flagSameServers(
                List.of(check("redis://a:1", "r1"), check("redis://b:1", "r2"), check("redis://c:1", "r1")));
        assertThat(checks).extracting(NodeCheck::verdict).containsExactly(Verdict.ERROR, Verdict.OK, Verdict.ERROR);
        assertThat(checks.get(0).findings().get(0)).contains("same server as redis://c:1", "list independent servers");
    }
}
