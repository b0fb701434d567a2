package io.quorumlock.cli.lock;

import io.quorumlock.DistributedLock;
import io.quorumlock.IllegalSettingException;
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
import java.util.Locale;
import java.util.Optional;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

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
     * The usage error of a {@code --permits} value out of range, as {@code run} and {@code check}
     * give it; empty for a usable one.
     */
    public static java.util.Optional<String> permitsError(int permits) {
        return permits >= 1 && permits <= io.quorumlock.DistributedSemaphore.MAX_PERMITS
                ? java.util.Optional.empty()
                : java.util.Optional.of("--permits must be 1 to " + io.quorumlock.DistributedSemaphore.MAX_PERMITS
                        + ", was " + permits + ": such as --permits 3 for at most 3 commands at once");
    }

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
                        "check --jdbc-user (or the user in the URL) and the password, from " + JDBC_PASSWORD_ENV
                                + " or the config file's jdbc.password")
                .replace(
                        "give the password",
                        "give it in " + JDBC_PASSWORD_ENV + " or the config file's jdbc.password, for --jdbc-user"
                                + " (or the user in the URL)")
                .replace(
                        "check the database name in the URL, or create the database",
                        "check the database at the end of the --jdbc URL (jdbc:...://HOST:PORT/DATABASE), or create"
                                + " the database");
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
     * @param tls the TLS files of the Redis nodes or the etcd members
     * @param user the database user, if not in the JDBC URL
     * @param replicas for a Redis node, how many replicas must acknowledge each grant and renewal
     *     ({@code --wait-for-replicas}); empty for the library's default
     */
    public record LockService(
            Kind kind,
            List<String> endpoints,
            Optional<String> password,
            TlsFiles tls,
            Optional<String> user,
            Optional<Integer> replicas) {

        /** A backend without a --wait-for-replicas. */
        public LockService(
                Kind kind, List<String> endpoints, Optional<String> password, TlsFiles tls, Optional<String> user) {
            this(kind, endpoints, password, tls, user, Optional.empty());
        }

        /** A backend without TLS files. */
        public LockService(Kind kind, List<String> endpoints, Optional<String> password) {
            this(kind, endpoints, password, TlsFiles.NONE, Optional.empty());
        }

        /** A Redis or etcd backend with its TLS files. */
        public LockService(Kind kind, List<String> endpoints, Optional<String> password, TlsFiles tls) {
            this(kind, endpoints, password, tls, Optional.empty());
        }

        /** The backend and its endpoints as {@link Secrets#redactUri} shows them; the password as {@code ***}. */
        @Override
        public String toString() {
            return "LockService[" + kind + " "
                    + endpoints.stream().map(Secrets::redactUri).toList()
                    + user.map(u -> ", user " + u).orElse("")
                    + replicas.map(r -> ", wait for " + r + " replica(s)").orElse("")
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

        /**
         * Opens the lock, with a TLS file the builder refused named by its option ({@code
         * --tls-ca}), not by the builder's setting ({@code tlsCaBundle}).
         */
        private DistributedLock<? extends Lease> open(Optional<Duration> ttl, Optional<Duration> connectTimeout) {
            try {
                return lock(ttl, connectTimeout);
            } catch (IllegalSettingException e) {
                if (e.setting().equals("waitForReplicas")) {
                    throw new IllegalArgumentException(
                            e.getMessage()
                                    .replace("use waitForReplicas(0, ...)", "leave --wait-for-replicas out")
                                    .replace("waitForReplicas", "--wait-for-replicas"),
                            e);
                }
                if (!e.setting().startsWith("tls")) {
                    throw e;
                }
                throw new IllegalArgumentException(
                        e.getMessage()
                                .replace("tlsCaBundle", "--tls-ca")
                                .replace("tlsClientCertificate", "--tls-cert and --tls-key"),
                        e);
            }
        }

        private DistributedLock<? extends Lease> lock(Optional<Duration> ttl, Optional<Duration> connectTimeout) {
            return switch (kind) {
                case REDIS -> {
                    RedlockBuilder redis =
                            tls.configure(Redlock.builder().nodes(endpoints).password(password.orElse(null)));
                    // A lease for one command, from one attempt: waiting longer for a silent node
                    // costs run little, refusing a free lock skips the job on every host.
                    ttl.ifPresent(t -> redis.nodeTimeout(runNodeTimeout(t)));
                    // The replicas are given half of what a round waits for the node.
                    replicas.ifPresent(n -> redis.waitForReplicas(
                            n,
                            ttl.map(LockService::runNodeTimeout)
                                    .orElse(LIBRARY_NODE_TIMEOUT)
                                    .dividedBy(2)));
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
                    EtcdLockBuilder etcd = tls.configure(EtcdLock.builder().endpoints(endpoints));
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
                    + " independent nodes for Redlock; or a master behind Sentinel, such as"
                    + " redis-sentinel://10.0.0.5:26379,10.0.0.6:26379#mymaster, or a Redis Cluster, such as"
                    + " redis-cluster://10.0.0.8:7000,10.0.0.9:7000, for a single-node lock. A URI may omit the password (redis://host:port, or redis://user:@host:port for an"
                    + " ACL user): it is then taken from " + PASSWORD_ENV + " or the config file's redis.password.")
    private List<String> redis;

    @Option(
            names = "--wait-for-replicas",
            paramLabel = "N",
            description = "For a single Redis node: how many of its replicas must acknowledge each grant and renewal"
                    + " (WAIT, within half the node timeout) before it counts, so that a failover is less likely to"
                    + " lose the lock; 0 for none. Default: as many as its sentinels count up for a redis-sentinel://"
                    + " master, as many as a redis:// master lists in ROLE, as many as the cluster lists up for the"
                    + " master of a redis-cluster:// resource's slot. Config file: redis.wait-for-replicas.")
    private Integer waitForReplicas;

    @Option(
            names = "--tls-ca",
            paramLabel = "FILE",
            description = "The CAs (PEM) that the rediss:// nodes' or https:// etcd members' certificates must be"
                    + " issued by; default: the JDK trust store. Config file: redis.tls.ca, etcd.tls.ca.")
    private Path tlsCa;

    @Option(
            names = "--tls-cert",
            paramLabel = "FILE",
            description = "A client certificate (PEM) for rediss:// nodes or https:// etcd members that require one"
                    + " (mutual TLS), with --tls-key. Config file: redis.tls.cert, etcd.tls.cert.")
    private Path tlsCert;

    @Option(
            names = "--tls-key",
            paramLabel = "FILE",
            description = "The client certificate's private key: unencrypted PKCS#8 PEM (BEGIN PRIVATE KEY), RSA or"
                    + " EC. Config file: redis.tls.key, etcd.tls.key.")
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
            description = "etcd endpoints, such as http://10.0.0.1:2379,http://10.0.0.2:2379, or https:// for members"
                    + " that serve TLS (with --tls-ca, --tls-cert, --tls-key): a fenced lock.")
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
            description = "Settings file (" + ConfigFile.KNOWN + " as key = value lines); default:"
                    + " ~/.config/quorumlock/config if it exists.")
    private Path config;

    /** {@code value} as a number of replicas, 0 to 64; else an error that names {@code setting}. */
    private static int replicaCount(String value, String setting) {
        try {
            int count = Integer.parseInt(value.trim());
            if (count >= 0 && count <= 64) {
                return count;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IllegalArgumentException(
                setting + " takes a number of replicas from 0 to 64, not '" + value.trim() + "'");
    }

    /** The command this is mixed into, for its warnings. */
    @Spec(Spec.Target.MIXEE)
    private CommandSpec command;

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
        boolean onCommandLine = redis != null || zookeeper != null || etcd != null || jdbc != null;
        if (onCommandLine) {
            if (redis != null) {
                named.add(new LockService(Kind.REDIS, redisNodes(trimmed(redis)), password, tls(file, "redis")));
            }
            if (zookeeper != null) {
                named.add(new LockService(Kind.ZOOKEEPER, List.of(zookeeper.trim()), Optional.empty()));
            }
            if (etcd != null) {
                named.add(new LockService(Kind.ETCD, trimmed(etcd), Optional.empty(), tls(file, "etcd")));
            }
            if (jdbc != null) {
                JdbcUrls.check(jdbc.trim(), "--jdbc");
                named.add(new LockService(Kind.JDBC, List.of(jdbc.trim()), jdbcPassword, TlsFiles.NONE, user));
            }
        } else {
            file.get("redis")
                    .ifPresent(v ->
                            named.add(new LockService(Kind.REDIS, redisNodes(split(v)), password, tls(file, "redis"))));
            file.get("zookeeper")
                    .ifPresent(v -> named.add(new LockService(Kind.ZOOKEEPER, List.of(v), Optional.empty())));
            file.get("etcd")
                    .ifPresent(
                            v -> named.add(new LockService(Kind.ETCD, split(v), Optional.empty(), tls(file, "etcd"))));
            file.get("jdbc").ifPresent(v -> {
                JdbcUrls.check(v, "jdbc in " + file.source().orElseThrow());
                named.add(new LockService(Kind.JDBC, List.of(v), jdbcPassword, TlsFiles.NONE, user));
            });
        }
        if (named.isEmpty()) {
            throw new IllegalArgumentException("name where the lock lives: --redis URI[,URI...], --zookeeper"
                    + " CONNECT_STRING, --etcd ENDPOINTS or --jdbc JDBC_URL (or one of redis, zookeeper, etcd, jdbc in "
                    + file.source().orElse(ConfigFile.defaultPath()) + ")");
        }
        if (named.size() > 1) {
            List<String> options = named.stream().map(b -> option(b.kind())).toList();
            throw new IllegalArgumentException("name one backend only, not "
                    + (options.size() == 2 ? "both " : "all of ")
                    + String.join(", ", options.subList(0, options.size() - 1)) + " and "
                    + options.get(options.size() - 1)
                    + (onCommandLine
                            ? ""
                            : " (all set in " + file.source().orElseThrow() + "; choose one on the command line)"));
        }
        LockService backend = named.get(0);
        if (jdbcUser != null && backend.kind() != Kind.JDBC) {
            throw new IllegalArgumentException("--jdbc-user is for --jdbc");
        }
        Optional<Integer> replicas = Optional.ofNullable(waitForReplicas)
                .or(() -> file.get("redis.wait-for-replicas")
                        .map(v -> replicaCount(
                                v, "redis.wait-for-replicas in " + file.source().orElseThrow())));
        if (replicas.isPresent()) {
            if (backend.kind() != Kind.REDIS) {
                throw new IllegalArgumentException("--wait-for-replicas is for --redis");
            }
            replicaCount(replicas.get().toString(), "--wait-for-replicas");
            backend = new LockService(
                    backend.kind(), backend.endpoints(), backend.password(), backend.tls(), backend.user(), replicas);
        }
        boolean tlsOptions = tlsCa != null || tlsCert != null || tlsKey != null;
        if (tlsOptions && backend.kind() != Kind.REDIS && backend.kind() != Kind.ETCD) {
            throw new IllegalArgumentException(
                    "--tls-ca, --tls-cert and --tls-key are for Redis nodes (rediss://) and etcd members (https://)");
        }
        String tlsScheme = backend.kind() == Kind.REDIS ? "rediss://" : "https://";
        if (backend.tls().any()
                && backend.endpoints().stream()
                        .noneMatch(e -> e.toLowerCase(Locale.ROOT).startsWith(tlsScheme))) {
            String prefix = backend.kind() == Kind.REDIS ? "redis" : "etcd";
            throw new IllegalArgumentException("--tls-ca, --tls-cert and --tls-key (" + prefix + ".tls.*) are for"
                    + " TLS " + (backend.kind() == Kind.REDIS ? "nodes" : "members") + ": write them as " + tlsScheme
                    + "host:port");
        }
        if (backend.endpoints().isEmpty() || backend.endpoints().stream().anyMatch(String::isEmpty)) {
            throw new IllegalArgumentException(option(backend.kind()) + ": an empty address in the list");
        }
        if (file.exposesPassword()) {
            warn(file.source().orElseThrow() + " holds a password and others may read it: chmod 600 "
                    + file.source().orElseThrow());
        }
        return backend;
    }

    /** The option that names a backend of {@code kind}, such as {@code --redis}. */
    private static String option(Kind kind) {
        return "--" + kind.name().toLowerCase(Locale.ROOT);
    }

    /** One warning line on the command's stderr, as the command's own lines read. */
    private void warn(String line) {
        if (command == null) { // not mixed into a command
            System.err.println("quorumlock: warning: " + line);
            return;
        }
        java.io.PrintWriter err = command.commandLine().getErr();
        err.println(command.qualifiedName() + ": warning: " + line);
        err.flush();
    }

    /** The TLS files of the backend whose config file keys begin with {@code prefix}. */
    private TlsFiles tls(ConfigFile file, String prefix) {
        return TlsFiles.of(tlsCa, tlsCert, tlsKey, file, prefix);
    }

    private static List<String> trimmed(List<String> values) {
        return values.stream().map(String::trim).toList();
    }

    /**
     * The Redis nodes in a list split at every comma: a Sentinel address gets back the commas
     * between its sentinels, up to its {@code #master}
     * ({@code redis-sentinel://h1:26379,h2:26379#mymaster}), a cluster's address the commas between
     * its seeds, up to the next piece with a scheme ({@code redis-cluster://h1:7000,h2:7000}); every
     * other piece is a node of its own.
     */
    static List<String> redisNodes(List<String> pieces) {
        List<String> nodes = new java.util.ArrayList<>(pieces.size());
        StringBuilder sentinel = null;
        for (String piece : pieces) {
            int last = nodes.size() - 1;
            if (sentinel == null
                    && last >= 0
                    && !piece.contains("://")
                    && (nodes.get(last).regionMatches(true, 0, "redis-cluster://", 0, 16)
                            || nodes.get(last).regionMatches(true, 0, "rediss-cluster://", 0, 17))) {
                nodes.set(last, nodes.get(last) + "," + piece);
                continue;
            }
            if (sentinel != null) {
                sentinel.append(',').append(piece);
            } else if (piece.regionMatches(true, 0, "redis-sentinel://", 0, 17)
                    || piece.regionMatches(true, 0, "rediss-sentinel://", 0, 18)) {
                sentinel = new StringBuilder(piece);
            } else {
                nodes.add(piece);
                continue;
            }
            if (sentinel.indexOf("#", sentinel.lastIndexOf("@") + 1) >= 0) { // a password may hold # and ,
                nodes.add(sentinel.toString());
                sentinel = null;
            }
        }
        if (sentinel != null) {
            nodes.add(sentinel.toString()); // no #master: the address is refused, naming it
        }
        return nodes;
    }

    private static List<String> split(String value) {
        return trimmed(Arrays.asList(value.split(",")));
    }
}
