package io.quorumlock.redis.client;

import io.quorumlock.internal.Secrets;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;

/**
 * A parsed {@code redis://[user:password@]host:port[/db]} node URI ({@code rediss://} for TLS).
 * Never prints its password.
 *
 * <p>The userinfo is everything between {@code ://} and the <em>last</em> {@code @}, so a password
 * may hold {@code @}, {@code /}, {@code :}, {@code ?} and {@code #} as they are; it splits into user
 * and password at its <em>first</em> {@code :} (no {@code :}: all of it is the password, as in
 * {@code redis://password@host}). User and password are percent-decoded (UTF-8): a user name with
 * {@code :} is written {@code %3A}, and a literal {@code %} must be written {@code %25}. A URI that
 * does not parse is shown in the error with its userinfo, query and fragment as {@code ***} ({@link
 * Secrets#redactUri}).
 */
public record NodeAddress(
        String host, int port, int database, Optional<String> user, Optional<String> password, boolean tls) {

    public static final int DEFAULT_PORT = 6379;

    private static final String GRAMMAR = "redis://[user:password@]host:port[/db], or rediss:// for TLS;"
            + " Redis Sentinel and Redis Cluster addresses are not supported as nodes: list each independent master";

    public static NodeAddress parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException(
                    "node URI must not be empty: give redis://host:port, or rediss://host:port for TLS");
        }
        String trimmed = text.trim();
        int separator = trimmed.indexOf("://");
        if (separator < 0) {
            throw invalid(trimmed, "the scheme must be redis:// or rediss://");
        }
        String scheme = trimmed.substring(0, separator).toLowerCase(Locale.ROOT);
        switch (scheme) {
            case "redis", "rediss" -> {}
            default -> throw invalid(trimmed, "the scheme must be redis:// or rediss://");
        }
        String rest = trimmed.substring(separator + 3);
        int at = rest.lastIndexOf('@');
        // What follows the userinfo carries no credentials: java.net.URI may parse it, and its
        // messages may be shown.
        if (at + 1 == rest.length()) {
            throw invalid(trimmed, "it names no host; write redis://host:port");
        }
        URI uri;
        try {
            uri = new URI("redis://" + rest.substring(at + 1));
        } catch (URISyntaxException e) {
            throw invalid(trimmed, "it is not a URI (" + e.getReason() + ")");
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw invalid(trimmed, "query parameters and fragments are not supported");
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            throw invalid(
                    trimmed,
                    uri.getRawAuthority() != null && uri.getRawAuthority().contains(":")
                            ? "the port must be a number"
                            : "it names no host; write redis://host:port");
        }
        int port = uri.getPort() == -1 ? DEFAULT_PORT : uri.getPort();
        if (port < 1 || port > 65535) {
            throw invalid(trimmed, "the port must be between 1 and 65535");
        }
        int database = parseDatabase(trimmed, uri.getRawPath());
        Optional<String> user = Optional.empty();
        Optional<String> password = Optional.empty();
        if (at >= 0) {
            String info = rest.substring(0, at);
            int colon = info.indexOf(':');
            if (colon < 0) {
                password = decode(trimmed, info);
            } else {
                user = decode(trimmed, info.substring(0, colon));
                password = decode(trimmed, info.substring(colon + 1));
            }
        }
        return new NodeAddress(
                uri.getHost().toLowerCase(Locale.ROOT), port, database, user, password, scheme.equals("rediss"));
    }

    /** This address with {@code newPassword} in place of its own. */
    public NodeAddress withPassword(String newPassword) {
        return new NodeAddress(host, port, database, user, Optional.of(newPassword), tls);
    }

    private static int parseDatabase(String text, String path) {
        if (path == null || path.isEmpty() || path.equals("/")) {
            return 0;
        }
        String number = path.substring(1);
        if (!number.chars().allMatch(c -> c >= '0' && c <= '9') || number.length() > 9) {
            throw invalid(text, "the path must be a database number such as /0");
        }
        return Integer.parseInt(number);
    }

    /** A percent-decoded part of the userinfo, empty if empty. Its messages never show it. */
    private static Optional<String> decode(String text, String part) {
        if (part.isEmpty()) {
            return Optional.empty();
        }
        if (part.indexOf('%') < 0) {
            return Optional.of(part);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(part.length());
        for (int i = 0; i < part.length(); i++) {
            if (part.charAt(i) != '%') {
                int next = part.indexOf('%', i);
                int end = next < 0 ? part.length() : next;
                bytes.writeBytes(part.substring(i, end).getBytes(StandardCharsets.UTF_8));
                i = end - 1;
                continue;
            }
            int high = i + 2 < part.length() ? Character.digit(part.charAt(i + 1), 16) : -1;
            int low = high < 0 ? -1 : Character.digit(part.charAt(i + 2), 16);
            if (low < 0) {
                throw invalid(
                        text,
                        "the user or password has a '%' that is not followed by two hex digits;"
                                + " write a literal % as %25");
            }
            bytes.write(high * 16 + low);
            i += 2;
        }
        try {
            return Optional.of(StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString());
        } catch (CharacterCodingException e) {
            throw invalid(text, "the percent-encoded user or password is not UTF-8");
        }
    }

    private static IllegalArgumentException invalid(String text, String why) {
        return new IllegalArgumentException(
                "invalid node URI '" + Secrets.redactUri(text) + "': " + why + " (expected " + GRAMMAR + ")");
    }

    /** The server this address points to, ignoring the database: the same server listed twice is one node. */
    public String server() {
        return host + ":" + port;
    }

    @Override
    public String toString() {
        return (tls ? "rediss://" : "redis://") + server() + (database == 0 ? "" : "/" + database);
    }
}
