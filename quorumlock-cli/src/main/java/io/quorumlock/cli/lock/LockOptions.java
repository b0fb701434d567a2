package io.quorumlock.cli.lock;

import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import io.quorumlock.etcd.EtcdLock;
import io.quorumlock.etcd.EtcdLockBuilder;
import io.quorumlock.internal.Secrets;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.redis.Redlock;
import io.quorumlock.redis.RedlockBuilder;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Option;

/**
 * The options that name where the lock lives, mixed into the commands that take a lock: exactly
 * one backend, from the command line or else from the configuration file. A Redis password never
 * needs the command line: {@value #PASSWORD_ENV} or the file's {@code redis.password} serve the
 * nodes whose URI has none.
 */
public final class LockOptions {

    /** How long a round waits for a TLS node it is connecting to, when its vote is needed. */
    static final Duration TLS_CONNECT_TIMEOUT = Duration.ofSeconds(1);
    /** How long run gives one etcd request once a member is reached: a cold JVM's first take seconds. */
    static final Duration ETCD_REQUEST_TIMEOUT = Duration.ofSeconds(10);

    /** How long run's rounds wait for a silent Redis node at most: see {@link LockService#runNodeTimeout}. */
    static final Duration RUN_NODE_TIMEOUT = Duration.ofMillis(500);

    /** The library's default node timeout, below which run does not go. */
    private static final Duration LIBRARY_NODE_TIMEOUT = Duration.ofMillis(50);

    /** ZooKeeperLock's default connection timeout (or the session timeout, if that is shorter). */
    private static final Duration ZOOKEEPER_CONNECTION_TIMEOUT = Duration.ofSeconds(5);

    /** The environment variable that holds the Redis password. */
    public static final String PASSWORD_ENV = "QUORUMLOCK_REDIS_PASSWORD";

    /** The environment variable that holds the database password of --jdbc. */
    public static final String JDBC_PASSWORD_ENV = "QUORUMLOCK_JDBC_PASSWORD";

    /** How long one statement of the database lock may take, unless --connect-timeout says. */
    public static final Duration JDBC_REQUEST_TIMEOUT = Duration.ofSeconds(5);

    /**
     * A database lock's message with its remedy in the command line's words: the table is created
     * by {@code check --create-table}, not by a call of the library, and the user and password come
     * from {@code --jdbc-user} and {@code QUORUMLOCK_JDBC_PASSWORD} or the config file.
     */
    public static String forCommandLine(String message) {
        return message.replace(
                        "call lock.createTable() once, or run lock.ddl() in a migration",
                        "create them with quorumlock check --jdbc URL --create-table, or in a migration")
                .replace(
                        "check the user and the password",
                        "check --jdbc-user (or the user in the URL) and the password, from QUORUMLOCK_JDBC_PASSWORD"
                                + " or the config file's jdbc.password");
    }

    /** Where a lock lives. */
    public enum Kind {
        REDIS,
        ZOOKEEPER,
        ETCD,
        JDBC
    }

