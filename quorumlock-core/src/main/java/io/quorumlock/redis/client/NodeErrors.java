package io.quorumlock.redis.client;

import java.util.Locale;

/**
 * Which error replies of a node only a change of configuration fixes, and the fix: these are
 * {@link Reply.Kind#MISCONFIGURED} where a connection's set-up meets them, not a busy lock and not a node that is
 * down. Pure: the reply's text in, the evidence out.
 */
public final class NodeErrors {

    /** How much of a node's error text goes into the evidence. */
    private static final int MAX_TEXT = 160;

    private static final String MASTERS_ONLY = "Redlock needs independent standalone masters: list masters only";

    private NodeErrors() {}

    /**
     * The evidence for an error reply that means a configuration mistake, such as {@code
     * WRONGPASS invalid username-password pair ...: check the password given for this node}; null
     * for any other error.
     */
    public static String misconfiguration(String error) {
        String remedy = remedy(error);
        if (remedy == null) {
            return null;
        }
        String text = shortened(error);
        return (text.endsWith(".") ? text.substring(0, text.length() - 1) : text) + ": " + remedy;
    }

    private static String remedy(String error) {
        String code = error.split(" ", 2)[0];
        String upper = error.toUpperCase(Locale.ROOT);
        switch (code) {
            case "WRONGPASS":
                return "check the password (and user) given for this node";
            case "NOAUTH":
                return "the node requires a password: set the password for this node";
            case "NOPERM":
                return "the node's ACL forbids a command the lock needs (SET, EVALSHA, EVAL, SCRIPT, INFO, SELECT):"
                        + " allow them for this user";
            case "READONLY":
                return "the node is a read-only replica; " + MASTERS_ONLY;
            case "MASTERDOWN":
                return "the node is a replica whose master is down; " + MASTERS_ONLY;
            case "MOVED", "ASK", "CLUSTERDOWN", "CROSSSLOT":
                return "the node is a Redis Cluster member; " + MASTERS_ONLY + ", not one cluster's shards";
            default:
                break;
        }
        if (upper.startsWith("ERR AUTH") && upper.contains("WITHOUT ANY PASSWORD CONFIGURED")
                || upper.startsWith("ERR CLIENT SENT AUTH, BUT NO PASSWORD IS SET")) {
            return "the node has no password: remove the password for this node, or set one on the node";
        }
        if (upper.startsWith("ERR") && upper.contains("DB INDEX")) {
            return "the node has no such database: check the /db number of the node's URI";
        }
        return null;
    }

    /** The error's text, cut short: a node's error is untrusted input. */
    public static String shortened(String error) {
        return error.length() <= MAX_TEXT ? error : error.substring(0, MAX_TEXT) + "...";
    }

    /** What went wrong with a connection, for evidence: "connection refused", or the exception's message. */
    static String reason(Exception e) {
        if (e instanceof java.net.ConnectException) {
            return "connection refused";
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
