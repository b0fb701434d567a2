package io.quorumlock.redis;

import java.lang.management.ManagementFactory;

/**
 * Who holds a lease: a short name stored with the key beside the random token ({@code <32 hex
 * digits> <holder>}), so that a refusal can say who holds the lock. It is compared as part of the
 * token, so it needs no trust; it is never a secret. Pure, apart from the default name.
 */
final class Holder {

    static final int MAX_LENGTH = 64;
    private static final int TOKEN_LENGTH = 32;

    private Holder() {}

    /** The process's own name: {@code pid@host}, as the JVM reports it. */
    static String defaultName() {
        String name = ManagementFactory.getRuntimeMXBean().getName();
        return name.length() <= MAX_LENGTH ? name : name.substring(0, MAX_LENGTH);
    }

    /** Why {@code name} cannot be a holder's name, or null if it can. */
    static String problem(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_LENGTH) {
            return "holder must be 1 to " + MAX_LENGTH + " characters, was "
                    + (name == null ? "null" : name.length() + " characters")
                    + ": name this process, such as \"billing-worker-1\" (the default is pid@host)";
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return "holder must be printable ASCII, without control characters: it goes into messages";
            }
        }
        return null;
    }

    /**
     * The holder named by a key's value as a node returned it; null if the value is not a string
     * that quorumlock wrote with a holder (another program's value is not shown: it is not ours).
     */
    static String of(Object value) {
        if (!(value instanceof String text)
                || text.length() <= TOKEN_LENGTH + 1
                || text.length() > TOKEN_LENGTH + 1 + MAX_LENGTH
                || text.charAt(TOKEN_LENGTH) != ' ') {
            return null;
        }
        for (int i = 0; i < TOKEN_LENGTH; i++) {
            if (Character.digit(text.charAt(i), 16) < 0) {
                return null;
            }
        }
        String name = text.substring(TOKEN_LENGTH + 1);
        return problem(name) == null ? name : null;
    }
}
