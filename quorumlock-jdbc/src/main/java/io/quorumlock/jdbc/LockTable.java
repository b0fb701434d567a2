package io.quorumlock.jdbc;

import io.quorumlock.internal.Ticker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The statements of {@link JdbcLock} on its table, each one on its own in auto-commit: the table is
 * {@code (resource, holder, token, expires_at)}, one row per resource, never deleted by the lock
 * (a released row keeps its token, with no holder). Knows SQL, never leases.
 *
 * <p>A grant draws a new token from the sequence first and then takes the row only if the row's
 * token is older ({@code token < ?}) and the row is free or expired by the database's clock: a
 * token drawn before another grant committed a newer one is refused, so the row's token only ever
 * grows, and a grant whose answer was lost can be undone by its token.
 */
final class LockTable {

    /** What a read of a resource's row found. */
    record Row(Optional<String> holder, long token, long millisLeft) {
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

    private final String nextToken;
    private final String take;
    private final String insert;
    private final String insertIfAbsent;
    private final String read;
    private final String renew;
    private final String release;
    private final String clock;

    LockTable(String table, Dialect dialect) {
        this.table = table;
        this.dialect = dialect;
        String now = dialect.now();
        String nowPlus = dialect.nowPlusMillis();
        this.nextToken = dialect.nextToken(table);
        this.take = "UPDATE " + table + " SET holder = ?, token = ?, expires_at = " + nowPlus
                + " WHERE resource = ? AND token < ? AND (holder IS NULL OR expires_at <= " + now + ")";
        this.insert =
                "INSERT INTO " + table + " (resource, holder, token, expires_at) VALUES (?, ?, ?, " + nowPlus + ")";
        this.insertIfAbsent = dialect.insertIfAbsent(insert);
        this.read = "SELECT holder, token, " + dialect.millisLeft() + " FROM " + table + " WHERE resource = ?";
        this.renew = "UPDATE " + table + " SET expires_at = " + nowPlus
                + " WHERE resource = ? AND token = ? AND holder IS NOT NULL AND expires_at > " + now;
        String free = "UPDATE " + table + " SET holder = NULL, expires_at = " + now
                + " WHERE resource = ? AND token = ? AND holder IS NOT NULL";
        this.channel = dialect == Dialect.POSTGRESQL ? PgListener.channel(table) : null;
        this.release =
                channel == null ? free : "WITH freed AS (" + free + " RETURNING 1) SELECT pg_notify(?, ?) FROM freed";
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
     * Takes the resource's row for {@code holder} with {@code token} (newer than the row's) until
     * {@code ttlMillis} from the database's now, if it is free or expired; creates the row if there
     * is none. False if the row is held, or holds a newer token.
     */
    boolean take(Session session, String resource, String holder, long token, long ttlMillis, boolean absent)
            throws SQLException {
        if (!absent) {
            try (PreparedStatement statement = session.prepare(take)) {
                statement.setString(1, holder);
                statement.setLong(2, token);
                statement.setLong(3, ttlMillis);
                statement.setString(4, resource);
                statement.setLong(5, token);
                return statement.executeUpdate() == 1;
            }
        }
        try (PreparedStatement statement = session.prepare(insertIfAbsent != null ? insertIfAbsent : insert)) {
            statement.setString(1, resource);
            statement.setString(2, holder);
            statement.setLong(3, token);
            statement.setLong(4, ttlMillis);
            return statement.executeUpdate() == 1;
        } catch (SQLException e) {
            if (insertIfAbsent == null && SqlErrors.isUniqueViolation(e)) {
                return false; // another client created the row first
            }
            throw e;
        }
    }

    /** The resource's row, if it has one. */
    Optional<Row> read(Session session, String resource) throws SQLException {
        try (PreparedStatement statement = session.prepare(read)) {
            statement.setString(1, resource);
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    return Optional.empty();
                }
                return Optional.of(new Row(Optional.ofNullable(rows.getString(1)), rows.getLong(2), rows.getLong(3)));
            }
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
     * Frees the row if it is held with {@code token}, and on PostgreSQL tells the waiters of every
     * client (at the commit); false if it was not held with it.
     */
    boolean release(Session session, String resource, long token) throws SQLException {
        try (PreparedStatement statement = session.prepare(release)) {
            statement.setString(1, resource);
            statement.setLong(2, token);
            if (channel == null) {
                return statement.executeUpdate() == 1;
            }
            statement.setString(3, channel);
            statement.setString(4, PgListener.payload(resource));
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next();
            }
        }
    }

    /**
     * Settles a grant of {@code token} whose answer was lost: frees the row if it holds the token,
     * or else, if the row is free (or absent) with an older token, gives it the token without a
     * holder, so that the grant's statement, if it still waits in the database, finds no older
     * token and changes nothing. False while the row is held by an older token: the statement
     * could still take the row once it is free.
     */
    boolean settle(Session session, String resource, long token) throws SQLException {
        if (release(session, resource, token) || take(session, resource, null, token, 0, false)) {
            return true;
        }
        Optional<Row> row = read(session, resource);
        if (row.isEmpty()) {
            return take(session, resource, null, token, 0, true);
        }
        return row.get().token() > token
                || (row.get().token() == token && row.get().holder().isEmpty());
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

        Session(Connection connection, Ticker ticker, long deadlineNanos) throws SQLException {
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

        @Override
        public void close() throws SQLException {
            try {
                if (!connection.isClosed()) {
                    if (!autoCommitBefore) {
                        setNetworkTimeout(connection, leftMillis());
                        connection.setAutoCommit(false); // while the deadline still bounds it
                    }
                    setNetworkTimeout(connection, networkTimeoutBefore);
                }
            } catch (SQLException e) {
                // the connection broke: closing it is all that is left
            } finally {
                connection.close();
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
