package io.quorumlock.examples;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.OptionalInt;
import javax.sql.DataSource;

/**
 * The article's fenced repository (section 7.2): the token travels with the write, and the row
 * itself refuses a token older than the last one written to it. Nothing but the {@code UPDATE} is
 * needed: the check and the write are one atomic statement.
 *
 * <p>The GC timeline of the article: A gets token 33 and pauses; its lease runs out; B gets token
 * 34 and writes; A wakes up and writes with 33. A's {@code UPDATE} matches no row, so B's data
 * stays. The token must come from a consensus system (ZooKeeper's zxid, etcd's revision), never
 * from a TTL lock alone.
 *
 * <p>Three limits of this form, which {@link FencedStockService} with {@code JdbcFence} lifts: the
 * comparison is strict ({@code last_token < ?}), so one lease cannot write the same row twice;
 * every table that the lock protects needs its own {@code last_token} column; and the read is not
 * fenced. In a read-modify-write, a holder whose lease ran out after its read can still write
 * before the new holder does (its token is then still the newest the row has seen), and the new
 * holder, who read the same value, overwrites it: a lost update. Fence the read as well, in the
 * same transaction as the write, as {@link FencedStockService} does.
 */
public final class FencedInventoryRepository {

    private final DataSource database;

    public FencedInventoryRepository(DataSource database) {
        this.database = database;
    }

    /** Reads the stock of a SKU; empty if there is no such SKU. */
    public OptionalInt findStock(String sku) throws SQLException {
        return InventoryTable.stock(database, sku);
    }

    /**
     * Writes the stock if {@code fencingToken} is newer than the last token written to the row.
     *
     * @return true if the row was updated; false if a newer token has written it (or there is no
     *     such SKU): this writer's lease was lost, and nothing changed
     */
    public boolean updateStock(String sku, int newStock, long fencingToken) throws SQLException {
        try (Connection connection = database.getConnection();
                PreparedStatement update = connection.prepareStatement("""
                        UPDATE inventory SET stock = ?, last_token = ?
                        WHERE sku = ? AND last_token < ?
                        """)) {
            update.setInt(1, newStock);
            update.setLong(2, fencingToken);
            update.setString(3, sku);
            update.setLong(4, fencingToken);
            return update.executeUpdate() == 1;
        }
    }
}
