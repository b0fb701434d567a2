package io.quorumlock.redis;

import java.util.List;
import java.util.Optional;

/**
 * What {@link Redlock#checkNodes()} found on one node.
 *
 * @param node the node, without credentials
 * @param role {@code master}, {@code replica}, or {@code unknown} when the node did not answer
 * @param runId the server's run_id, which tells two entries that are the same server apart
 * @param persistence how the node keeps keys across a restart, e.g. {@code aof, fsync always}
 * @param verdict the worst of the findings
 * @param findings each problem with its remedy; empty when the node is fit for Redlock
 */
public record NodeCheck(
        String node, String role, Optional<String> runId, String persistence, Verdict verdict, List<String> findings) {

    /** How fit a node is to vote in Redlock. */
    public enum Verdict {
        /** Nothing found. */
        OK,
        /** The lock works, with a weaker guarantee; the finding names the remedy. */
        WARNING,
        /** The node breaks the algorithm's assumptions and must be fixed or removed. */
        ERROR
    }

    public NodeCheck {
        findings = List.copyOf(findings);
    }
}
