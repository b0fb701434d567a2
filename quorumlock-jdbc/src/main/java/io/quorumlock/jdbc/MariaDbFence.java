package io.quorumlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientException;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link JdbcFence}'s record of a token on MariaDB (and MySQL), in one upsert and one locking
 * read: under their default REPEATABLE READ, an update that finds no row takes gap locks that make
 * first writers deadlock, and a plain read sees the transaction's snapshot, not the row a
 * concurrent first writer committed. The upsert keeps the larger token and locks the row; {@code
 * FOR UPDATE} reads the latest one. Before its first record on a database, it checks that the
 * table compares resource names exactly, as the lock's does.
 */
final class MariaDbFence {

    /** MariaDB's collation that compares names byte for byte, trailing spaces included, as the lock's table does. */
    static final String EXACT_COLLATION = "utf8mb4_nopad_bin";

    private final String table;
    private final String upsertKeepingNewest;
    private final String selectForUpdate;
    /** The databases (catalogs) whose fence table was seen to compare names exactly. */
    private final Set<String> checkedOn = ConcurrentHashMap.newKeySet();

    /**
     * @param insert the fence's insert of a row, {@code (resource, token)}
     * @param select the fence's read of a resource's token
     */
    MariaDbFence(String table, String insert, String select) {
        this.table = table;
        this.upsertKeepingNewest = insert + " ON DUPLICATE KEY UPDATE token = GREATEST(token, VALUES(token))";
        this.selectForUpdate = select + " FOR UPDATE";
    }

    /**
     * Records {@code token} for {@code resource} in the caller's transaction, keeping the larger of
     * it and the one recorded, once the table was seen to compare names exactly.
     *
     * @return the newest token now recorded: {@code token}, unless the fence has seen a newer one
     */
    long record(Connection tx, String resource, long token) throws SQLException {
        requireExactNames(tx);
        try (PreparedStatement statement = tx.prepareStatement(upsertKeepingNewest)) {
            statement.setString(1, resource);
            statement.setLong(2, token);
            statement.executeUpdate();
        }
        try (PreparedStatement statement = tx.prepareStatement(selectForUpdate)) {
            statement.setString(1, resource);
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }

    /**
     * Refuses a MariaDB fence table whose {@code resource} column folds case or trailing spaces
     * (the database's default collation), with the statement that migrates it. Read once per
     * database; a table not there yet is left to the statements, which name it.
     */
    private void requireExactNames(Connection tx) throws SQLException {
        String catalog = String.valueOf(tx.getCatalog());
        if (checkedOn.contains(catalog) || JdbcFence.dialect(tx) != Dialect.MARIADB) {
            return; // MySQL has no utf8mb4_nopad_bin: not checked there
        }
        int dot = table.indexOf('.');
        try (PreparedStatement statement = tx.prepareStatement("SELECT COLLATION_NAME, CHARACTER_MAXIMUM_LENGTH"
                + " FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE())"
                + " AND TABLE_NAME = ? AND COLUMN_NAME = 'resource'")) {
            statement.setString(1, dot < 0 ? null : table.substring(0, dot));
            statement.setString(2, table.substring(dot + 1));
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    return;
                }
                String collation = rows.getString(1);
                if (collation != null && !collation.toLowerCase(Locale.ROOT).endsWith("_nopad_bin")) {
                    throw new SQLNonTransientException("the fence table " + table + " compares resource names by"
                            + " the collation " + collation + ", under which 'Stock' and 'stock' or 'sku ' and 'sku'"
                            + " are one resource, unlike the lock's: migrate it with ALTER TABLE " + table
                            + " MODIFY resource VARCHAR(" + rows.getLong(2) + ") CHARACTER SET utf8mb4 COLLATE "
                            + EXACT_COLLATION + " NOT NULL; and roll this transaction back");
                }
            }
        }
        checkedOn.add(catalog);
    }
}
