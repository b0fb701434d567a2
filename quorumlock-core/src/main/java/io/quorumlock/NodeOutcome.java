package io.quorumlock;

/**
 * What one node answered in one attempt: the evidence carried by exceptions and logs.
 *
 * @param node the node, as {@code redis://host:port/db} (never with its password)
 * @param vote the node's answer
 * @param detail a short explanation, such as the error message; empty when there is nothing to add
 */
public record NodeOutcome(String node, Vote vote, String detail) {

    /** A node's answer to one request. */
    public enum Vote {
        /** The node granted the request. */
        YES("granted"),
        /** The key is held by another owner (or, on extension and release, no longer ours). */
        HELD_BY_OTHER("held by another owner"),
        /** The request was sent but no reply came within the node timeout. */
        TIMED_OUT("timed out"),
        /** The request was never sent: no connection could be made in time. */
        UNREACHABLE("unreachable"),
        /** The node answered with an error, or the connection broke after the request was sent. */
        ERROR("error"),
        /**
         * The node refused for a reason only a change of configuration fixes: a wrong, missing or
         * unneeded password, an ACL that forbids a command the lock needs, a replica or a Redis
         * Cluster member where an independent master belongs. The detail names the remedy.
         */
        MISCONFIGURED("configuration error"),
        /** The node was not counted: the outcome was decided before it answered. */
        PENDING("no reply before the decision"),
        /** The node's vote was not counted by the client's own rules. */
        EXCLUDED("excluded");

        private final String description;

        Vote(String description) {
            this.description = description;
        }

        /** A few words for messages, such as "held by another owner". */
        public String description() {
            return description;
        }
    }

    public NodeOutcome {
        detail = detail == null ? "" : detail;
    }

    @Override
    public String toString() {
        return detail.isEmpty()
                ? node + ": " + vote.description()
                : node + ": " + vote.description() + " (" + detail + ")";
    }
}
