package io.quorumlock.redis.client;

import io.quorumlock.internal.Secrets;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

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
 *
 * <p>A master that Redis Sentinel manages is named {@code
 * redis-sentinel://[user:password@]host:port[,host:port...][/db]#master} ({@code rediss-sentinel://}
 * for TLS to the sentinels and the master alike): {@link #sentinels()} lists the sentinels and the
 * master's name, the user and password are the master's and the sentinels' alike, and {@link
 * #host()} and {@link #port()} are the first sentinel's.
 *
 * <p>A Redis Cluster is named {@code redis-cluster://[user:password@]host:port[,host:port...]}
 * ({@code rediss-cluster://} for TLS): {@link #clusterSeeds()} lists the nodes asked first for the
 * cluster's layout (any of its nodes will do), the user and password are every node's, and {@link
 * #host()} and {@link #port()} are the first seed's. A cluster has database 0 only.
 *
 * @param sentinels the sentinels that name the master, if Sentinel manages it
 * @param clusterSeeds the nodes of a Redis Cluster to ask for its layout; empty for a single server
 */
public record NodeAddress(
        String host,
        int port,
        int database,
        Optional<String> user,
        Optional<String> password,
        boolean tls,
        Optional<Sentinels> sentinels,
        List<InetSocketAddress> clusterSeeds) {

    public NodeAddress {
        clusterSeeds = List.copyOf(clusterSeeds);
    }

    public static final int DEFAULT_PORT = 6379;
    public static final int DEFAULT_SENTINEL_PORT = 26379;

    private static final String GRAMMAR = "redis://[user:password@]host:port[/db], or rediss:// for TLS, or"
            + " redis-sentinel://[user:password@]host:port[,host:port...][/db]#master for a master that Redis"
            + " Sentinel manages (rediss-sentinel:// for TLS), or redis-cluster://[user:password@]host:port[,host:port...]"
            + " for a Redis Cluster (rediss-cluster:// for TLS)";

    /** A master's name as Sentinel's configuration takes it. */
    private static final Pattern MASTER_NAME = Pattern.compile("[A-Za-z0-9._:-]{1,128}");

    /** At most this many sentinels, or seeds of a cluster, in one address. */
    static final int MAX_SENTINELS = 16;

    private static final String SCHEMES =
            "the scheme must be redis://, rediss://, redis-sentinel://, rediss-sentinel://,"
                    + " redis-cluster:// or rediss-cluster://";

    /**
     * The sentinels that name a master, in the order they are asked first.
     *
     * @param master the master's name in the sentinels' configuration
     * @param nodes the sentinels' host names (not resolved) and ports
     */
    public record Sentinels(String master, List<InetSocketAddress> nodes) {
        public Sentinels {
            nodes = List.copyOf(nodes);
        }

        @Override
        public String toString() {
            StringBuilder text = new StringBuilder();
            for (InetSocketAddress node : nodes) {
                text.append(text.length() == 0 ? "" : ",")
                        .append(node.getHostString())
                        .append(':')
                        .append(node.getPort());
            }
            return text + "#" + master;
        }
    }

    public static NodeAddress parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException(
                    "node URI must not be empty: give redis://host:port, or rediss://host:port for TLS");
        }
        String trimmed = text.trim();
        int separator = trimmed.indexOf("://");
        if (separator < 0) {
            throw invalid(trimmed, SCHEMES);
        }
        String scheme = trimmed.substring(0, separator).toLowerCase(Locale.ROOT);
        switch (scheme) {
            case "redis", "rediss", "redis-sentinel", "rediss-sentinel", "redis-cluster", "rediss-cluster" -> {}
            default -> throw invalid(trimmed, SCHEMES);
        }
        String rest = trimmed.substring(separator + 3);
        int at = rest.lastIndexOf('@');
        // What follows the userinfo carries no credentials: java.net.URI may parse it, and its
        // messages may be shown.
        if (at + 1 == rest.length()) {
            throw invalid(trimmed, "it names no host; write redis://host:port");
        }
        if (scheme.endsWith("-sentinel")) {
            return sentinel(trimmed, rest, at, scheme.equals("rediss-sentinel"));
        }
        if (scheme.endsWith("-cluster")) {
            return cluster(trimmed, rest, at, scheme.equals("rediss-cluster"));
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
        Credentials credentials = credentials(trimmed, rest, at);
        return new NodeAddress(
                uri.getHost().toLowerCase(Locale.ROOT),
                port,
                database,
                credentials.user(),
                credentials.password(),
                scheme.equals("rediss"),
                Optional.empty(),
                List.of());
    }

    /** {@code host:port[,host:port...][/db]#master} after the userinfo that ends at {@code at}. */
    private static NodeAddress sentinel(String text, String rest, int at, boolean tls) {
        String place = rest.substring(at + 1);
        int hash = place.indexOf('#');
        if (hash < 0 || hash == place.length() - 1) {
            throw invalid(
                    text, "it names no master: end it with #name, the master's name in the sentinels' configuration");
        }
        String master = place.substring(hash + 1);
        if (!MASTER_NAME.matcher(master).matches()) {
            throw invalid(text, "the master's name must be 1 to 128 letters, digits or . _ : -");
        }
        String hosts = place.substring(0, hash);
        int slash = hosts.indexOf('/');
        int database = parseDatabase(text, slash < 0 ? null : hosts.substring(slash));
        List<InetSocketAddress> sentinels = hosts(
                text, slash < 0 ? hosts : hosts.substring(0, slash), DEFAULT_SENTINEL_PORT, "sentinel", "#master");
        Credentials credentials = credentials(text, rest, at);
        InetSocketAddress first = sentinels.get(0);
        return new NodeAddress(
                first.getHostString(),
                first.getPort(),
                database,
                credentials.user(),
                credentials.password(),
                tls,
                Optional.of(new Sentinels(master, sentinels)),
                List.of());
    }

    /** {@code host:port[,host:port...]} after the userinfo that ends at {@code at}: a cluster's seeds. */
    private static NodeAddress cluster(String text, String rest, int at, boolean tls) {
        String place = rest.substring(at + 1);
        if (place.indexOf('#') >= 0 || place.indexOf('?') >= 0) {
            throw invalid(text, "query parameters and fragments are not supported");
        }
        if (place.indexOf('/') >= 0) {
            throw invalid(text, "a Redis Cluster has database 0 only: leave the /db out");
        }
        List<InetSocketAddress> seeds = hosts(text, place, DEFAULT_PORT, "cluster node", "");
        Credentials credentials = credentials(text, rest, at);
        InetSocketAddress first = seeds.get(0);
        return new NodeAddress(
                first.getHostString(),
                first.getPort(),
                0,
                credentials.user(),
                credentials.password(),
                tls,
                Optional.empty(),
                seeds);
    }

    /** {@code host:port[,host:port...]}, at most {@link #MAX_SENTINELS}, none twice; {@code what} names one. */
    private static List<InetSocketAddress> hosts(String text, String list, int defaultPort, String what, String tail) {
        List<InetSocketAddress> hosts = new ArrayList<>();
        for (String one : list.split(",", -1)) {
            if (hosts.size() == MAX_SENTINELS) {
                throw invalid(text, "it lists more than " + MAX_SENTINELS + " " + what + "s");
            }
            URI uri;
            try {
                uri = new URI("redis://" + one);
            } catch (URISyntaxException e) {
                throw invalid(text, "a " + what + "'s address is not host:port (" + e.getReason() + ")");
            }
            if (uri.getHost() == null
                    || uri.getHost().isEmpty()
                    || uri.getRawPath() != null && !uri.getRawPath().isEmpty()) {
                throw invalid(
                        text,
                        "a " + what + "'s address is not host:port: write host:" + defaultPort + ",host:" + defaultPort
                                + tail);
            }
            int port = uri.getPort() == -1 ? defaultPort : uri.getPort();
            if (port < 1 || port > 65535) {
                throw invalid(text, "the port must be between 1 and 65535");
            }
            InetSocketAddress host =
                    InetSocketAddress.createUnresolved(uri.getHost().toLowerCase(Locale.ROOT), port);
            if (hosts.contains(host)) {
                throw invalid(text, "the " + what + " " + one + " is listed twice");
            }
            hosts.add(host);
        }
        return hosts;
    }

    /** The user and the password of a URI's userinfo. */
    private record Credentials(Optional<String> user, Optional<String> password) {}

    /** The user and the password in the userinfo that ends at {@code at} (-1: none). */
    private static Credentials credentials(String text, String rest, int at) {
        if (at < 0) {
            return new Credentials(Optional.empty(), Optional.empty());
        }
        String info = rest.substring(0, at);
        int colon = info.indexOf(':');
        return colon < 0
                ? new Credentials(Optional.empty(), decode(text, info))
                : new Credentials(decode(text, info.substring(0, colon)), decode(text, info.substring(colon + 1)));
    }

    /** This address with {@code newPassword} in place of its own. */
    public NodeAddress withPassword(String newPassword) {
        return new NodeAddress(host, port, database, user, Optional.of(newPassword), tls, sentinels, clusterSeeds);
    }

    /**
     * The master's address as a sentinel named it: the same user, password, database and TLS,
     * with no sentinels; this address itself if it names no sentinels.
     */
    public NodeAddress at(String masterHost, int masterPort) {
        return new NodeAddress(masterHost, masterPort, database, user, password, tls, Optional.empty(), List.of());
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
        return cluster()
                ? "the cluster " + seedsText()
                : sentinels.map(group -> "the master " + group).orElse(host + ":" + port);
    }

    /** Whether this names a Redis Cluster by its seeds. */
    public boolean cluster() {
        return !clusterSeeds.isEmpty();
    }

    private String seedsText() {
        StringBuilder text = new StringBuilder();
        for (InetSocketAddress seed : clusterSeeds) {
            text.append(text.length() == 0 ? "" : ",")
                    .append(seed.getHostString())
                    .append(':')
                    .append(seed.getPort());
        }
        return text.toString();
    }

    @Override
    public String toString() {
        String db = database == 0 ? "" : "/" + database;
        if (cluster()) {
            return (tls ? "rediss-cluster://" : "redis-cluster://") + seedsText();
        }
        return sentinels
                .map(group -> (tls ? "rediss-sentinel://" : "redis-sentinel://")
                        + group.toString().replace("#", db + "#"))
                .orElse((tls ? "rediss://" : "redis://") + host + ":" + port + db);
    }
}
