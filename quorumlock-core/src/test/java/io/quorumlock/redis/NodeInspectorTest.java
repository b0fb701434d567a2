package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.redis.NodeCheck.Verdict;
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
        assertThat(NodeInspector.parse("# Replication\r\nrole:slave\r\nmaster_host:10.0.0.1\r\n"))
                .containsEntry("role", "slave")
                .containsEntry("master_host", "10.0.0.1")
                .doesNotContainKey("# Replication");
    }

    @Test
    void flagsEveryEntryOfTheSameServer() {
        List<NodeCheck> checks = NodeInspector.flagSameServers(
                List.of(check("redis://a:1", "r1"), check("redis://b:1", "r2"), check("redis://c:1", "r1")));
        assertThat(checks).extracting(NodeCheck::verdict).containsExactly(Verdict.ERROR, Verdict.OK, Verdict.ERROR);
        assertThat(checks.get(0).findings().get(0)).contains("same server as redis://c:1", "list independent servers");
    }
}
