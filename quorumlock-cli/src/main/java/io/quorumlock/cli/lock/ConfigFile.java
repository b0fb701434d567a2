package io.quorumlock.cli.lock;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

/**
 * The command line's configuration file: {@code key = value} lines ({@link Properties} syntax),
 * read from {@code --config FILE} or else {@code ~/.config/quorumlock/config} when it exists.
 *
 * <pre>
 * redis = redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379
 * redis.password = s3cret
 * redis.tls.ca = /etc/quorumlock/redis-ca.pem
 * redis.tls.cert = /etc/quorumlock/client.pem
 * redis.tls.key = /etc/quorumlock/client.key
 * zookeeper = zk1:2181,zk2:2181,zk3:2181
 * etcd = https://10.0.0.1:2379,https://10.0.0.2:2379
 * etcd.tls.ca = /etc/quorumlock/etcd-ca.pem
 * jdbc = jdbc:postgresql://db:5432/app
 * jdbc.user = locks
 * jdbc.password = s3cret
 * </pre>
 *
 * @param source where it was read from, for messages; empty when there is no file
 * @param properties its settings
 */
public record ConfigFile(Optional<Path> source, Properties properties) {

    /** The keys a file may hold. */
    static final Set<String> KEYS = Set.of(
            "redis",
            "redis.password",
            "redis.tls.ca",
            "redis.tls.cert",
            "redis.tls.key",
            "redis.wait-for-replicas",
            "zookeeper",
            "etcd",
            "etcd.tls.ca",
            "etcd.tls.cert",
            "etcd.tls.key",
            "jdbc",
            "jdbc.user",
            "jdbc.password");

    /** The keys a file may hold, for messages and the help. */
    static final String KNOWN =
            "redis, redis.password, redis.tls.ca, redis.tls.cert, redis.tls.key, redis.wait-for-replicas,"
                    + " zookeeper, etcd,"
                    + " etcd.tls.ca, etcd.tls.cert, etcd.tls.key, jdbc, jdbc.user, jdbc.password";

    /** The file used when {@code --config} is not given. */
    public static Path defaultPath() {
        return Path.of(System.getProperty("user.home"), ".config", "quorumlock", "config");
    }

    /** No file: nothing set. */
    public static ConfigFile none() {
        return new ConfigFile(Optional.empty(), new Properties());
    }

    /**
     * Reads {@code file}.
     *
     * @throws IllegalArgumentException if it cannot be read or holds an unknown key, naming both
     */
    public static ConfigFile read(Path file) {
        Properties properties = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(in);
        } catch (IOException e) {
            throw new IllegalArgumentException("--config: cannot read " + file + ": " + e.getMessage(), e);
        }
        for (String key : properties.stringPropertyNames()) {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException(
                        "--config: unknown setting '" + key + "' in " + file + "; known settings: " + KNOWN);
            }
        }
        return new ConfigFile(Optional.of(file), properties);
    }

    /** The file named by {@code --config}, else the default file if it exists, else none. */
    public static ConfigFile load(Path explicit) {
        if (explicit != null) {
            return read(explicit);
        }
        Path file = defaultPath();
        return Files.isRegularFile(file) ? read(file) : none();
    }

    /** A setting, empty if absent or blank. */
    public Optional<String> get(String key) {
        return Optional.ofNullable(properties.getProperty(key))
                .map(String::trim)
                .filter(v -> !v.isEmpty());
    }

    /** Where the file was read from and the keys it sets, never their values (a password is one). */
    @Override
    public String toString() {
        return "ConfigFile[" + source.map(Path::toString).orElse("none") + ", keys "
                + new TreeSet<>(properties.stringPropertyNames()) + "]";
    }

    /** True if the file holds a password and others than its owner may read it. */
    public boolean exposesPassword() {
        if (source.isEmpty()
                || (get("redis.password").isEmpty() && get("jdbc.password").isEmpty())) {
            return false;
        }
        try {
            Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(source.get());
            return permissions.contains(PosixFilePermission.GROUP_READ)
                    || permissions.contains(PosixFilePermission.OTHERS_READ);
        } catch (UnsupportedOperationException e) {
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
