package io.quorumlock.torture;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.etcd.EtcdLock;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.ZooKeeperServers;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/**
 * One client's lock for a strategy, and the means to expire that client's session as the
 * ensemble does when it stops hearing from the client.
 */
final class ClientLock implements AutoCloseable {

    static final String ETCD_PREFIX = "torture/";

    /** The database lock's table. */
    static final String JDBC_TABLE = "torture_locks";

    /**
     * The user a database lock connects as, and how an expiry sets its holder's row to the
     * database's now: the test kit's PostgreSQL superuser, its MariaDB user.
     */
    private record JdbcUser(String user, String password, String now) {
        static JdbcUser of(Strategy strategy) {
            return switch (strategy.servers()) {
                case POSTGRES -> new JdbcUser("postgres", "", "clock_timestamp()");
                case MARIADB -> new JdbcUser("quorumlock", "quorumlock", "UTC_TIMESTAMP(6)");
                default -> throw new IllegalArgumentException(strategy + " takes no database lock");
            };
        }
    }

    /** Expires the session behind a lease, as the ensemble does when it stops hearing from the client. */
    private interface Expiry {
        void expire(FencedLease lease) throws Exception;
    }

    private final DistributedLock<? extends Lease> lock;
    private final Expiry expiry;
    private final Runnable closer;

    private ClientLock(DistributedLock<? extends Lease> lock, Expiry expiry, Runnable closer) {
        this.lock = lock;
        this.expiry = expiry;
        this.closer = closer;
    }

    /** The lock. */
    DistributedLock<? extends Lease> lock() {
        if (lock == null) {
            throw new IllegalStateException("this strategy takes no lock");
        }
        return lock;
    }

    /**
     * Takes and releases {@code resource}, which nobody else takes, until it is granted once or
     * {@code within} has passed: connects to the servers and loads what the lock's first round needs.
     *
     * @throws LockUnavailableException if it was not granted within {@code within}
     */
    void warmUp(String resource, Duration within) {
        if (lock == null) {
            return;
        }
        long end = System.nanoTime() + within.toNanos();
        while (true) {
            try {
                lock.acquire(resource, WARM_UP_TTL, WARM_UP_TTL).close();
                return;
            } catch (LockUnavailableException e) {
                if (System.nanoTime() - end > 0) {
                    throw e;
                }
            }
        }
    }

    private static final Duration WARM_UP_TTL = Duration.ofSeconds(5);

    /** Expires the session behind {@code lease}; a no-op where there is no session. */
    void expire(FencedLease lease) throws Exception {
        expiry.expire(lease);
    }

    @Override
    public void close() {
        closer.run();
    }

    /** Opens the lock of {@code strategy} on {@code endpoints} (comma-separated). */
    static ClientLock open(Strategy strategy, String endpoints, long sessionMillis) {
        return switch (strategy.servers()) {
            case REDIS -> redis(strategy, List.of(endpoints.split(",")));
            case SENTINEL -> sentinel(strategy, endpoints);
            case ZOOKEEPER -> zooKeeper(endpoints, sessionMillis);
            case ETCD -> etcd(endpoints);
            case POSTGRES, MARIADB -> jdbc(strategy, endpoints);
            case NONE -> new ClientLock(null, lease -> {}, () -> {});
        };
    }

    private static ClientLock redis(Strategy strategy, List<String> uris) {
        Redlock lock = Redlock.builder()
                .nodes(uris)
                .restartGuard(strategy == Strategy.REDLOCK_GUARDED || strategy == Strategy.REDLOCK_LEADER)
                .build();
        return new ClientLock(lock, lease -> {}, lock::close);
    }

    /**
     * The single-node lock on the master that the sentinels of {@code uri} name, with {@code WAIT 1}
     * for {@link Strategy#SENTINEL_WAIT_LEADER} and without for the other; a node timeout that a
     * replica's acknowledgement fits in on a busy machine.
     */
    private static ClientLock sentinel(Strategy strategy, String uri) {
        boolean waits = strategy == Strategy.SENTINEL_WAIT_LEADER;
        Redlock lock = Redlock.builder()
                .node(uri)
                .nodeTimeout(SENTINEL_NODE_TIMEOUT)
                .waitForReplicas(waits ? 1 : 0, SENTINEL_NODE_TIMEOUT.dividedBy(2))
                .build();
        return new ClientLock(lock, lease -> {}, lock::close);
    }

    private static final Duration SENTINEL_NODE_TIMEOUT = Duration.ofMillis(500);

    private static ClientLock zooKeeper(String connectString, long sessionMillis) {
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs((int) sessionMillis)
                .connectionTimeoutMs((int) sessionMillis)
                .retryPolicy(new RetryNTimes(Integer.MAX_VALUE, 100))
                // The connect string names this client's own proxies; the ensemble's config names the
                // servers' own ports, which Curator's ensemble tracker would put in its place, so that
                // the client would go round its proxies and no partition would cut it off.
                .ensembleTracker(false)
                .build();
        curator.start();
        ZooKeeperLock lock = ZooKeeperLock.builder().client(curator).build();
        return new ClientLock(lock, lease -> ZooKeeperServers.expireSession(curator, connectString), () -> {
            lock.close();
            curator.close();
        });
    }

    private static ClientLock etcd(String endpoints) {
        Client client = Client.builder().endpoints(endpoints.split(",")).build();
        EtcdLock lock = EtcdLock.builder().client(client).keyPrefix(ETCD_PREFIX).build();
        return new ClientLock(lock, lease -> revokeLeaseOf(client, lease), () -> {
            lock.close();
            client.close();
        });
    }

    /** The database lock of {@code strategy} on {@code url} (the test kit's server, its user), in the torture's table. */
    static JdbcLock jdbcLock(Strategy strategy, String url) {
        JdbcUser user = JdbcUser.of(strategy);
        return JdbcLock.builder()
                .url(url)
                .user(user.user())
                .password(user.password())
                .table(JDBC_TABLE)
                .build();
    }

    /** The database lock; an expiry sets the row's expiry to the database's now, as if no renewal had come. */
    private static ClientLock jdbc(Strategy strategy, String url) {
        JdbcUser user = JdbcUser.of(strategy);
        JdbcLock lock = jdbcLock(strategy, url);
        return new ClientLock(
                lock,
                lease -> {
                    try (Connection connection = DriverManager.getConnection(url, user.user(), user.password());
                            PreparedStatement expire = connection.prepareStatement(
                                    "UPDATE " + JDBC_TABLE + " SET expires_at = " + user.now() + " WHERE token = ?")) {
                        expire.setLong(1, lease.fencingToken());
                        expire.executeUpdate();
                    }
                },
                lock::close);
    }

    /** Revokes the etcd lease that holds our lock key: the key whose create revision is our token. */
    private static void revokeLeaseOf(Client client, FencedLease lease) throws Exception {
        ByteSequence prefix = ByteSequence.from(ETCD_PREFIX, StandardCharsets.UTF_8);
        List<KeyValue> keys = client.getKVClient()
                .get(prefix, GetOption.builder().isPrefix(true).build())
                .get(5, TimeUnit.SECONDS)
                .getKvs();
        for (KeyValue kv : keys) {
            if (kv.getCreateRevision() == lease.fencingToken() && kv.getLease() != 0) {
                client.getLeaseClient().revoke(kv.getLease()).get(5, TimeUnit.SECONDS);
            }
        }
    }
}
