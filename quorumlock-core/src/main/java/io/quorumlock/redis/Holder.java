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
}
