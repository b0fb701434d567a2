package io.quorumlock.cli.lock;

import io.quorumlock.internal.Secrets;
import java.util.Locale;

/**
 * The JDBC URLs the command line serves: PostgreSQL and MariaDB, whose drivers it carries. Any
 * other is refused as a URL, naming the ones it serves, rather than left to the driver manager
 * (whose remedy, a driver on the class path, a user of the command line cannot apply).
 */
final class JdbcUrls {

    /** The URLs served, for messages. */
    static final String SERVED =
            "jdbc:postgresql://HOST[:PORT]/DATABASE (PostgreSQL) or jdbc:mariadb://HOST[:PORT]/DATABASE (MariaDB)";

    private JdbcUrls() {}

    /**
     * Refuses a URL the command line cannot serve.
     *
     * @param setting where the URL was given: {@code --jdbc}, or {@code jdbc in FILE}
     * @throws IllegalArgumentException naming the URL (without its password), the URLs served and
     *     the likely one meant
     */
    static void check(String url, String setting) {
        if (url.startsWith("jdbc:postgresql:") || url.startsWith("jdbc:mariadb:")) {
            return; // as the drivers take them: case-sensitive
        }
        String lower = url.toLowerCase(Locale.ROOT);
        String shown = Secrets.redactUri(url);
        String hint;
        if (lower.startsWith("jdbc:postgres") || lower.startsWith("jdbc:pgsql:") || lower.startsWith("postgres")) {
            hint = "; for PostgreSQL write jdbc:postgresql://";
        } else if (lower.startsWith("jdbc:mariadb:")) {
            hint = "; write jdbc:mariadb: in lower case";
        } else if (lower.startsWith("jdbc:mysql:")) {
            hint = "; MySQL is not served (it has no sequences, which the lock's fencing tokens come from): for a"
                    + " MariaDB server write jdbc:mariadb://";
        } else if (!lower.startsWith("jdbc:")) {
            hint = "; a JDBC URL begins with jdbc:";
        } else {
            hint = "";
        }
        throw new IllegalArgumentException(
                setting + " " + shown + ": not a database URL this command serves; give " + SERVED + hint);
    }
}
