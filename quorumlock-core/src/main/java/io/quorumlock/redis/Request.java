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

    /** The vote a reply means: {@code OK} or 1 is yes, nil or 0 is "held by another owner". */
    NodeOutcome outcome(String node, Object reply) {
        if (reply instanceof Resp.Failure failure) {
            return new NodeOutcome(node, failure.vote(), failure.detail());
        }
        if (reply instanceof Resp.Error error) {
            String misconfiguration = NodeErrors.misconfiguration(error.message());
            return misconfiguration != null
                    ? new NodeOutcome(node, Vote.MISCONFIGURED, misconfiguration)
                    : new NodeOutcome(node, Vote.ERROR, NodeErrors.shortened(error.message()));
        }
        boolean yes = "OK".equals(reply) || Long.valueOf(1).equals(reply);
        return new NodeOutcome(node, yes ? Vote.YES : Vote.HELD_BY_OTHER, "");
    }
}
