package io.quorumlock.jdbc;

import io.quorumlock.internal.Ticker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The statements of {@link JdbcLock} on its table, each one on its own in auto-commit: the table is
 * {@code (resource, holder, token, expires_at, attempt)}, one row per resource, never deleted by
 * the lock (a released row keeps its token, with no holder); on PostgreSQL also {@code
 * wanted_until}, until when a waiter wants the row. Knows SQL, never leases.
 *
 * <p>A grant ({@link Grants}) draws its token from the sequence and takes the row only if the
 * row's token is older: the row's token only ever grows. It records the attempt's identity, by
 * which a grant whose answer was lost is found and freed ({@link #settle}).
 */
final class LockTable {

    /**
     * What a read of a resource's row found; {@code attempt} is the identity of the grant that
     * took it, 0 if unknown.
     */
    record Row(Optional<String> holder, long token, long millisLeft, long attempt) {
        /** Whether someone holds the row now by the database's clock. */
        boolean held() {
            return holder.isPresent() && millisLeft > 0;
        }
    }

    private static final Executor DIRECT = Runnable::run;

    final String table;
    final Dialect dialect;
    /** Where a release tells waiters of it ({@code pg_notify}) on PostgreSQL; null elsewhere. */
    final String channel;

    private final Grants grants;
    private final String nextToken;
    private final String read;
    private final String renew;
    private final String releaseByToken;
    private final String releaseByAttempt;
    /** MariaDB: the release when no waiter holds a wake-up slot of the resource (one statement). */
    private final String releaseUnwanted;

    private final String tombstone;
    private final String insertTombstone;
    private final String columns;
    private final String clock;

    LockTable(String table, Dialect dialect) {
        this.table = table;
        this.dialect = dialect;
        String now = dialect.now();
        String nowPlus = dialect.nowPlusMillis();
        this.grants = new Grants(table, dialect);
        this.nextToken = dialect.nextToken(table);
        this.read = "SELECT holder, token, " + dialect.millisLeft() + ", attempt FROM " + table + " WHERE resource = ?";
        this.renew = "UPDATE " + table + " SET expires_at = " + nowPlus
                + " WHERE resource = ? AND token = ? AND holder IS NOT NULL AND expires_at > " + now;
        // the attempt is cleared: only the statement that takes the row again answers with its own
        String free = "UPDATE " + table + " SET holder = NULL, expires_at = " + now
                + ", attempt = NULL WHERE resource = ? AND %s = ? AND holder IS NOT NULL";
        this.channel = dialect == Dialect.POSTGRESQL ? PgListener.channel(table) : null;
        if (channel != null) {
            // pg_notify only for a row a waiter marked: a release nobody waits for sends nothing
            free = "WITH freed AS (" + free + " RETURNING wanted_until > " + now + " AS wanted)"
                    + " SELECT CASE WHEN wanted THEN pg_notify(?, ?) END FROM freed";
        }
        this.releaseByToken = String.format(free, "token");
        // and by the holder: a process of an earlier version, which records no attempt, is never freed
        this.releaseByAttempt = String.format(free, "holder = ? AND attempt");
        this.releaseUnwanted = dialect == Dialect.MARIADB
                ? releaseByToken + " AND COALESCE("
                        + String.join(", ", java.util.Collections.nCopies(MariaDbWaker.SLOTS, "IS_USED_LOCK(?)"))
                        + ") IS NULL"
                : null;
        this.tombstone = "UPDATE " + table + " SET holder = NULL, expires_at = " + now + ", token = "
                + dialect.nextValue(table) + ", attempt = NULL WHERE resource = ? AND token <= ?"
                + " AND (holder IS NULL OR expires_at <= " + now + ")";
        String insert = "INSERT INTO " + table + " (resource, holder, token, expires_at) VALUES (?, NULL, "
                + dialect.nextValue(table) + ", " + now + ")";
        String ifAbsent = dialect.insertIfAbsent(insert);
        this.insertTombstone = ifAbsent != null ? ifAbsent : insert;
        this.columns = "SELECT " + dialect.newColumns() + " FROM " + table + " WHERE resource = ''";
        this.clock = "SELECT " + dialect.millisSinceEpoch();
    }

    /** A new fencing token: the sequence's next value. */
    long nextToken(Session session) throws SQLException {
        try (PreparedStatement statement = session.prepare(nextToken);
                ResultSet rows = statement.executeQuery()) {
            if (!rows.next()) {
                throw new SQLException("the sequence " + Dialect.sequence(table) + " returned no value");
            }
            long token = rows.getLong(1);
            if (token <= 0) {
                throw new SQLException("the sequence " + Dialect.sequence(table) + " returned " + token
                        + ": fencing tokens must be positive (restart it at 1 or above)");
            }
            return token;
        }
    }

    /**
     * Takes the resource's row for {@code holder} until {@code ttlMillis} from the database's now,
     * with a token drawn now, recorded as {@code attempt}, if the row is free or expired and its
     * token at most {@code bound}; creates the row if there is none. {@code wantedMillis} above 0
     * marks a refused row as wanted for that long (on PostgreSQL, so that its release notifies).
     */
    Grants.Outcome grant(
            Session session,
            String resource,
            String holder,
            long ttlMillis,
            long attempt,
            long bound,
            long wantedMillis)
            throws SQLException {
        return grants.grant(session, this, resource, holder, ttlMillis, attempt, bound, wantedMillis);
    }

    /** The resource's row, if it has one. */
    Optional<Row> read(Session session, String resource) throws SQLException {
        try (PreparedStatement statement = session.prepare(read)) {
            statement.setString(1, resource);
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    return Optional.empty();
                }
                return Optional.of(new Row(
                        Optional.ofNullable(rows.getString(1)), rows.getLong(2), rows.getLong(3), rows.getLong(4)));
            }
        }
    }

    /**
     * Checks that the table has the columns of this version, failing with the database's
     * undefined-column error if it was made by an earlier one.
     */
    void checkColumns(Session session) throws SQLException {
        try (PreparedStatement statement = session.prepare(columns)) {
            statement.executeQuery().close();
        }
    }

    /** Moves the expiry of the row held with {@code token} to {@code ttlMillis} from now; false if it is not held with it. */
    boolean renew(Session session, String resource, long token, long ttlMillis) throws SQLException {
        try (PreparedStatement statement = session.prepare(renew)) {
            statement.setLong(1, ttlMillis);
            statement.setString(2, resource);
            statement.setLong(3, token);
            return statement.executeUpdate() == 1;
        }
    }

    /**
     * Frees the row if it is held with {@code token}, and wakes the waiters of every client that
     * want it (PostgreSQL: {@code pg_notify} at the commit, if a waiter marked the row; MariaDB:
     * ends the wait of the connections holding its wake-up slots); false if it was not held with it.
     */
    boolean release(Session session, String resource, long token) throws SQLException {
        return free(session, releaseByToken, resource, null, token);
    }

    private boolean free(Session session, String sql, String resource, String holder, long key) throws SQLException {
        if (releaseUnwanted != null && sql.equals(releaseByToken)) {
            List<String> slots = MariaDbWaker.slots(table, resource);
            try (PreparedStatement statement = session.prepare(releaseUnwanted)) {
                statement.setString(1, resource);
                statement.setLong(2, key);
                for (int i = 0; i < slots.size(); i++) {
                    statement.setString(3 + i, slots.get(i));
                }
                if (statement.executeUpdate() == 1) {
                    return true; // no waiter: one statement
                }
            }
        }
        boolean freed;
        try (PreparedStatement statement = session.prepare(sql)) {
            int next = 1;
            statement.setString(next++, resource);
            if (holder != null) {
                statement.setString(next++, holder);
            }
            statement.setLong(next++, key);
            if (channel == null) {
                freed = statement.executeUpdate() == 1;
            } else {
                statement.setString(next++, channel);
                statement.setString(next, PgListener.payload(resource));
                try (ResultSet rows = statement.executeQuery()) {
                    freed = rows.next();
                }
            }
        }
        if (freed && dialect == Dialect.MARIADB) {
            MariaDbWaker.wake(session, table, resource);
        }
        return freed;
    }

    /**
     * Settles a grant to {@code holder} recorded as {@code attempt} whose answer was lost, sent with {@code bound}:
     * frees the row if the grant took it; else, if the row is free (or absent) with a token at
     * most the bound, gives it a newer token without a holder, so that the grant's statement, if it
     * still runs, finds a token beyond its bound and changes nothing. False while the row is held
     * with a token at most the bound: the statement could still take the row once it is free.
     */
    boolean settle(Session session, String resource, String holder, long attempt, long bound) throws SQLException {
        for (int round = 0; round < 3; round++) {
            if (free(session, releaseByAttempt, resource, holder, attempt)
                    || update(session, tombstone, resource, bound)) {
                return true;
            }
            Optional<Row> row = read(session, resource);
            if (row.isEmpty()) {
                if (insertTombstone(session, resource)) {
                    return true;
                }
            } else if (row.get().attempt() != attempt && row.get().token() > bound) {
                return true; // the statement can no longer take it
            } else if (row.get().attempt() != attempt && row.get().held()) {
                return false;
            }
            // the grant landed meanwhile, or the row changed: again
        }
        return false;
    }

    private static boolean update(Session session, String sql, String resource, long value) throws SQLException {
        try (PreparedStatement statement = session.prepare(sql)) {
            statement.setString(1, resource);
            statement.setLong(2, value);
            return statement.executeUpdate() == 1;
        }
    }

    private boolean insertTombstone(Session session, String resource) throws SQLException {
        try (PreparedStatement statement = session.prepare(insertTombstone)) {
            statement.setString(1, resource);
            return statement.executeUpdate() == 1;
        } catch (SQLException e) {
            if (SqlErrors.isUniqueViolation(e)) {
                return false; // another client created the row first
            }
            throw e;
        }
    }

    /** The database's clock, in milliseconds since the epoch. */
    long clockMillis(Session session) throws SQLException {
        try (PreparedStatement statement = session.prepare(clock);
                ResultSet rows = statement.executeQuery()) {
            rows.next();
            return rows.getLong(1);
        }
    }

    /**
     * One connection used until a deadline: each statement may block only for what is left of it
     * (the connection's network timeout; where there is none, the statement's query timeout), and
     * runs in auto-commit.
     */
    static final class Session implements AutoCloseable {
        private final Connection connection;
        private final Ticker ticker;
        private final long deadlineNanos;
        private final boolean autoCommitBefore;
        private final int networkTimeoutBefore;
        /** Where the connection goes if the session keeps it; null: back to the data source. */
        private final java.util.function.Consumer<Connection> keeper;

        private boolean keep;

        Session(Connection connection, Ticker ticker, long deadlineNanos) throws SQLException {
            this(connection, ticker, deadlineNanos, null);
        }

        Session(
                Connection connection,
                Ticker ticker,
                long deadlineNanos,
                java.util.function.Consumer<Connection> keeper)
                throws SQLException {
            this.keeper = keeper;
            this.connection = connection;
            this.ticker = ticker;
            this.deadlineNanos = deadlineNanos;
            this.networkTimeoutBefore = networkTimeout(connection);
            setNetworkTimeout(connection, leftMillis()); // first: changing auto-commit may be a round trip
            this.autoCommitBefore = connection.getAutoCommit();
            if (!autoCommitBefore) {
                connection.setAutoCommit(true); // a pool set to auto-commit off would roll the lock back
            }
        }

        /** What is left of the deadline, in milliseconds, at least 1. */
        private int leftMillis() {
            long leftNanos = deadlineNanos - ticker.nanos();
            return (int) Math.min(Integer.MAX_VALUE, Math.max(1, TimeUnit.NANOSECONDS.toMillis(leftNanos)));
        }

        PreparedStatement prepare(String sql) throws SQLException {
            long leftNanos = deadlineNanos - ticker.nanos();
            if (leftNanos <= 0) {
                throw new SQLTimeoutException("no time left for the statement within the request timeout");
            }
            int leftMillis = leftMillis();
            boolean bounded = setNetworkTimeout(connection, leftMillis);
            PreparedStatement statement = connection.prepareStatement(sql);
            if (!bounded) {
                // Only where the network timeout cannot bound it (an embedded database): a query
                // timeout is a cancel sent on a new connection, which a silent database leaves
                // hanging (PostgreSQL's driver waits up to 10 s for it), past the deadline.
                statement.setQueryTimeout((int) Math.max(1, (leftMillis + 999) / 1000));
            }
            return statement;
        }

        /** The session's statements all ran: its connection may be kept for the next grant or release. */
        void keep() {
            keep = keeper != null;
        }

        @Override
        public void close() throws SQLException {
            boolean kept = false;
            try {
                if (!connection.isClosed()) {
                    if (!autoCommitBefore) {
                        setNetworkTimeout(connection, leftMillis());
                        connection.setAutoCommit(false); // while the deadline still bounds it
                    }
                    setNetworkTimeout(connection, networkTimeoutBefore);
                    if (keep) {
                        keeper.accept(connection);
                        kept = true;
                    }
                }
            } catch (SQLException e) {
                // the connection broke: closing it is all that is left
            } finally {
                if (!kept) {
                    connection.close();
                }
            }
        }

        private static int networkTimeout(Connection connection) {
            try {
                return connection.getNetworkTimeout();
            } catch (SQLException e) {
                return 0;
            }
        }

        /**
         * Whether the connection took the timeout: an embedded database (H2 in memory) has no
         * network, and refuses it or keeps none.
         */
        private static boolean setNetworkTimeout(Connection connection, int millis) {
            try {
                connection.setNetworkTimeout(DIRECT, millis);
                return connection.getNetworkTimeout() > 0;
            } catch (SQLException | UnsupportedOperationException e) {
                return false;
            }
        }
    }
}
