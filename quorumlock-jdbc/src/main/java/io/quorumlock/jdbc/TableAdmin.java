package io.quorumlock.jdbc;

import io.quorumlock.QuorumlockException;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/** What a {@link JdbcLock} does to its table outside the leases: creates it, and checks it works. */
final class TableAdmin {

    private TableAdmin() {}

    /**
     * Runs the statements {@code ddl} gives for the database's dialect, by {@code deadline}: those
     * that create the table and its sequence, then the last (which adds the columns of this
     * version) only if the table lacks them, since it needs the table's owner.
     *
     * @throws QuorumlockException naming the database and what failed
     */
    static void create(Connections connections, long deadline, Function<Dialect, List<String>> ddl, String table) {
        try (LockTable.Session session = connections.open(deadline, false)) {
            List<String> statements = ddl.apply(connections.statements().dialect);
            for (String statement : statements.subList(0, statements.size() - 1)) {
                execute(session, statement);
            }
            try {
                connections.statements().checkColumns(session);
            } catch (SQLException olderShape) {
                execute(session, statements.get(statements.size() - 1)); // only then: ALTER needs the owner
            }
        } catch (SQLException e) {
            throw new QuorumlockException(
                    connections.database() + ": could not create the lock table " + table + ": "
                            + SqlErrors.shortMessage(e),
                    e);
        }
    }

    private static void execute(LockTable.Session session, String sql) throws SQLException {
        try (PreparedStatement statement = session.prepare(sql)) {
            statement.execute();
        }
    }

    /**
     * Reads the database's clock and checks that the lock's statements can run (the table, the
     * sequence, the privileges to read and update), by {@code deadline}.
     *
     * @throws QuorumlockException naming the database, what failed, and the remedy where there is one
     */
    static JdbcLock.DatabaseCheck check(Connections connections, long deadline) {
        LockTable statements = null;
        try (LockTable.Session session = connections.open(deadline, false)) {
            statements = connections.statements();
            long before = System.currentTimeMillis();
            long clock = statements.clockMillis(session);
            long after = System.currentTimeMillis();
            statements.checkColumns(session); // a table of an earlier version is named, with the remedy
            statements.read(session, "");
            statements.renew(session, "", -1, 1); // changes nothing: checks the privilege to update
            statements.nextToken(session);
            long offset = clock - (before + after) / 2;
            return new JdbcLock.DatabaseCheck(
                    connections.database(),
                    statements.dialect,
                    Duration.ofMillis(offset),
                    Duration.ofMillis(after - before));
        } catch (SQLException e) {
            SqlErrors.Failure failure = connections.classify(e, statements);
            throw new QuorumlockException(
                    connections.database() + ": " + failure.kind().description() + " (" + failure.detail() + ")", e);
        }
    }
}