    /**
     * A resolved backend.
     *
     * @param kind which one
     * @param endpoints the Redis URIs, the ZooKeeper connect string (one element), the etcd URLs or
     *     the JDBC URL (one element)
     * @param password the Redis password for URIs without one, or the database password
     * @param tls the Redis TLS files
     * @param user the database user, if not in the JDBC URL
     */
    public record LockService(
            Kind kind, List<String> endpoints, Optional<String> password, RedisTls tls, Optional<String> user) {

        /** A backend without TLS files. */
        public LockService(Kind kind, List<String> endpoints, Optional<String> password) {
            this(kind, endpoints, password, RedisTls.NONE, Optional.empty());
        }

        /** A Redis backend with its TLS files. */
        public LockService(Kind kind, List<String> endpoints, Optional<String> password, RedisTls tls) {
            this(kind, endpoints, password, tls, Optional.empty());
        }

        /** The backend and its endpoints as {@link Secrets#redactUri} shows them; the password as {@code ***}. */
        @Override
        public String toString() {
            return "LockService[" + kind + " "
                    + endpoints.stream().map(Secrets::redactUri).toList()
                    + user.map(u -> ", user " + u).orElse("")
                    + password.map(p -> ", password " + Secrets.MASK).orElse("") + "]";
        }

        /** True for the backends whose leases carry a fencing token. */
        public boolean fenced() {
            return kind != Kind.REDIS;
        }

        /** Opens the lock; for Redis also checks the URIs (a bad one is an {@link IllegalArgumentException}). */
        public DistributedLock<? extends Lease> open() {
            return open(Optional.empty(), Optional.empty());
        }

        /**
         * Opens the lock for leases of {@code ttl}: a ZooKeeper lease lives as long as its session,
         * so the ZooKeeper session timeout is {@code ttl} (check what the ensemble granted with
         * {@link ZooKeeperLock#sessionTimeout()}); Redis and etcd take the ttl with each lease.
         */
        public DistributedLock<? extends Lease> open(Duration ttl) {
            return open(Optional.of(ttl), Optional.empty());
        }

        /**
         * As {@link #open(Duration)}, waiting up to {@code connectTimeout} for the lock service to
         * answer: the timeout of each etcd request; for ZooKeeper the connect timeout if it is
         * longer than the library's 5 s (at most {@code ttl}), since a single attempt's requests
         * are given the connect timeout and a slow ensemble's first ones take several round
         * trips: wait for the first connection with {@link ZooKeeperLock#sessionTimeout()} for no
         * longer than {@code connectTimeout}. Null leaves the
         * libraries' defaults (5 s); Redis takes none (its rounds wait the node timeout).
         */
        public DistributedLock<? extends Lease> open(Duration ttl, Duration connectTimeout) {
            return open(Optional.of(ttl), Optional.ofNullable(connectTimeout));
        }

        /**
         * The node timeout of run's Redis rounds for leases of {@code ttl}: 500 ms, or a quarter of
         * the TTL if that is less, and never less than the library's 50 ms.
         */
        static Duration runNodeTimeout(Duration ttl) {
            Duration quarter = ttl.dividedBy(4);
            return quarter.compareTo(RUN_NODE_TIMEOUT) >= 0
                    ? RUN_NODE_TIMEOUT
                    : quarter.compareTo(LIBRARY_NODE_TIMEOUT) > 0 ? quarter : LIBRARY_NODE_TIMEOUT;
        }

        private DistributedLock<? extends Lease> open(Optional<Duration> ttl, Optional<Duration> connectTimeout) {
            return switch (kind) {
                case REDIS -> {
                    RedlockBuilder redis =
                            tls.configure(Redlock.builder().nodes(endpoints).password(password.orElse(null)));
                    // A lease for one command, from one attempt: waiting longer for a silent node
                    // costs run little, refusing a free lock skips the job on every host.
                    ttl.ifPresent(t -> redis.nodeTimeout(runNodeTimeout(t)));
                    if (endpoints.stream().anyMatch(e -> e.startsWith("rediss://"))) {
                        // run makes one attempt: the first TLS handshake of a JVM just started can
                        // take longer than the node timeout.
                        redis.connectTimeout(TLS_CONNECT_TIMEOUT);
                    }
                    yield redis.build();
                }
                case ZOOKEEPER ->
                    ZooKeeperLock.builder()
                            .connectString(endpoints.get(0))
                            .sessionTimeout(ttl.orElse(null))
                            .connectTimeout(connectTimeout
                                    .filter(timeout -> timeout.compareTo(ZOOKEEPER_CONNECTION_TIMEOUT) > 0)
                                    .orElse(null))
                            .build();
                case ETCD -> {
                    EtcdLockBuilder etcd = EtcdLock.builder().endpoints(endpoints);
                    // The connect timeout bounds reaching a member. The first requests of a JVM just
                    // started take longer than a connection on a busy machine (5 s and more): a
                    // member that answers is given ETCD_REQUEST_TIMEOUT.
                    connectTimeout.ifPresent(
                            timeout -> etcd.connectTimeout(timeout).requestTimeout(ETCD_REQUEST_TIMEOUT));
                    yield etcd.build();
                }
                case JDBC ->
                    JdbcLock.builder()
                            .url(endpoints.get(0))
                            .user(user.orElse(null))
                            .password(password.orElse(null))
                            .requestTimeout(connectTimeout.orElse(JDBC_REQUEST_TIMEOUT))
                            .build();
            };
        }
    }

    @Option(
            names = "--redis",
            paramLabel = "URI[,URI...]",
            split = ",",
            hideParamSyntax = true,
            description = "Redis nodes, such as redis://10.0.0.1:6379: one node for a single-node lock, 3 or 5"
                    + " independent nodes for Redlock. A URI may omit the password (redis://host:port, or redis://user:@host:port for an"
                    + " ACL user): it is then taken from " + PASSWORD_ENV + " or the config file's redis.password.")
    private List<String> redis;

    @Option(
            names = "--tls-ca",
            paramLabel = "FILE",
            description = "The CAs (PEM) that the rediss:// nodes' certificates must be issued by; default: the JDK"
                    + " trust store. Config file: redis.tls.ca.")
    private Path tlsCa;

