package io.quorumlock.jdbc;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.internal.Holders;
import io.quorumlock.internal.Ticker;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The database of a {@link JdbcLock}: connections within a deadline, asked for on the connector
 * threads; the table's statements and the dialect, resolved on the first connection; and the
 * database as messages name it. The lock, its attempts and its leases' rows share it, with the
 * lock's clock and request timeout.
 */
final class Connections {

    private static final Logger log = LoggerFactory.getLogger(JdbcLock.class);

    /** How many connections may be pending at once: more means the database does not answer. */
    private static final int MAX_CONNECTING = 64;

    private final DataSource dataSource;
    private final String table;
    private final int maxResourceLength;
    private final Dialect configuredDialect;
    final Ticker ticker;
    final long requestTimeoutNanos;
    /** Asks the data source for connections, so that no caller waits past its deadline. */
    private final ThreadPoolExecutor connector;

    /** The table's statements for the database's dialect, made on the first connection. */
    private volatile LockTable statements;
    /** The database as messages name it (never with a password). */
    private volatile String database;

    Connections(
            DataSource dataSource,
            String database,
            String table,
            int maxResourceLength,
            Dialect configuredDialect,
            Ticker ticker,
            long requestTimeoutNanos,
            int instance) {
        this.dataSource = dataSource;
        this.database = database;
        this.table = table;
        this.maxResourceLength = maxResourceLength;
        this.configuredDialect = configuredDialect;
        this.ticker = ticker;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.connector = new ThreadPoolExecutor(
                0,
                MAX_CONNECTING,
                30,
                TimeUnit.SECONDS,
                new SynchronousQueue<>(),
                daemon("quorumlock-jdbc-" + instance + "-connect"));
    }

    /** The table's statements, once a connection resolved them; null before. */
    LockTable statements() {
        return statements;
    }

    /** The database as messages name it (never with a password). */
    String database() {
        return database;
    }

    /** Closes the connection {@code url(...)} kept; the connector's threads end by themselves when idle. */
    void close() {
        if (dataSource instanceof UrlDataSource own) {
            own.close();
        }
    }

    /** Threads named {@code name-1}, {@code name-2}, ... that do not keep the JVM alive. */
    static ThreadFactory daemon(String name) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** What a failure means; {@code statements} is null if no connection was made. */
    SqlErrors.Failure classify(SQLException e, LockTable statements) {
        return SqlErrors.classify(
                e, statements != null, table, statements == null ? configuredDialect : statements.dialect);
    }

    /**
     * A connection for statements until {@code deadline}, with the table's statements resolved;
     * {@code uninterruptibly} for a renewal or a release, which must not give up on an interrupt.
     */
    LockTable.Session open(long deadline, boolean uninterruptibly) throws SQLException {
        Connection connection = connect(deadline, uninterruptibly);
        try {
            statements(connection);
            return new LockTable.Session(connection, ticker, deadline);
        } catch (SQLException | RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /**
     * A connection from the data source by {@code deadline}: asked for on the connector thread, so
     * that a database that accepts a connection and then stays silent (or a pool that waits for
     * one) cannot hold the caller past the deadline. A connection that comes too late is closed.
     */
    Connection connect(long deadline, boolean uninterruptibly) throws SQLException {
        long left = deadline - ticker.nanos();
        CompletableFuture<Connection> connecting;
        try {
            connecting = CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return dataSource.getConnection();
                        } catch (SQLException e) {
                            throw new CompletionException(e);
                        }
                    },
                    connector);
        } catch (RejectedExecutionException e) {
            throw new SQLTransientConnectionException(
                    "too many connections to the database are pending (" + MAX_CONNECTING + "): it does not answer");
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return connecting.get(Math.max(0, deadline - ticker.nanos()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    if (!uninterruptibly) {
                        connecting.thenAccept(Connections::closeQuietly);
                        Thread.currentThread().interrupt();
                        throw new SQLException("interrupted while connecting to the database", e);
                    }
                    interrupted = true;
                }
            }
        } catch (TimeoutException e) {
            connecting.thenAccept(Connections::closeQuietly);
            throw new SQLTimeoutException(
                    "no connection to the database within " + TimeUnit.NANOSECONDS.toMillis(Math.max(0, left)) + " ms");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof SQLException sql) {
                throw sql;
            }
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new SQLException("could not connect to the database: " + cause, cause);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (SQLException e) {
            log.debug("could not close a connection that came too late: {}", e.toString());
        }
    }

    private LockTable statements(Connection connection) throws SQLException {
        LockTable resolved = statements;
        if (resolved != null) {
            return resolved;
        }
        DatabaseMetaData metadata = connection.getMetaData();
        if (metadata.getURL() != null) {
            database = UrlDataSource.redact(metadata.getURL());
        }
        Dialect dialect = configuredDialect;
        if (dialect == null) {
            String product = metadata.getDatabaseProductName();
            dialect = Dialect.of(product, metadata.getDatabaseProductVersion())
                    .orElseThrow(() -> new IllegalSettingException(
                            "dialect",
                            "JdbcLock runs on PostgreSQL, MariaDB and H2, not on " + Holders.shown(product)
                                    + " (MySQL has no sequences for the fencing tokens); if this database speaks one"
                                    + " of their dialects, name it with dialect(...)"));
        }
        dialect.checkMaxResourceLength(maxResourceLength);
        resolved = new LockTable(table, dialect);
        statements = resolved;
        return resolved;
    }
}
