package io.quorumlock.examples;

import io.quorumlock.FencedLease;
import io.quorumlock.jdbc.JdbcFence;
import io.quorumlock.jdbc.StaleTokenException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The article's {@code InventoryService.reserve}, made safe with a fenced lease and {@link
 * JdbcFence}: the fence check and the read-then-write of the stock are one transaction, so a
 * client whose lease was lost (paused past it while another client locked the SKU and sold) is
 * refused and changes nothing.
 *
 * <pre>{@code
 * try (FencedLease lease = lock.acquire(FencedStockService.resource(sku), ttl, maxWait)) {
 *     service.reserve(lease, sku, 2);
 * }
 * }</pre>
 *
 * <p>Unlike {@link FencedInventoryRepository}, the business table needs no token column, and one
 * lease may write many times and many tables.
 */
public final class FencedStockService {

    private final DataSource database;
    private final JdbcFence fence;

    public FencedStockService(DataSource database, JdbcFence fence) {
        this.database = database;
        this.fence = fence;
    }

    /** {@return the lock name, and so the fence row, for a SKU: {@code inventory:<sku>}} */
    public static String resource(String sku) {
        return "inventory:" + sku;
    }

    /**
     * Takes {@code quantity} units of a SKU out of stock under the lease.
     *
     * @param lease the lease on {@link #resource(String) resource(sku)}
     * @return true if reserved; false if the stock is short (nothing is written)
     * @throws StaleTokenException if a newer lease holder wrote since this lease was granted: the
     *     transaction was rolled back and nothing changed
     * @throws IllegalArgumentException if the lease is on another resource, or there is no such SKU
     */
    public boolean reserve(FencedLease lease, String sku, int quantity) throws SQLException {
        if (!lease.resource().equals(resource(sku))) {
            throw new IllegalArgumentException(
                    "the lease is on '" + lease.resource() + "', not on '" + resource(sku) + "'");
        }
        try (Connection tx = database.getConnection()) {
            tx.setAutoCommit(false);
            try {
                fence.check(tx, lease); // first: from here on, writers of this SKU queue behind us
                int stock =
                        InventoryTable.stock(tx, sku).orElseThrow(() -> new IllegalArgumentException("no SKU " + sku));
                if (stock < quantity) {
                    tx.rollback();
                    return false;
                }
                try (PreparedStatement update = tx.prepareStatement("UPDATE inventory SET stock = ? WHERE sku = ?")) {
                    update.setInt(1, stock - quantity);
                    update.setString(2, sku);
                    update.executeUpdate();
                }
                tx.commit();
                return true;
            } catch (SQLException | RuntimeException e) {
                tx.rollback();
                throw e;
            }
        }
    }
}
