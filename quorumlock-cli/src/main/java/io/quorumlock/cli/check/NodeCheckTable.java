package io.quorumlock.cli.check;

import io.quorumlock.cli.Text;
import io.quorumlock.redis.NodeCheck;
import io.quorumlock.redis.NodeCheck.Verdict;
import io.quorumlock.redis.NodeCheckReport;
import java.util.ArrayList;
import java.util.List;

/**
 * The result of {@code quorumlock check} as lines a person reads at a glance: one row per node,
 * then each node's findings with their remedies, wrapped, below the table so that it stays narrow,
 * then the verdict on the whole set.
 *
 * <pre>
 * node                     role     run_id    persistence  verdict
 * redis://127.0.0.1:35991  master   3f2a9c1e  none         warning
 * redis://127.0.0.1:1      unknown  -         unknown      ERROR
 *
 * redis://127.0.0.1:35991  warning
 *   - loses its keys on restart (appendonly no): set appendonly yes and appendfsync always, or keep a
 *     restarted node out of the quorum for at least the longest TTL
 * ...
 * </pre>
 */
final class NodeCheckTable {

    /** How much of a run_id is shown: enough to tell servers apart, and to see two that are one. */
    static final int RUN_ID_SHOWN = 8;

    private static final String[] HEADERS = {"node", "role", "run_id", "persistence", "verdict"};

    private NodeCheckTable() {}

    /** The table, the findings node by node, and a last line that sums up; {@code quorum} as the lock computes it. */
    static List<String> lines(NodeCheckReport report, int quorum) {
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADERS);
        for (NodeCheck node : report.nodes()) {
            rows.add(new String[] {
                node.node(),
                node.role(),
                node.runId().map(NodeCheckTable::shortRunId).orElse("-"),
                node.persistence(),
                label(node.verdict())
            });
        }
        List<String> lines = new ArrayList<>(Text.table(rows));
        for (NodeCheck node : report.nodes()) {
            if (!node.findings().isEmpty()) {
                lines.add("");
                lines.add(node.node() + "  " + label(node.verdict()));
                node.findings().forEach(finding -> lines.addAll(Text.wrap(finding, "  - ", "    ", Text.WIDTH)));
            }
        }
        lines.add("");
        lines.addAll(Text.wrap(summary(report, quorum), "", "", Text.WIDTH));
        return lines;
    }

    private static String label(Verdict verdict) {
        return switch (verdict) {
            case OK -> "ok";
            case WARNING -> "warning";
            case ERROR -> "ERROR";
        };
    }

    private static String shortRunId(String runId) {
        return runId.substring(0, Math.min(RUN_ID_SHOWN, runId.length()));
    }

    private static String summary(NodeCheckReport report, int quorum) {
        int total = report.nodes().size();
        long errors = count(report, Verdict.ERROR);
        long warnings = count(report, Verdict.WARNING);
        if (errors > 0) {
            return "FAILED: " + ofNodes(errors, total) + " errors: fix them or leave them out, as above.";
        }
        String fit = total == 1
                ? "the node can serve a single-node lock"
                : "the " + total + " nodes can serve Redlock (quorum " + quorum + ")";
        if (warnings > 0) {
            return "OK with warnings: " + ofNodes(warnings, total) + " warnings and none has an error; " + fit
                    + ", with the weaker guarantee each warning names.";
        }
        return "OK: " + fit + ".";
    }

    /** {@code 1 of 3 nodes has}, {@code 2 of 3 nodes have}. */
    private static String ofNodes(long some, int total) {
        return some + " of " + total + (total == 1 ? " node" : " nodes") + (some == 1 ? " has" : " have");
    }

    private static long count(NodeCheckReport report, Verdict verdict) {
        return report.nodes().stream().filter(n -> n.verdict() == verdict).count();
    }
}
