package io.quorumlock.redis;

import io.quorumlock.NodeOutcome;
import io.quorumlock.NodeOutcome.Vote;

/**
 * One request of the algorithm to one node, and how a reply to it reads as a vote. The lock verbs
 * are conditional on the token; {@link #get} names a holder, {@link #info} and {@link #configGet}
 * serve {@code checkNodes()}.
 */
record Request(Verb verb, String key, String token, long ttlMillis) {

    enum Verb {
        SET_IF_ABSENT,
        DELETE_IF_EQUALS,
        EXTEND_IF_EQUALS,
        GET,
        INFO,
        CONFIG_GET
    }

    static Request setIfAbsent(String key, String token, long ttlMillis) {
        return new Request(Verb.SET_IF_ABSENT, key, token, ttlMillis);
    }

    static Request deleteIfEquals(String key, String token) {
        return new Request(Verb.DELETE_IF_EQUALS, key, token, 0);
    }

    static Request extendIfEquals(String key, String token, long ttlMillis) {
        return new Request(Verb.EXTEND_IF_EQUALS, key, token, ttlMillis);
    }

    /** Reads the key's value: whose lease holds it. */
    static Request get(String key) {
        return new Request(Verb.GET, key, null, 0);
    }

    static Request info(String section) {
        return new Request(Verb.INFO, section, null, 0);
    }

    static Request configGet(String name) {
        return new Request(Verb.CONFIG_GET, name, null, 0);
    }

    /** The command as an operator knows it, for messages. */
    String command() {
        return switch (verb) {
            case SET_IF_ABSENT -> "SET";
            case DELETE_IF_EQUALS -> "the release script (EVALSHA)";
            case EXTEND_IF_EQUALS -> "the extension script (EVALSHA)";
            case GET -> "GET";
            case INFO -> "INFO";
            case CONFIG_GET -> "CONFIG GET";
        };
    }

    /**
     * Whether {@code reply} has a shape a Redis server answers this request with. Any other shape
     * means the peer is no Redis server, or its stream is out of step: a protocol error.
     */
    boolean fits(Reply reply) {
        if (reply instanceof Reply.Error || reply instanceof Reply.Failure) {
            return true;
        }
        return switch (verb) {
            case SET_IF_ABSENT -> reply.equals(Reply.Simple.OK) || reply == Reply.Nil.NIL;
            case DELETE_IF_EQUALS, EXTEND_IF_EQUALS -> reply instanceof Reply.Int;
            case GET -> reply instanceof Reply.Bulk || reply == Reply.Nil.NIL;
            case INFO -> reply instanceof Reply.Bulk;
            case CONFIG_GET -> reply instanceof Reply.Array;
        };
    }

    /**
     * The vote a reply means: {@code +OK} to SET, or 1 to a script, is yes; nil to SET, or 0 to a
     * script, is "held by another owner"; an error reply is an error or a configuration error; a
     * reply of any other shape is no answer to this request, so an error too.
     */
    NodeOutcome outcome(String node, Reply reply) {
        if (reply instanceof Reply.Failure failure) {
            return new NodeOutcome(node, vote(failure.kind()), failure.detail());
        }
        if (reply instanceof Reply.Error error) {
            String misconfiguration = NodeErrors.misconfiguration(error.message());
            return misconfiguration != null
                    ? new NodeOutcome(node, Vote.MISCONFIGURED, misconfiguration)
                    : new NodeOutcome(node, Vote.ERROR, NodeErrors.shortened(error.message()));
        }
        boolean set = verb == Verb.SET_IF_ABSENT;
        if (set ? reply.equals(Reply.Simple.OK) : reply.equals(Reply.Int.ONE)) {
            return new NodeOutcome(node, Vote.YES, "");
        }
        if (set ? reply == Reply.Nil.NIL : reply.equals(Reply.Int.ZERO)) {
            return new NodeOutcome(node, Vote.HELD_BY_OTHER, "");
        }
        return new NodeOutcome(node, Vote.ERROR, "protocol error: " + shape(reply) + " is no reply to " + command());
    }

    private static Vote vote(Reply.Kind kind) {
        return switch (kind) {
            case NOT_SENT -> Vote.UNREACHABLE;
            case TIMED_OUT -> Vote.TIMED_OUT;
            case BROKEN, PROTOCOL -> Vote.ERROR;
            case MISCONFIGURED -> Vote.MISCONFIGURED;
        };
    }

    /** A few words on a reply's shape for the evidence: never its whole content. */
    static String shape(Reply reply) {
        if (reply instanceof Reply.Simple simple) {
            return "+" + NodeErrors.shortened(simple.text());
        }
        if (reply instanceof Reply.Int integer) {
            return ":" + integer.value();
        }
        if (reply instanceof Reply.Bulk bulk) {
            return "a bulk string of " + bulk.text().length() + " characters";
        }
        if (reply instanceof Reply.Array array) {
            return "an array of " + array.items().size() + " elements";
        }
        return reply.toString();
    }
}
