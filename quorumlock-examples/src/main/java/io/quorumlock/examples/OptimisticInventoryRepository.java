package io.quorumlock.examples;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Optimistic locking, the article's other way of pushing correctness into the database (section
 * 8; JPA's {@code @Version}): no lock at all. A writer reads the row with its version and writes
 * only if the version is still the one it read; a concurrent writer in between makes the {@code
 * UPDATE} match no row, and the loser reads again.
 *
 * <p>It protects one row's read-then-write; it needs no lock service and no token, but every
 * writer must go through the version check.
 */
public final class OptimisticInventoryRepository {

    /** The stock of a SKU and the version of the row it was read from. */
    public record Stock(int units, long version) {}

    private final DataSource database;

    public OptimisticInventoryRepository(DataSource database) {
        this.database = database;
    }

    /** Reads the stock of a SKU with its version; empty if there is no such SKU. */
    public Optional<Stock> find(String sku) throws SQLException {
        try (Connection connection = database.getConnection();
                PreparedStatement select =
                        connection.prepareStatement("SELECT stock, version FROM inventory WHERE sku = ?")) {
            select.setString(1, sku);
            try (ResultSet rows = select.executeQuery()) {
                return rows.next() ? Optional.of(new Stock(rows.getInt(1), rows.getLong(2))) : Optional.empty();
            }
        }
    }

    /**
     * Writes the stock if the row is still at {@code expectedVersion}, and moves it to the next one.
     *
     * @return true if the row was updated; false if another writer changed it since it was read
     */
    public boolean updateStock(String sku, int newStock, long expectedVersion) throws SQLException {
        try (Connection connection = database.getConnection();
                PreparedStatement update = connection.prepareStatement("""
                        UPDATE inventory SET stock = ?, version = version + 1
                        WHERE sku = ? AND version = ?
                        """)) {
            update.setInt(1, newStock);
            update.setString(2, sku);
            update.setLong(3, expectedVersion);
            return update.executeUpdate() == 1;
        }
    }

    /**
     * Takes {@code quantity} units out of stock: read, check, write if unchanged, and read again
     * when another writer came first.
     *
     * @return true if reserved; false if the stock is short
     * @throws IllegalArgumentException if there is no such SKU or the quantity is not positive
     * @throws IllegalStateException if other writers won {@code maxAttempts} times in a row
     */
    public boolean reserve(String sku, int quantity, int maxAttempts) throws SQLException {
        if (quantity < 1) {
            throw new IllegalArgumentException("quantity must be positive, was " + quantity);
        }
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            Stock stock = find(sku).orElseThrow(() -> new IllegalArgumentException("no SKU " + sku));
            if (stock.units() < quantity) {
                return false;
            }
            if (updateStock(sku, stock.units() - quantity, stock.version())) {
                return true;
            }
        }
        throw new IllegalStateException("could not reserve " + quantity + " of " + sku + ": other writers came first "
                + maxAttempts + " times");
    }
}
