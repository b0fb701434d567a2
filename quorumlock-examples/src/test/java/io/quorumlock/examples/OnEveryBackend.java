package io.quorumlock.examples;

import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.Lease;
import io.quorumlock.etcd.EtcdLock;
import io.quorumlock.jdbc.JdbcFence;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.MariaDbServerExtension;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.ZooKeeperServers;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.curator.test.TestingServer;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.mariadb.jdbc.MariaDbDataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * What the tests of the primitives built on any lock share: the servers of every backend, started
 * for the class (etcd, PostgreSQL and MariaDB skipped with the reason where they are not installed),
 * and locks of each, closed after each test.
 */
abstract class OnEveryBackend {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @RegisterExtension
    static final MariaDbServerExtension mariadb = new MariaDbServerExtension();

    @TempDir
    static Path zooKeeperDir;

    private static TestingServer zooKeeper;
    /** The databases whose lock table was made, by URL: each test class has servers of its own. */
    private static final Set<String> tablesMade = new HashSet<>();

    final List<AutoCloseable> closing = new ArrayList<>();

    enum Backend {
        REDIS,
        REDLOCK,
        ZOOKEEPER,
        ETCD,
        POSTGRESQL,
        MARIADB;

        boolean fenced() {
            return this != REDIS && this != REDLOCK;
        }
    }

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        if (zooKeeper != null) {
            zooKeeper.close();
            zooKeeper = null;
        }
    }

    /** A lock of {@code backend}, as one process of the fleet holds it, named {@code holder}. */
    @SuppressWarnings("unchecked")
    DistributedLock<Lease> lock(Backend backend, String holder) throws Exception {
        DistributedLock<? extends Lease> lock = switch (backend) {
            case REDIS ->
                Redlock.builder()
                        .nodes(redis.uris().subList(0, 1))
                        .holder(holder)
                        .restartGuard(false)
                        .build();
            case REDLOCK ->
                Redlock.builder()
                        .nodes(redis.uris())
                        .holder(holder)
                        .restartGuard(false)
                        .build();
            case ZOOKEEPER ->
                ZooKeeperLock.builder()
                        .connectString(zooKeeper().getConnectString())
                        .holder(holder)
                        .build();
            case ETCD ->
                EtcdLock.builder().endpoints(etcd.endpoints()).holder(holder).build();
            case POSTGRESQL, MARIADB -> jdbcLock(backend, holder);
        };
        closing.add(lock);
        return (DistributedLock<Lease>) lock;
    }

    private static synchronized TestingServer zooKeeper() throws Exception {
        if (zooKeeper == null) {
            zooKeeper = ZooKeeperServers.server(zooKeeperDir);
        }
        return zooKeeper;
    }

    private static JdbcLock jdbcLock(Backend backend, String holder) throws SQLException {
        DataSource database;
        if (backend == Backend.POSTGRESQL) {
            PGSimpleDataSource pg = new PGSimpleDataSource();
            pg.setUrl(postgres.jdbcUrl());
            pg.setUser(postgres.user());
            database = pg;
        } else {
            MariaDbDataSource maria = new MariaDbDataSource(mariadb.jdbcUrl());
            maria.setUser(mariadb.user());
            maria.setPassword(mariadb.password());
            database = maria;
        }
        JdbcLock lock = JdbcLock.builder()
                .dataSource(database)
                .table("semaphore_locks")
                .holder(holder)
                .build();
        synchronized (tablesMade) {
            if (tablesMade.add(backend == Backend.POSTGRESQL ? postgres.jdbcUrl() : mariadb.jdbcUrl())) {
                lock.createTable();
            }
        }
        return lock;
    }

    /** Storage behind a {@link JdbcFence} (H2 in memory): a write under a resource's token, refused when stale. */
    static final class FencedStore {
        private final JdbcDataSource store = new JdbcDataSource();
        private final JdbcFence fence = JdbcFence.builder().build();

        FencedStore() throws SQLException {
            store.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
            try (Connection setup = store.getConnection()) {
                fence.createTable(setup);
            }
        }

        /** A reader's read under {@code lease}: the fence raised to its token, nothing refused. */
        void read(FencedLease lease) throws SQLException {
            try (Connection tx = store.getConnection()) {
                tx.setAutoCommit(false);
                fence.raise(tx, lease);
                tx.commit();
            }
        }

        /** A write checked by the fence under {@code token} of {@code resource}, in a transaction of its own. */
        void write(String resource, long token) throws SQLException {
            try (Connection tx = store.getConnection()) {
                tx.setAutoCommit(false);
                try {
                    fence.checkRawToken(tx, resource, token);
                    tx.commit();
                } catch (RuntimeException | SQLException e) {
                    tx.rollback();
                    throw e;
                }
            }
        }
    }
}
