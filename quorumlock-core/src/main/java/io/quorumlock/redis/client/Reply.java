package io.quorumlock.redis.client;

import java.util.List;

/**
 * What came back for one command: one RESP2 value, or a {@link Failure} when no reply came. The
 * client knows commands and replies only; what a reply means is for the sender of the command.
 */
public sealed interface Reply {

    /** A simple string, such as {@code +OK}. */
    record Simple(String text) implements Reply {
        public static final Simple OK = new Simple("OK");
    }

    /** An error reply, such as {@code -NOSCRIPT ...} or {@code -READONLY ...}. */
    record Error(String message) implements Reply {}

    /** An integer reply. */
    record Int(long value) implements Reply {
        public static final Int ZERO = new Int(0);
        public static final Int ONE = new Int(1);
    }

    /** A bulk string. */
    record Bulk(String text) implements Reply {}

    /** An array of replies. */
    record Array(List<Reply> items) implements Reply {}

    /** The nil bulk string or nil array: {@code SET ... NX} found the key. */
    enum Nil implements Reply {
        NIL
    }

    /** No reply: why none came. */
    record Failure(Kind kind, String detail) implements Reply {}

    /** A few words on a reply's shape for messages: never its whole content. */
    static String shape(Reply reply) {
        if (reply instanceof Simple simple) {
            return "+" + NodeErrors.shortened(simple.text());
        }
        if (reply instanceof Int integer) {
            return ":" + integer.value();
        }
        if (reply instanceof Bulk bulk) {
            return "a bulk string of " + bulk.text().length() + " characters";
        }
        if (reply instanceof Array array) {
            return "an array of " + array.items().size() + " elements";
        }
        return reply.toString();
    }

    /** Why no reply came. */
    enum Kind {
        /** The request never left: no connection, or the node owes an older reply. */
        NOT_SENT,
        /** Sent, but no reply within the node timeout. */
        TIMED_OUT,
        /** The connection broke after the request was sent: it may have run. */
        BROKEN,
        /** The node sent bytes that are no reply, or a reply past the reader's limits. */
        PROTOCOL,
        /** The connection's set-up was refused for its configuration (a wrong password, untrusted TLS). */
        MISCONFIGURED
    }
}