    @Option(
            names = "--tls-cert",
            paramLabel = "FILE",
            description = "A client certificate (PEM) for rediss:// nodes that require one (mutual TLS), with"
                    + " --tls-key. Config file: redis.tls.cert.")
    private Path tlsCert;

    @Option(
            names = "--tls-key",
            paramLabel = "FILE",
            description = "The client certificate's private key: unencrypted PKCS#8 PEM (BEGIN PRIVATE KEY), RSA or"
                    + " EC. Config file: redis.tls.key.")
    private Path tlsKey;

    @Option(
            names = "--zookeeper",
            paramLabel = "CONNECT_STRING",
            description = "A ZooKeeper ensemble, such as zk1:2181,zk2:2181,zk3:2181: a fenced lock.")
    private String zookeeper;

    @Option(
            names = "--etcd",
            paramLabel = "ENDPOINTS",
            split = ",",
            hideParamSyntax = true,
            description = "etcd endpoints, such as http://10.0.0.1:2379,http://10.0.0.2:2379: a fenced lock.")
    private List<String> etcd;

    @Option(
            names = "--jdbc",
            paramLabel = "JDBC_URL",
            description = "A PostgreSQL or MariaDB database, such as jdbc:postgresql://db:5432/app: a fenced lock in"
                    + " its table quorumlock_locks. The password comes from " + JDBC_PASSWORD_ENV
                    + " or the config file's jdbc.password.")
    private String jdbc;

    @Option(
            names = "--jdbc-user",
            paramLabel = "USER",
            description = "The database user for --jdbc, unless the URL names it. Config file: jdbc.user.")
    private String jdbcUser;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Settings file (redis, redis.password, redis.tls.ca, redis.tls.cert, redis.tls.key,"
                    + " zookeeper, etcd, jdbc, jdbc.user, jdbc.password as key = value lines); default:"
                    + " ~/.config/quorumlock/config if it exists.")
    private Path config;

    /** Where the Redis password for URIs without one came from, once {@link #backend()} has read it; null if none. */
    private String passwordSetting;

    /**
     * How {@code run} and {@code check} tell the configuration errors of {@code backend}'s Redis
     * nodes, naming where the password came from; call after {@link #backend()}.
     */
    public NodeProblems nodeProblems(LockService backend) {
        return new NodeProblems(backend.endpoints(), Optional.ofNullable(passwordSetting));
    }

    /**
     * The backend named on the command line, else in the configuration file.
     *
     * @throws IllegalArgumentException when none or several are named, naming the options
     */
    public LockService backend() {
        ConfigFile file = ConfigFile.load(config);
        List<LockService> named = new ArrayList<>();
        Optional<String> fromEnvironment =
                Optional.ofNullable(System.getenv(PASSWORD_ENV)).filter(p -> !p.isEmpty());
        Optional<String> password = fromEnvironment.or(() -> file.get("redis.password"));
        passwordSetting = fromEnvironment.isPresent()
                ? PASSWORD_ENV
                : password.isPresent() ? "redis.password in " + file.source().orElseThrow() : null;
        Optional<String> jdbcPassword = Optional.ofNullable(System.getenv(JDBC_PASSWORD_ENV))
                .filter(p -> !p.isEmpty())
                .or(() -> file.get("jdbc.password"));
        Optional<String> user = Optional.ofNullable(jdbcUser).or(() -> file.get("jdbc.user"));
        if (redis != null || zookeeper != null || etcd != null || jdbc != null) {
            if (redis != null) {
                named.add(new LockService(Kind.REDIS, trimmed(redis), password, redisTls(file)));
            }
            if (zookeeper != null) {
                named.add(new LockService(Kind.ZOOKEEPER, List.of(zookeeper.trim()), Optional.empty()));
            }
            if (etcd != null) {
                named.add(new LockService(Kind.ETCD, trimmed(etcd), Optional.empty()));
            }
            if (jdbc != null) {
                named.add(new LockService(Kind.JDBC, List.of(jdbc.trim()), jdbcPassword, RedisTls.NONE, user));
            }
        } else {
            file.get("redis")
                    .ifPresent(v -> named.add(new LockService(Kind.REDIS, split(v), password, redisTls(file))));
            file.get("zookeeper")
                    .ifPresent(v -> named.add(new LockService(Kind.ZOOKEEPER, List.of(v), Optional.empty())));
            file.get("etcd").ifPresent(v -> named.add(new LockService(Kind.ETCD, split(v), Optional.empty())));
            file.get("jdbc")
                    .ifPresent(
                            v -> named.add(new LockService(Kind.JDBC, List.of(v), jdbcPassword, RedisTls.NONE, user)));
        }
        if (named.isEmpty()) {
            throw new IllegalArgumentException("name where the lock lives: --redis URI[,URI...], --zookeeper"
                    + " CONNECT_STRING, --etcd ENDPOINTS or --jdbc JDBC_URL (or one of redis, zookeeper, etcd, jdbc in "
                    + file.source().orElse(ConfigFile.defaultPath()) + ")");
        }
        if (named.size() > 1) {
            throw new IllegalArgumentException("name one backend only, not "
                    + named.stream()
                            .map(b -> "--" + b.kind().name().toLowerCase(java.util.Locale.ROOT))
                            .toList()
                    + (redis == null && zookeeper == null && etcd == null && jdbc == null
                            ? " (all set in " + file.source().orElseThrow() + "; choose one on the command line)"
                            : ""));
        }
        LockService backend = named.get(0);
        if (jdbcUser != null && backend.kind() != Kind.JDBC) {
            throw new IllegalArgumentException("--jdbc-user is for --jdbc");
        }
        boolean tlsOptions = tlsCa != null || tlsCert != null || tlsKey != null;
        if (tlsOptions && backend.kind() != Kind.REDIS) {
            throw new IllegalArgumentException("--tls-ca, --tls-cert and --tls-key are for Redis nodes (rediss://)");
        }
        if (backend.kind() == Kind.REDIS
                && backend.tls().any()
                && backend.endpoints().stream()
                        .noneMatch(e -> e.toLowerCase(java.util.Locale.ROOT).startsWith("rediss://"))) {
            throw new IllegalArgumentException("--tls-ca, --tls-cert and --tls-key (redis.tls.*) are for TLS nodes:"
                    + " write them as rediss://host:port");
        }
        if (backend.endpoints().isEmpty() || backend.endpoints().stream().anyMatch(String::isEmpty)) {
            throw new IllegalArgumentException(
                    "--" + backend.kind().name().toLowerCase(java.util.Locale.ROOT) + ": an empty address in the list");
        }
        if (file.exposesPassword()) {
            // Not a static logger: picocli makes this mixin before -v is read, and a logger made
            // then would fix the log level before Verbosity can set it.
            Logger log = LoggerFactory.getLogger(LockOptions.class);
            log.warn(
                    "{} holds a password and others may read it: chmod 600 {}",
                    file.source().orElseThrow(),
                    file.source().orElseThrow());
        }
        return backend;
    }

