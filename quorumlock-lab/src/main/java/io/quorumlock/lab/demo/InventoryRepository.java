package io.quorumlock.lab.demo;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.NoSuchElementException;
import javax.sql.DataSource;

/**
 * The stock of each SKU in a table {@code inventory(sku, stock)}, with plain JDBC, as in the
 * article. {@link #findStock} and {@link #updateStock} are separate statements on purpose: a
 * reservation reads, then writes, and only the lock around both keeps two clients from selling
 * the same units.
 */
final class InventoryRepository {

    private final DataSource dataSource;

    InventoryRepository(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** Creates the table. */
    void createTable() throws SQLException {
        try (Connection connection = dataSource.getConnection();
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE inventory (sku VARCHAR(64) PRIMARY KEY, stock INT NOT NULL)");
        }
    }

    /** Adds a SKU with its initial stock. */
    void addSku(String sku, int stock) throws SQLException {
        execute("INSERT INTO inventory (sku, stock) VALUES (?, ?)", sku, stock);
    }

    /**
     * The stock of a SKU now.
     *
     * @throws NoSuchElementException if there is no such SKU
     */
    int findStock(String sku) throws SQLException {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement select = connection.prepareStatement("SELECT stock FROM inventory WHERE sku = ?")) {
            select.setString(1, sku);
            try (ResultSet row = select.executeQuery()) {
                if (!row.next()) {
                    throw new NoSuchElementException("no SKU '" + sku + "' in the inventory");
                }
                return row.getInt(1);
            }
        }
    }

    /** Sets the stock of a SKU, whatever it was. */
    void updateStock(String sku, int stock) throws SQLException {
        execute("UPDATE inventory SET stock = ? WHERE sku = ?", stock, sku);
    }

    private void execute(String sql, Object... parameters) throws SQLException {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                statement.setObject(i + 1, parameters[i]);
            }
            statement.executeUpdate();
        }
    }
}
