package io.quorumlock.cli.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.cli.Text;
import io.quorumlock.redis.NodeCheck;
import io.quorumlock.redis.NodeCheck.Verdict;
import io.quorumlock.redis.NodeCheckReport;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NodeCheckTableTest {

    private static final String RUN_ID = "3f2a9c1e5b7d4a6f8e0c2b4d6f8a0c2e4b6d8f0a";
    private static final String NO_AOF = "loses its keys on restart (appendonly no): set appendonly yes and appendfsync"
            + " always, or keep a restarted node out of the quorum for at least the longest TTL";

    private static NodeCheck ok(String node, String runId) {
        return new NodeCheck(node, "master", Optional.of(runId), "aof, fsync always", Verdict.OK, List.of());
    }

    @Test
    void aHealthySetIsATableAndOneLineThatSaysSo() {
        List<String> lines = NodeCheckTable.lines(
                new NodeCheckReport(List.of(
                        ok("redis://10.0.0.1:6379", RUN_ID),
                        ok("redis://10.0.0.2:6379", "b" + RUN_ID.substring(1)),
                        ok("redis://10.0.0.3:6379", "c" + RUN_ID.substring(1)))),
                2);

        assertThat(lines)
                .containsExactly(
                        "node                   role    run_id    persistence        verdict",
                        "redis://10.0.0.1:6379  master  3f2a9c1e  aof, fsync always  ok",
                        "redis://10.0.0.2:6379  master  bf2a9c1e  aof, fsync always  ok",
                        "redis://10.0.0.3:6379  master  cf2a9c1e  aof, fsync always  ok",
                        "",
                        "OK: the 3 nodes can serve Redlock (quorum 2).");
    }

    @Test
    void findingsGoBelowTheTableWrappedWithTheirRemedy() {
        NodeCheck replica = new NodeCheck(
                "redis://10.0.0.2:6379",
                "replica",
                Optional.of(RUN_ID),
                "none",
                Verdict.ERROR,
                List.of("is a replica of 10.0.0.1:6379: Redlock needs independent masters; list masters only", NO_AOF));
        NodeCheck down = new NodeCheck(
                "redis://10.0.0.3:6379",
                "unknown",
                Optional.empty(),
                "unknown",
                Verdict.ERROR,
                List.of("unreachable (could not connect: connection refused): start the node or remove it from the"
                        + " list"));

        List<String> lines = NodeCheckTable.lines(
                new NodeCheckReport(List.of(ok("redis://10.0.0.1:6379", RUN_ID), replica, down)), 2);

        assertThat(lines)
                .containsExactly(
                        "node                   role     run_id    persistence        verdict",
                        "redis://10.0.0.1:6379  master   3f2a9c1e  aof, fsync always  ok",
                        "redis://10.0.0.2:6379  replica  3f2a9c1e  none               ERROR",
                        "redis://10.0.0.3:6379  unknown  -         unknown            ERROR",
                        "",
                        "redis://10.0.0.2:6379  ERROR",
                        "  - is a replica of 10.0.0.1:6379: Redlock needs independent masters; list masters only",
                        "  - loses its keys on restart (appendonly no): set appendonly yes and appendfsync always, or keep a",
                        "    restarted node out of the quorum for at least the longest TTL",
                        "",
                        "redis://10.0.0.3:6379  ERROR",
                        "  - unreachable (could not connect: connection refused): start the node or remove it from the list",
                        "",
                        "FAILED: 2 of 3 nodes have errors: fix them or leave them out, as above.");
        assertThat(lines).allSatisfy(line -> assertThat(line.length()).isLessThanOrEqualTo(Text.WIDTH));
    }

    @Test
    void warningsAloneStillPass() {
        NodeCheck volatileNode = new NodeCheck(
                "redis://127.0.0.1:6379", "master", Optional.of(RUN_ID), "none", Verdict.WARNING, List.of(NO_AOF));

        List<String> lines = NodeCheckTable.lines(new NodeCheckReport(List.of(volatileNode)), 1);

        assertThat(lines.get(1)).isEqualTo("redis://127.0.0.1:6379  master  3f2a9c1e  none         warning");
        assertThat(lines.subList(lines.size() - 2, lines.size()))
                .containsExactly(
                        "OK with warnings: 1 of 1 node has warnings and none has an error; the node can serve a single-node",
                        "lock, with the weaker guarantee each warning names.");
    }

    @Test
    void wrapsAtWordsAndKeepsAWordLongerThanTheLineWhole() {
        assertThat(Text.wrap("aa bb cc dd", "- ", "  ", 8)).containsExactly("- aa bb", "  cc dd");
        assertThat(Text.wrap("short", "", "", 80)).containsExactly("short");
        assertThat(Text.wrap("x averyveryverylongword y", "", "", 8))
                .containsExactly("x", "averyveryverylongword", "y");
    }
}
