package io.quorumlock.jdbc;

import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.TestTime;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.postgresql.ds.PGSimpleDataSource;

/** The databases every fence test runs on: H2 in-process, and a real PostgreSQL from the test kit. */
enum Engine {
    H2,
    POSTGRESQL;

    /**
     * A database for one test. H2: a new in-memory database (lock timeout 10 s). PostgreSQL: the
     * class's server, started on first use; the test is skipped with the reason if PostgreSQL is
     * not installed.
     */
    DataSource dataSource(PostgresServerExtension postgres) {
        if (this == H2) {
            JdbcDataSource h2 = new JdbcDataSource();
            h2.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000");
            return h2;
        }
        PGSimpleDataSource pg = new PGSimpleDataSource();
        pg.setUrl(postgres.jdbcUrl());
        pg.setUser(postgres.user());
        return pg;
    }

    /** Waits until another session is blocked in a statement on {@code table}, waiting for a lock. */
    void awaitBlockedOn(DataSource database, String table) {
        TestTime.await(
                Duration.ofSeconds(10),
                () -> {
                    try (Connection connection = database.getConnection()) {
                        return countBlockedOn(connection, table) > 0;
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                },
                "a transaction to wait for the lock on " + table);
    }

    private int countBlockedOn(Connection connection, String table) throws SQLException {
        String sql = this == H2
                // H2 shows no blocker for an INSERT that waits on a duplicate key: look for the statement
                ? "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE SESSION_ID <> SESSION_ID()"
                        + " AND UPPER(EXECUTING_STATEMENT) LIKE ?"
                : "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND upper(query) LIKE ?";
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, "%" + table.toUpperCase(Locale.ROOT) + "%");
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                return rows.getInt(1);
            }
        }
    }
}
