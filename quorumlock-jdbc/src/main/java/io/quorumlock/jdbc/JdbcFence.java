package io.quorumlock.jdbc;

import io.quorumlock.FencedLease;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLSyntaxErrorException;
import java.sql.SQLTransactionRollbackException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The storage-side fence: in the caller's own transaction, it records the fencing token of the
 * lease under which a write is made, and refuses a token older than the newest one it has seen for
 * that resource. The caller's business writes go in the same transaction, so a writer whose lease
 * was lost (a paused process that wakes up after another client was granted the lock) changes
 * nothing: its transaction is rolled back.
 *
 * <pre>{@code
 * class StockSales {
 *     private final JdbcFence fence = JdbcFence.builder().build(); // table quorumlock_fence
 *     private final DistributedLock<FencedLease> locks;            // a ZooKeeperLock, EtcdLock or JdbcLock
 *     private final DataSource database;
 *
 *     StockSales(DistributedLock<FencedLease> locks, DataSource database) throws SQLException {
 *         this.locks = locks;
 *         this.database = database;
 *         try (Connection connection = database.getConnection()) {
 *             fence.createTable(connection);                        // or run fence.ddl() in a migration
 *         }
 *     }
 *
 *     void sellOne(String sku) throws SQLException {
 *         try (FencedLease lease = locks.acquire("stock:" + sku, Duration.ofSeconds(30), Duration.ofSeconds(5));
 *                 Connection tx = database.getConnection()) {
 *             tx.setAutoCommit(false);
 *             try {
 *                 fence.check(tx, lease);                           // first, before the read
 *                 // ... read the stock of sku on tx, write it decremented ...
 *                 tx.commit();
 *             } catch (StaleTokenException e) {
 *                 tx.rollback();                                    // a newer holder wrote: this lease is gone
 *                 throw e;
 *             } catch (SQLException | RuntimeException e) {
 *                 tx.rollback();                                    // any other failure: nothing half done
 *                 throw e;
 *             }
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>docs/fencing-jdbc.md has the same as a complete program, on ZooKeeper and PostgreSQL.
 * Without the table, every call that uses it fails with an {@link SQLException} that names the
 * table and both ways to create it.
 *
 * <p>The table holds one row per resource: {@code (resource, token)}. {@link #check} runs {@code
 * UPDATE <table> SET token = ? WHERE resource = ? AND token <= ?}; when that updates no row, the
 * resource is either new, and its row is inserted without a race (PostgreSQL: {@code INSERT ... ON
 * CONFLICT DO NOTHING}; other databases: a plain {@code INSERT} inside a savepoint, so that a
 * unique violation from a concurrent first writer does not abort the caller's transaction), or its
 * recorded token is newer and the check throws {@link StaleTokenException}.
 *
 * <p><b>The same token is accepted again:</b> every grant of a lock carries a strictly larger
 * token than the grants before it, so two holders never share one, and an equal token can only
 * come from the same lease, which may write several times. Only an older token is refused.
 *
 * <p><b>Locking:</b> after {@code check} the transaction holds the write lock on the resource's
 * fence row until it commits or rolls back, so transactions fenced on the same resource run one
 * after another. Call {@code check} first in the transaction, before the reads that its writes
 * depend on: those reads then see the latest committed data.
 *
 * <p><b>One token source per resource:</b> tokens are comparable only when they come from one lock
 * service (one ZooKeeper ensemble, one etcd cluster, or one JdbcLock table) for one resource name. Do not fence a
 * resource with leases from two services.
 *
 * <p><b>Names compare exactly,</b> as {@link JdbcLock} compares them: {@code "Stock"} and {@code
 * "stock"}, {@code "sku "} and {@code "sku"} are different resources. On MariaDB the table's {@code
 * resource} column takes the binary, no-pad collation {@code utf8mb4_nopad_bin} for it; a table
 * made with another collation, which folds case or trailing spaces, is refused with the statement
 * that migrates it.
 *
 * <p>Tested on PostgreSQL, MariaDB and H2. A {@code JdbcFence}'s settings are fixed and it is
 * thread-safe; the connection passed to each call belongs to the caller, who commits or rolls back.
 */
public final class JdbcFence {

    private static final Logger log = LoggerFactory.getLogger(JdbcFence.class);

    /** Integrity constraint violation: SQLSTATE class 23 (23505 on PostgreSQL and H2). */
    private static final String INTEGRITY_VIOLATION_CLASS = "23";

    /** PostgreSQL's undefined_table: after it, PostgreSQL refuses every statement of the transaction. */
    private static final String UNDEFINED_TABLE_POSTGRESQL = "42P01";

    /**
     * A missing table: the standard 42S02, H2's 42S03 (with candidates that differ in case) and
     * 42S04 (the database is empty), PostgreSQL's 42P01.
     */
    private static final Set<String> TABLE_NOT_FOUND = Set.of("42S02", "42S03", "42S04", UNDEFINED_TABLE_POSTGRESQL);

    /** SQLSTATE for a serialization failure, which tells the caller to retry the transaction. */
    private static final String SERIALIZATION_FAILURE = "40001";

    /**
     * Rounds of update, read, insert before giving up. Under READ COMMITTED two rounds always
     * settle it (rows are never deleted); more is only needed if a concurrent first writer rolls
     * back in between.
     */
    private static final int MAX_ROUNDS = 5;

    private final String table;
    private final int maxResourceLength;
    private final String update;
    private final String select;
    private final String insert;
    private final String insertOnConflictDoNothing;
    /** The token's record on MariaDB and MySQL. */
    private final MariaDbFence mariaDb;

    JdbcFence(JdbcFenceBuilder builder) {
        this.table = builder.table;
        this.maxResourceLength = builder.maxResourceLength;
        this.update = "UPDATE " + table + " SET token = ? WHERE resource = ? AND token <= ?";
        this.select = "SELECT token FROM " + table + " WHERE resource = ?";
        this.insert = "INSERT INTO " + table + " (resource, token) VALUES (?, ?)";
        this.insertOnConflictDoNothing = insert + " ON CONFLICT (resource) DO NOTHING";
        this.mariaDb = new MariaDbFence(table, insert, select);
    }

    /** {@return a builder with the defaults: table {@code quorumlock_fence}, resources up to 255 characters} */
    public static JdbcFenceBuilder builder() {
        return new JdbcFenceBuilder();
    }

    /** {@return the name of the fence table} */
    public String table() {
        return table;
    }

    /** {@return the longest resource name the table holds} */
    public int maxResourceLength() {
        return maxResourceLength;
    }

    /**
     * {@return the DDL of the fence table} {@code CREATE TABLE IF NOT EXISTS <table> (resource
     * VARCHAR(<maxResourceLength>) PRIMARY KEY, token BIGINT NOT NULL)}, valid on PostgreSQL and H2;
     * copy it into your migrations if the application has no right to create tables. On MariaDB,
     * use {@link #ddl(Dialect)}.
     */
    public String ddl() {
        return ddl(Dialect.POSTGRESQL);
    }

    /**
     * {@return the DDL of the fence table on {@code dialect}} On MariaDB its {@code resource}
     * column compares names byte for byte, as the lock's does ({@code CHARACTER SET utf8mb4 COLLATE
     * utf8mb4_nopad_bin}); elsewhere it is {@link #ddl()}.
     */
    public String ddl(Dialect dialect) {
        String resource = Objects.requireNonNull(dialect, "dialect") == Dialect.MARIADB
                ? "VARCHAR(" + maxResourceLength + ") CHARACTER SET utf8mb4 COLLATE " + MariaDbFence.EXACT_COLLATION
                        + " NOT NULL PRIMARY KEY"
                : "VARCHAR(" + maxResourceLength + ") PRIMARY KEY";
        return "CREATE TABLE IF NOT EXISTS " + table + " (resource " + resource + ", token BIGINT NOT NULL)";
    }

    /**
     * Creates the fence table if it does not exist, by running {@link #ddl(Dialect)} for the
     * connection's database on it. It commits nothing itself: with auto-commit off, the caller commits.
     *
     * @param connection where to create the table
     * @throws SQLException if the database refuses the DDL
     */
    public void createTable(Connection connection) throws SQLException {
        Objects.requireNonNull(connection, "connection");
        try (Statement statement = connection.createStatement()) {
            statement.execute(ddl(dialect(connection)));
        }
    }

    /**
     * Records the lease's fencing token for its resource in the caller's transaction, or refuses it
     * if the fence has already seen a newer token for that resource. Make the writes that the lease
     * protects on the same connection before committing; on {@link StaleTokenException}, roll back.
     *
     * @param tx the caller's connection, with auto-commit off
     * @param lease the lease under which the transaction writes; its {@link FencedLease#resource()}
     *     names the fence row and its {@link FencedLease#fencingToken()} is checked
     * @throws StaleTokenException if the fence has recorded a newer token for the resource
     * @throws IllegalArgumentException if the connection is in auto-commit mode, or the resource
     *     name is empty or longer than {@link #maxResourceLength()}
     * @throws SQLException if the database fails; a serialization failure (SQLSTATE 40001) means
     *     the transaction should be retried; if the fence table does not exist, the message says so
     *     and how to create it, the database's error is the cause and its SQLSTATE is kept; if a
     *     MariaDB fence table folds case or trailing spaces, the message gives the statement that
     *     migrates it
     */
    public void check(Connection tx, FencedLease lease) throws SQLException {
        Objects.requireNonNull(lease, "lease");
        record(tx, lease.resource(), lease.fencingToken(), true);
    }

    /**
     * For a reader (a read lease of a {@code DistributedReadWriteLock}): records the lease's token
     * as the resource's newest unless a newer one is recorded, and refuses nothing. A writer whose
     * token is older, one paused past its lease, is refused from then on, while readers that took
     * their tokens in any order all read. Call it before the reads, in their transaction.
     *
     * @throws IllegalArgumentException as {@link #check(Connection, FencedLease)}
     * @throws SQLException as {@link #check(Connection, FencedLease)}
     */
    public void raise(Connection tx, FencedLease lease) throws SQLException {
        Objects.requireNonNull(lease, "lease");
        record(tx, lease.resource(), lease.fencingToken(), false);
    }

    /**
     * The same as {@link #check(Connection, FencedLease)} for a token that does not come from a
     * {@link FencedLease}: for example one carried in a message by a writer that holds the lease
     * elsewhere. The token must come from the same monotonic source as every other token checked
     * for this resource (one lock service, one resource name); the fence cannot verify that.
     *
     * @param tx the caller's connection, with auto-commit off
     * @param resource the name of the fenced resource, as the lock names it
     * @param token the fencing token of the grant under which the transaction writes
     * @throws StaleTokenException if the fence has recorded a newer token for the resource
     * @throws IllegalArgumentException as {@link #check(Connection, FencedLease)}
     * @throws SQLException as {@link #check(Connection, FencedLease)}
     */
    public void checkRawToken(Connection tx, String resource, long token) throws SQLException {
        record(tx, resource, token, true);
    }

    /**
     * Reads the newest token the fence has recorded for a resource, as the connection sees it.
     *
     * @param connection any connection, in a transaction or not
     * @param resource the name of the fenced resource
     * @return the newest token, or empty if no write to the resource was ever fenced
     * @throws SQLException if the database fails; a missing fence table as in {@link
     *     #check(Connection, FencedLease)}
     */
    public OptionalLong newestToken(Connection connection, String resource) throws SQLException {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(resource, "resource");
        try {
            return readNewestToken(connection, resource);
        } catch (SQLException e) {
            throw explainMissingTable(e, connection);
        }
    }

    private OptionalLong readNewestToken(Connection connection, String resource) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(select)) {
            statement.setString(1, resource);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() ? OptionalLong.of(rows.getLong(1)) : OptionalLong.empty();
            }
        }
    }

    /** Records {@code token} as the resource's newest; an older one is refused if {@code refuse}. */
    private void record(Connection tx, String resource, long token, boolean refuse) throws SQLException {
        Objects.requireNonNull(tx, "tx");
        requireValidResource(resource);
        if (tx.getAutoCommit()) {
            throw new IllegalArgumentException("the fence must run in the caller's transaction, but the connection"
                    + " is in auto-commit mode: call setAutoCommit(false) and make the protected writes on the"
                    + " same connection before commit()");
        }
        try {
            recordInRounds(tx, resource, token, refuse);
        } catch (SQLException e) {
            throw explainMissingTable(e, tx);
        }
    }

    private void recordInRounds(Connection tx, String resource, long token, boolean refuse) throws SQLException {
        if (isMariaDb(tx)) {
            long newest = mariaDb.record(tx, resource, token);
            if (newest > token && refuse) {
                throw stale(resource, token, newest);
            }
            return;
        }
        for (int round = 1; round <= MAX_ROUNDS; round++) {
            if (advance(tx, resource, token)) {
                return;
            }
            OptionalLong newest = readNewestToken(tx, resource);
            if (newest.isPresent()) {
                if (newest.getAsLong() > token) {
                    if (!refuse) {
                        return; // a newer token is recorded already: nothing to raise
                    }
                    throw stale(resource, token, newest.getAsLong());
                }
                continue; // the row was committed between our two statements: update it now
            }
            if (insertIfAbsent(tx, resource, token)) {
                return;
            }
            // a concurrent first writer inserted the row: compare with its token in the next round
        }
        throw new SQLTransactionRollbackException(
                "the fence row of '" + resource + "' in " + table + " was created by a concurrent transaction that"
                        + " this transaction cannot see (snapshot isolation?): retry the transaction",
                SERIALIZATION_FAILURE);
    }

    /** The refusal of {@code token}, logged. */
    private static StaleTokenException stale(String resource, long token, long newest) {
        log.debug("Refused stale token {} for '{}': newest is {}", token, resource, newest);
        return new StaleTokenException(resource, token, newest);
    }

    /** {@code UPDATE ... WHERE token <= ?}: true if the row exists and its token was not newer. */
    private boolean advance(Connection tx, String resource, long token) throws SQLException {
        try (PreparedStatement statement = tx.prepareStatement(update)) {
            statement.setLong(1, token);
            statement.setString(2, resource);
            statement.setLong(3, token);
            return statement.executeUpdate() > 0;
        }
    }

    /** Inserts the resource's first row; false if a concurrent transaction inserted it first. */
    private boolean insertIfAbsent(Connection tx, String resource, long token) throws SQLException {
        if (isPostgreSql(tx)) {
            // Waits for a concurrent inserter of the same key to end, then inserts or does nothing.
            return executeInsert(tx, insertOnConflictDoNothing, resource, token) > 0;
        }
        Savepoint beforeInsert = tx.setSavepoint();
        try {
            executeInsert(tx, insert, resource, token);
        } catch (SQLException e) {
            if (!isIntegrityViolation(e)) {
                throw e;
            }
            tx.rollback(beforeInsert); // keeps the caller's transaction usable after the violation
            return false;
        }
        release(tx, beforeInsert);
        return true;
    }

    private static int executeInsert(Connection tx, String sql, String resource, long token) throws SQLException {
        try (PreparedStatement statement = tx.prepareStatement(sql)) {
            statement.setString(1, resource);
            statement.setLong(2, token);
            return statement.executeUpdate();
        }
    }

    private static void release(Connection tx, Savepoint savepoint) throws SQLException {
        try {
            tx.releaseSavepoint(savepoint);
        } catch (SQLFeatureNotSupportedException e) {
            // released at commit instead
        }
    }

    /** The dialect whose DDL fits the connection's database: MariaDB's, or the portable one. */
    static Dialect dialect(Connection connection) throws SQLException {
        DatabaseMetaData metadata = connection.getMetaData();
        return Dialect.of(metadata.getDatabaseProductName(), metadata.getDatabaseProductVersion())
                .orElse(Dialect.POSTGRESQL);
    }

    private static boolean isPostgreSql(Connection tx) throws SQLException {
        return "postgresql".equals(tx.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT));
    }

    private static boolean isMariaDb(Connection tx) throws SQLException {
        String product = tx.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
        return product.equals("mariadb") || product.equals("mysql");
    }

    private static boolean isIntegrityViolation(SQLException e) {
        return sqlState(e, state -> state.startsWith(INTEGRITY_VIOLATION_CLASS)).isPresent();
    }

    /**
     * A missing fence table, which the database reports with the table's name only, told with the
     * remedy; any other failure is returned as it is.
     */
    private SQLException explainMissingTable(SQLException e, Connection connection) throws SQLException {
        Optional<String> state = sqlState(e, TABLE_NOT_FOUND::contains);
        if (state.isEmpty()) {
            return e;
        }
        String message = "the fence table " + table + " does not exist: call fence.createTable(connection) once,"
                + " or run fence.ddl() in a migration (" + ddl(dialect(connection)) + ")";
        if (state.get().equals(UNDEFINED_TABLE_POSTGRESQL) && !connection.getAutoCommit()) {
            message += "; PostgreSQL has aborted the transaction: roll it back";
        }
        return new SQLSyntaxErrorException(message, state.get(), e.getErrorCode(), e);
    }

    /** {@return the first SQLSTATE in the exception's chain that matches, if any} */
    private static Optional<String> sqlState(SQLException e, Predicate<String> matches) {
        for (SQLException next = e; next != null; next = next.getNextException()) {
            String state = next.getSQLState();
            if (state != null && matches.test(state)) {
                return Optional.of(state);
            }
        }
        return Optional.empty();
    }

    private void requireValidResource(String resource) {
        Objects.requireNonNull(resource, "resource");
        if (resource.isEmpty()) {
            throw new IllegalArgumentException("resource must not be empty");
        }
        if (resource.length() > maxResourceLength) {
            throw new IllegalArgumentException("resource must be at most maxResourceLength (" + maxResourceLength
                    + ") characters, was " + resource.length() + ": raise maxResourceLength (and the column) or"
                    + " use shorter lock names");
        }
    }

    @Override
    public String toString() {
        return "JdbcFence[" + table + "]";
    }
}
