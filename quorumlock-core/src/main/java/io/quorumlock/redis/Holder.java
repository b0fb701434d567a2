package io.quorumlock.redis;

import io.quorumlock.internal.Holders;
import io.quorumlock.redis.client.Reply;

/**
 * Who holds a lease: a short name stored with the key beside the random token ({@code <32 hex
 * digits> <holder>}), so that a refusal can say who holds the lock. It is compared as part of the
 * token, so it needs no trust; it is never a secret. The name's rule and the default name are
 * {@link Holders}'.
 */
final class Holder {

    private static final int MAX_LENGTH = Holders.MAX_LENGTH;
    private static final int TOKEN_LENGTH = 32;

    private Holder() {}

    /**
     * The holder named by a key's value as a node returned it; null if the value is not a string
     * that quorumlock wrote with a holder (another program's value is not shown: it is not ours).
     */
    static String of(Reply value) {
        if (!(value instanceof Reply.Bulk bulk)
                || bulk.text().length() <= TOKEN_LENGTH + 1
                || bulk.text().length() > TOKEN_LENGTH + 1 + MAX_LENGTH
                || bulk.text().charAt(TOKEN_LENGTH) != ' ') {
            return null;
        }
        String text = bulk.text();
        for (int i = 0; i < TOKEN_LENGTH; i++) {
            if (Character.digit(text.charAt(i), 16) < 0) {
                return null;
            }
        }
        String name = text.substring(TOKEN_LENGTH + 1);
        return Holders.problem(name).isEmpty() ? name : null;
    }

    /**
     * Whether a node's reply to a read of the key ({@code GET}) says that the key is not a string:
     * a key that another library keeps at the resource's name, such as a Redisson lock's hash.
     */
    static boolean otherType(Reply value) {
        return value instanceof Reply.Error error && error.message().startsWith("WRONGTYPE");
    }

    /**
     * What a refusal's evidence says of a key of another type at {@code resource}, with the node's
     * reply to {@code TYPE} (any other reply, such as an error, names no type).
     */
    static String otherLibrary(String resource, Reply type) {
        String kind = !(type instanceof Reply.Simple simple)
                ? "of another type"
                : simple.text().equals("hash")
                        ? "a hash, such as a Redisson lock"
                        : "a " + Holders.shown(simple.text());
        return "held by another library: the key '" + Holders.shown(resource) + "' is " + kind
                + ", not quorumlock's string; the lock is free once that key is gone";
    }
}
