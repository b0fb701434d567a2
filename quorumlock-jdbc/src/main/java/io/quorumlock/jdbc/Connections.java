package io.quorumlock.jdbc;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.internal.Holders;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
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

    /**
     * How long the connection of a grant or a release is kept for the next one before it goes back
     * to the data source: back-to-back statements skip asking the data source on another thread.
     */
    static final long KEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

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

    /** The lock's timer, which gives a kept connection back. */
    private final Timers timers;
    /** The connection kept after a grant or a release, and since when; null if none. */
    private final AtomicReference<Kept> kept = new AtomicReference<>();

    private final AtomicBoolean givingBack = new AtomicBoolean();

    private record Kept(Connection connection, long sinceNanos) {}

    Connections(
            DataSource dataSource,
            String database,
            String table,
            int maxResourceLength,
            Dialect configuredDialect,
            Ticker ticker,
            long requestTimeoutNanos,
            int instance,
            Timers timers) {
        this.timers = timers;
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
        Kept last = kept.getAndSet(null);
        if (last != null) {
            closeQuietly(last.connection());
        }
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
        return open(deadline, uninterruptibly, false);
    }

    /**
     * As {@link #open(long, boolean)}; {@code hot} for a grant or a release, which takes the
     * connection the last one kept, if it was kept less than {@link #KEEP_NANOS} ago, and whose
     * session may keep its own ({@link LockTable.Session#keep()}).
     */
    LockTable.Session open(long deadline, boolean uninterruptibly, boolean hot) throws SQLException {
        Kept last = hot ? kept.getAndSet(null) : null;
        Connection connection = null;
        if (last != null && ticker.nanos() - last.sinceNanos() < KEEP_NANOS && statements != null) {
            connection = last.connection();
        } else if (last != null) {
            closeQuietly(last.connection());
        }
        if (connection == null) {
            connection = connect(deadline, uninterruptibly);
        }
        try {
            statements(connection);
            return new LockTable.Session(connection, ticker, deadline, hot ? this::keep : null);
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

    /** Keeps {@code connection} for the next grant or release, and gives it back if none comes soon. */
    private void keep(Connection connection) {
        Kept before = kept.getAndSet(new Kept(connection, ticker.nanos()));
        if (before != null) {
            closeQuietly(before.connection());
        }
        if (givingBack.compareAndSet(false, true)) {
            try {
                timers.schedule(() -> timers.execute(this::giveBack), KEEP_NANOS);
            } catch (RejectedExecutionException closing) {
                givingBack.set(false);
                giveBack(); // the lock closes: nothing is kept
            }
        }
    }

    /** Gives the kept connection back to the data source once it was kept long enough, and looks again later if it was renewed. */
    private void giveBack() {
        Kept last = kept.get();
        if (last != null && ticker.nanos() - last.sinceNanos() >= KEEP_NANOS && kept.compareAndSet(last, null)) {
            closeQuietly(last.connection());
        }
        givingBack.set(false);
        Kept now = kept.get();
        if (now != null && givingBack.compareAndSet(false, true)) {
            try {
                timers.schedule(
                        () -> timers.execute(this::giveBack),
                        Math.max(0, KEEP_NANOS - (ticker.nanos() - now.sinceNanos())));
            } catch (RejectedExecutionException closed) {
                givingBack.set(false);
                if (kept.compareAndSet(now, null)) {
                    closeQuietly(now.connection());
                }
            }
        }
    }

    /** Whether a connection is kept now. */
    boolean keeps() {
        return kept.get() != null;
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
