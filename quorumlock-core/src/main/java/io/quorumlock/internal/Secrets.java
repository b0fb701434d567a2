package io.quorumlock.internal;

/**
 * Hides what may be a secret in an address a user gave, so that the address can go into messages
 * and logs. Every backend uses the same rule for the text it was given (a Redis URI, an etcd
 * endpoint, a ZooKeeper connect string):
 *
 * <ul>
 *   <li>the userinfo is everything after {@code scheme://} (or from the start, without a scheme)
 *       up to the <em>last</em> {@code @}, so that a password may hold {@code @}, {@code /} and
 *       {@code :}; it is shown as {@code ***};
 *   <li>after the host, a query (which may carry {@code ?password=}) and a fragment are shown as
 *       {@code ?***} and {@code #***}.
 * </ul>
 *
 * Only the text of an address that could not be used needs this; an address that parsed is shown
 * from its parts, without its credentials.
 */
public final class Secrets {

    /** What stands in for a hidden secret. */
    public static final String MASK = "***";

    private Secrets() {}

    /**
     * {@code text} with its userinfo, query and fragment replaced by {@value #MASK}; null stays
     * null. Never throws.
     */
    public static String redactUri(String text) {
        if (text == null) {
            return null;
        }
        int scheme = text.indexOf("://");
        int start = scheme < 0 ? 0 : scheme + 3;
        int at = text.lastIndexOf('@');
        StringBuilder shown = new StringBuilder(text.substring(0, start));
        String rest = text.substring(start);
        if (at >= start) {
            shown.append(MASK);
            rest = text.substring(at);
        }
        int query = indexOfAny(rest, '?', '#');
        if (query >= 0) {
            rest = rest.substring(0, query + 1) + MASK;
        }
        return shown.append(rest).toString();
    }

    private static int indexOfAny(String text, char a, char b) {
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) == a || text.charAt(i) == b) {
                return i;
            }
        }
        return -1;
    }
}