    /**
     * The TLS files for the Redis nodes: each from the command line, else from the config file.
     *
     * @param ca the CA bundle, {@code --tls-ca}; empty for the JDK trust store
     * @param certificate the client certificate, {@code --tls-cert}
     * @param key its private key, {@code --tls-key}
     */
    public record RedisTls(Optional<Path> ca, Optional<Path> certificate, Optional<Path> key) {

        /** No TLS files: rediss:// nodes are checked against the JDK trust store. */
        public static final RedisTls NONE = new RedisTls(Optional.empty(), Optional.empty(), Optional.empty());

        /** Whether any file is given. */
        public boolean any() {
            return ca.isPresent() || certificate.isPresent() || key.isPresent();
        }

        /** Gives the files to {@code builder}. */
        public RedlockBuilder configure(RedlockBuilder builder) {
            ca.ifPresent(builder::tlsCaBundle);
            if (certificate.isPresent()) {
                builder.tlsClientCertificate(certificate.get(), key.orElseThrow());
            }
            return builder;
        }
    }

    private RedisTls redisTls(ConfigFile file) {
        RedisTls tls = new RedisTls(
                tlsFile(tlsCa, file, "redis.tls.ca", "--tls-ca"),
                tlsFile(tlsCert, file, "redis.tls.cert", "--tls-cert"),
                tlsFile(tlsKey, file, "redis.tls.key", "--tls-key"));
        if (tls.certificate().isPresent() != tls.key().isPresent()) {
            throw new IllegalArgumentException(
                    "--tls-cert and --tls-key (redis.tls.cert, redis.tls.key) go together: give the client certificate"
                            + " and its key");
        }
        return tls;
    }

    private static Optional<Path> tlsFile(Path option, ConfigFile file, String key, String name) {
        Optional<Path> path = Optional.ofNullable(option).or(() -> file.get(key).map(Path::of));
        if (path.isPresent() && !java.nio.file.Files.isReadable(path.get())) {
            throw new IllegalArgumentException(
                    name + " (" + key + "): cannot read " + path.get() + ": give a readable PEM file");
        }
        return path;
    }

    private static List<String> trimmed(List<String> values) {
        return values.stream().map(String::trim).toList();
    }

    private static List<String> split(String value) {
        return trimmed(Arrays.asList(value.split(",")));
    }
}
