package io.quorumlock.examples;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalInt;
import javax.sql.DataSource;

/**
 * The {@code inventory} table that the examples write: one row per SKU with its stock, the newest
 * fencing token written ({@code last_token}, for {@link FencedInventoryRepository}) and a version
 * ({@code version}, for {@link OptimisticInventoryRepository}).
 */
public final class InventoryTable {

    /** Valid on PostgreSQL and H2. */
    public static final String DDL = "CREATE TABLE IF NOT EXISTS inventory ("
            + "sku VARCHAR(64) PRIMARY KEY, "
            + "stock INT NOT NULL, "
            + "last_token BIGINT NOT NULL DEFAULT 0, "
            + "version BIGINT NOT NULL DEFAULT 0)";

    private InventoryTable() {}

    /** Creates the table if it does not exist. */
    public static void create(DataSource database) throws SQLException {
        try (Connection connection = database.getConnection();
                Statement statement = connection.createStatement()) {
            statement.execute(DDL);
        }
    }

    /** Adds a SKU with its stock, never written under a token (0) and at version 0. */
    public static void add(DataSource database, String sku, int stock) throws SQLException {
        try (Connection connection = database.getConnection();
                PreparedStatement insert =
                        connection.prepareStatement("INSERT INTO inventory (sku, stock) VALUES (?, ?)")) {
            insert.setString(1, sku);
            insert.setInt(2, stock);
            insert.executeUpdate();
        }
    }

    /** Reads the stock of a SKU on the given connection; empty if there is no such SKU. */
    public static OptionalInt stock(Connection connection, String sku) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT stock FROM inventory WHERE sku = ?")) {
            select.setString(1, sku);
            try (ResultSet rows = select.executeQuery()) {
                return rows.next() ? OptionalInt.of(rows.getInt(1)) : OptionalInt.empty();
            }
        }
    }

    /** Reads the stock of a SKU; empty if there is no such SKU. */
    public static OptionalInt stock(DataSource database, String sku) throws SQLException {
        try (Connection connection = database.getConnection()) {
            return stock(connection, sku);
        }
    }
}
