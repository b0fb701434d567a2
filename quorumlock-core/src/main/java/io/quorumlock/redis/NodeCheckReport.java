package io.quorumlock.redis;

import java.util.List;

/**
 * The result of {@link Redlock#checkNodes()}, node by node.
 *
 * @param nodes one check per configured node, in configured order
 */
public record NodeCheckReport(List<NodeCheck> nodes) {

    public NodeCheckReport {
        nodes = List.copyOf(nodes);
    }

    /** True if any node has an error. */
    public boolean hasErrors() {
        return nodes.stream().anyMatch(n -> n.verdict() == NodeCheck.Verdict.ERROR);
    }

    /** True if any node has a warning. */
    public boolean hasWarnings() {
        return nodes.stream().anyMatch(n -> n.verdict() == NodeCheck.Verdict.WARNING);
    }

    /** The report as lines of text, one node and its findings after another. */
    @Override
    public String toString() {
        StringBuilder text = new StringBuilder();
        for (NodeCheck n : nodes) {
            text.append(n.node())
                    .append("  ")
                    .append(n.verdict())
                    .append("  role ")
                    .append(n.role())
                    .append(", run_id ")
                    .append(n.runId()
                            .map(id -> id.substring(0, Math.min(8, id.length())))
                            .orElse("?"))
                    .append(", persistence ")
                    .append(n.persistence())
                    .append('\n');
            n.findings().forEach(f -> text.append("    - ").append(f).append('\n'));
        }
        return text.toString();
    }
}
