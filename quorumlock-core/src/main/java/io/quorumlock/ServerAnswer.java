package io.quorumlock;

/**
 * What one server answered in one attempt: the evidence carried by exceptions and logs. A Redis
 * node's answer is a vote, counted towards the quorum; a ZooKeeper ensemble or an etcd cluster
 * gives one answer for all its members.
 *
 * @param server the server, as {@code redis://host:port/db} (never with its password), or the
 *     ZooKeeper ensemble or etcd cluster
 * @param kind what it answered
 * @param detail a short explanation, such as the error message; empty when there is nothing to add
 */
public record ServerAnswer(String server, Kind kind, String detail) {

    /** What a server answered to one request. */
    public enum Kind {
        /** The server granted the request. */
        GRANTED("granted"),
        /** The key is held by another owner (or, on extension and release, no longer ours). */
        HELD_BY_OTHER("held by another owner"),
        /** The request was sent but no reply came within the node timeout. */
        TIMED_OUT("timed out"),
        /** The request was never sent: no connection could be made in time. */
        UNREACHABLE("unreachable"),
        /** The server answered with an error, or the connection broke after the request was sent. */
        ERROR("error"),
        /**
         * The server refused for a reason only a change of configuration fixes: a wrong, missing or
         * unneeded password, an ACL that forbids a command the lock needs, a replica or a Redis
         * Cluster member where an independent master belongs. The detail names the remedy.
         */
        MISCONFIGURED("configuration error"),
        /** The server was not counted: the outcome was decided before it answered. */
        PENDING("no reply before the decision"),
        /** The server's answer was not counted by the client's own rules (the restart guard). */
        EXCLUDED("excluded");

        private final String description;

        Kind(String description) {
            this.description = description;
        }

        /** A few words for messages, such as "held by another owner". */
        public String description() {
            return description;
        }
    }

    public ServerAnswer {
        detail = detail == null ? "" : detail;
    }

    @Override
    public String toString() {
        return detail.isEmpty()
                ? server + ": " + kind.description()
                : server + ": " + kind.description() + " (" + detail + ")";
    }
}
