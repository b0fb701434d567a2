package io.quorumlock.jdbc;

import io.quorumlock.testkit.MariaDbServerExtension;
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
import org.mariadb.jdbc.MariaDbDataSource;
import org.postgresql.ds.PGSimpleDataSource;

/** The databases every fence and lock test runs on: H2 in-process, a real PostgreSQL and a real MariaDB from the test kit. */
enum Engine {
    H2,
    POSTGRESQL,
    MARIADB;

    /**
     * A database for one test. H2: a new in-memory database (lock timeout 10 s). PostgreSQL and
     * MariaDB: the class's server, started on first use; the test is skipped with the reason if
     * the server is not installed.
     */
    DataSource dataSource(PostgresServerExtension postgres, MariaDbServerExtension mariadb) {
        switch (this) {
            case H2 -> {
                JdbcDataSource h2 = new JdbcDataSource();
                h2.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000");
                return h2;
            }
            case POSTGRESQL -> {
                PGSimpleDataSource pg = new PGSimpleDataSource();
                pg.setUrl(postgres.jdbcUrl());
                pg.setUser(postgres.user());
                return pg;
            }
            default -> {
                try {
                    MariaDbDataSource maria = new MariaDbDataSource(mariadb.jdbcUrl());
                    maria.setUser(mariadb.user());
                    maria.setPassword(mariadb.password());
                    return maria;
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    /** The lock's dialect for this engine. */
    Dialect dialect() {
        return switch (this) {
            case H2 -> Dialect.H2;
            case POSTGRESQL -> Dialect.POSTGRESQL;
            case MARIADB -> Dialect.MARIADB;
        };
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
        String sql = switch (this) {
            // H2 shows no blocker for an INSERT that waits on a duplicate key: look for the statement
            case H2 ->
                "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE SESSION_ID <> SESSION_ID()"
                        + " AND UPPER(EXECUTING_STATEMENT) LIKE ?";
            case POSTGRESQL ->
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'" + " AND upper(query) LIKE ?";
            case MARIADB ->
                "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'"
                        + " AND UPPER(trx_query) LIKE ?";
        };
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, "%" + table.toUpperCase(Locale.ROOT) + "%");
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                return rows.getInt(1);
            }
        }
    }
}
