package io.quorumlock.redis;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Optional;

/**
 * A parsed {@code redis://[user:password@]host:port[/db]} node URI ({@code rediss://} for TLS).
 * Never prints its password.
 */
record NodeAddress(String host, int port, int database, Optional<String> user, Optional<String> password, boolean tls) {

    static final int DEFAULT_PORT = 6379;

    static NodeAddress parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("node URI must not be empty: give redis://host:port");
        }
        URI uri;
        try {
            uri = new URI(text.trim());
        } catch (URISyntaxException e) {
            throw invalid(text, "it is not a URI (" + e.getReason() + ")");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("redis") && !scheme.equals("rediss")) {
            throw invalid(text, "the scheme must be redis:// (or rediss:// for TLS)");
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            throw invalid(text, "it names no host; write redis://host:port");
        }
        if (uri.getQuery() != null || uri.getFragment() != null) {
            throw invalid(text, "query parameters and fragments are not supported");
        }
        int port = uri.getPort() == -1 ? DEFAULT_PORT : uri.getPort();
        if (port < 1 || port > 65535) {
            throw invalid(text, "the port must be between 1 and 65535");
        }
        int database = parseDatabase(text, uri.getPath());
        Optional<String> user = Optional.empty();
        Optional<String> password = Optional.empty();
        if (uri.getUserInfo() != null) {
            String info = uri.getUserInfo();
            int colon = info.indexOf(':');
            if (colon < 0) {
                password = nonEmpty(info);
            } else {
                user = nonEmpty(info.substring(0, colon));
                password = nonEmpty(info.substring(colon + 1));
            }
        }
        return new NodeAddress(
                uri.getHost().toLowerCase(Locale.ROOT), port, database, user, password, scheme.equals("rediss"));
    }

    /** This address with {@code newPassword} in place of its own. */
    NodeAddress withPassword(String newPassword) {
        return new NodeAddress(host, port, database, user, Optional.of(newPassword), tls);
    }

    private static int parseDatabase(String text, String path) {
        if (path == null || path.isEmpty() || path.equals("/")) {
            return 0;
        }
        try {
            int db = Integer.parseInt(path.substring(1));
            if (db < 0) {
                throw invalid(text, "the database number must not be negative");
            }
            return db;
        } catch (NumberFormatException e) {
            throw invalid(text, "the path must be a database number such as /0");
        }
    }

    private static Optional<String> nonEmpty(String s) {
        return s.isEmpty() ? Optional.empty() : Optional.of(s);
    }

    private static IllegalArgumentException invalid(String text, String why) {
        return new IllegalArgumentException("invalid node URI '" + redact(text) + "': " + why
                + " (expected redis://[user:password@]host:port[/db])");
    }

    /** Hides a password in a URI-like text, for error messages about URIs that did not parse. */
    static String redact(String text) {
        return text.replaceAll("(://[^:/@]*:)[^@/]*@", "$1***@");
    }

    /** The server this address points to, ignoring the database: the same server listed twice is one node. */
    String server() {
        return host + ":" + port;
    }

    @Override
    public String toString() {
        return (tls ? "rediss://" : "redis://") + server() + (database == 0 ? "" : "/" + database);
    }
}
