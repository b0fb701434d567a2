package io.quorumlock.spring;

import io.quorumlock.internal.Secrets;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Refuses a property whose value still holds a placeholder that nothing resolved, such as
 * {@code ${REDIS_PASSWORD}} with that variable unset: Boot binds it as it is, and the lock would
 * send it to the servers as the password or the host.
 */
final class Placeholders {

    /** A placeholder without a default: one with a default always resolves. */
    private static final Pattern UNRESOLVED = Pattern.compile("\\$\\{([^${}:]+)}");

    private Placeholders() {}

    /** Each entry of a list property, {@code property[i]}, as {@link #check(String, String)}. */
    static void check(String property, List<String> values) {
        for (int i = 0; i < values.size(); i++) {
            check(property + "[" + i + "]", values.get(i));
        }
    }

    /**
     * Refuses {@code value} if it holds an unresolved placeholder. The message shows the
     * placeholder where the value shows no secret: a URI's credentials are hidden first, and of a
     * password only a value that is the placeholder alone is named.
     */
    static void check(String property, String value) {
        if (value == null || !UNRESOLVED.matcher(value).find()) {
            return;
        }
        boolean password = property.endsWith("password");
        String shown = password ? (UNRESOLVED.matcher(value).matches() ? value : "") : Secrets.redactUri(value);
        Matcher placeholder = UNRESOLVED.matcher(shown);
        if (!placeholder.find()) {
            throw new QuorumlockPropertyException(property
                    + ": a placeholder in its credentials is not set (the value is not shown): set the variable it"
                    + " names, or give the placeholder a default, ${NAME:default}");
        }
        String name = placeholder.group(1).trim();
        String variable = name.replaceAll("[.\\-\\[\\]]", "_").toUpperCase(Locale.ROOT);
        String set = variable.equals(name)
                ? "set the environment variable " + name
                : "set the property " + name + " (or the environment variable " + variable + ")";
        throw new QuorumlockPropertyException(property + ": the placeholder " + placeholder.group() + " is not set: "
                + set + ", or give the placeholder a default, "
                + (password ? "${" + name + ":} for none" : "${" + name + ":value}"));
    }
}
