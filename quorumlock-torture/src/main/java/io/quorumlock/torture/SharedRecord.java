package io.quorumlock.torture;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The record the clients decrement, one row per strategy: a value and a version. Each strategy
 * writes it its own way: plainly (a lock alone keeps the read-modify-write exclusive), behind
 * {@code JdbcFence}, or conditionally on the version read.
 */
final class SharedRecord {

    static final String TABLE = "torture_record";

    /** A value and the version it was read at. */
    record Read(long value, long version) {}

    private SharedRecord() {}

    /** Creates the table if needed and (re)sets the row of {@code name} to {@code initial}. */
    static void create(Connection connection, String name, long initial) throws SQLException {
        try (Statement ddl = connection.createStatement()) {
            ddl.execute("CREATE TABLE IF NOT EXISTS " + TABLE
                    + " (name VARCHAR(64) PRIMARY KEY, val BIGINT NOT NULL, version BIGINT NOT NULL)");
        }
        try (PreparedStatement delete = connection.prepareStatement("DELETE FROM " + TABLE + " WHERE name = ?")) {
            delete.setString(1, name);
            delete.executeUpdate();
        }
        try (PreparedStatement insert =
                connection.prepareStatement("INSERT INTO " + TABLE + " (name, val, version) VALUES (?, ?, 0)")) {
            insert.setString(1, name);
            insert.setLong(2, initial);
            insert.executeUpdate();
        }
    }

    static Read read(Connection connection, String name) throws SQLException {
        try (PreparedStatement select =
                connection.prepareStatement("SELECT val, version FROM " + TABLE + " WHERE name = ?")) {
            select.setString(1, name);
            try (ResultSet row = select.executeQuery()) {
                if (!row.next()) {
                    throw new IllegalStateException("no row '" + name + "' in " + TABLE);
                }
                return new Read(row.getLong(1), row.getLong(2));
            }
        }
    }

    /** Writes {@code value}; only if the version is still {@code expectedVersion}, unless that is negative. */
    static boolean write(Connection connection, String name, long value, long expectedVersion) throws SQLException {
        String sql = "UPDATE " + TABLE + " SET val = ?, version = version + 1 WHERE name = ?"
                + (expectedVersion >= 0 ? " AND version = ?" : "");
        try (PreparedStatement update = connection.prepareStatement(sql)) {
            update.setLong(1, value);
            update.setString(2, name);
            if (expectedVersion >= 0) {
                update.setLong(3, expectedVersion);
            }
            return update.executeUpdate() == 1;
        }
    }
}
