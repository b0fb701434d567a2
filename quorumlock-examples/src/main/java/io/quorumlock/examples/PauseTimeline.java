package io.quorumlock.examples;

import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.Lease;
import io.quorumlock.jdbc.JdbcFence;
import io.quorumlock.jdbc.StaleTokenException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * The process-pause timeline of the Redlock debate, played round by round against a real lock and
 * a real database: client A locks and reads the stock, then pauses (a GC pause, a page fault, a
 * migrated VM) until its lease is gone; client B locks, reads, sells one unit and writes; A wakes
 * up, still believing it holds the lock, and writes what it computed before the pause.
 *
 * <p>With a TTL lock alone, A's write overwrites B's: one sale is lost every round. With a fenced
 * lease and {@link JdbcFence} in the same transaction as the write, the database refuses A's
 * older token and B's sale stays.
 */
public final class PauseTimeline {

    /** What one run of the timeline did to the data. */
    public record Result(String lock, int writesAttempted, int lostUpdates, int staleWritesRejected) {}

    private static final String SKU = "SKU-42";
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final DataSource database;
    private final Duration ttl;

    /** Plays the timeline on the {@code inventory} table of {@code database}, which it creates if needed. */
    public PauseTimeline(DataSource database, Duration ttl) {
        this.database = database;
        this.ttl = ttl;
    }

    /**
     * Plays {@code rounds} rounds with a TTL lock and no fence. {@code pause} returns once A's lease
     * has run out and another client can take the lock.
     */
    public <L extends Lease> Result unfenced(
            String name, DistributedLock<L> a, DistributedLock<L> b, Consumer<L> pause, int rounds) {
        return play(name, a, b, pause, rounds, null);
    }

    /**
     * Plays {@code rounds} rounds with a fenced lock, every write checked by {@code fence} in its
     * transaction. {@code pause} returns once A's lease is lost.
     */
    public Result fenced(
            String name,
            DistributedLock<FencedLease> a,
            DistributedLock<FencedLease> b,
            Consumer<FencedLease> pause,
            JdbcFence fence,
            int rounds) {
        return play(name, a, b, pause, rounds, fence);
    }

    private <L extends Lease> Result play(
            String name, DistributedLock<L> a, DistributedLock<L> b, Consumer<L> pause, int rounds, JdbcFence fence) {
        int stockAtStart = resetStock(1_000);
        int writes = 0;
        int accepted = 0;
        int rejected = 0;
        for (int round = 0; round < rounds; round++) {
            L leaseA = a.acquire(SKU, ttl, WAIT);
            int seenByA = stock();
            pause.accept(leaseA); // A is frozen here; the world goes on without it
            try (L leaseB = b.acquire(SKU, ttl, WAIT)) {
                writes++;
                if (write(leaseB, stock() - 1, fence)) {
                    accepted++;
                } else {
                    rejected++;
                }
            }
            writes++; // A wakes up and writes what it computed before the pause
            if (write(leaseA, seenByA - 1, fence)) {
                accepted++;
            } else {
                rejected++;
            }
            leaseA.release();
        }
        int sold = stockAtStart - stock();
        return new Result(name, writes, accepted - sold, rejected);
    }

    /** Writes the new stock in one transaction, behind the fence if there is one; false if the fence refused it. */
    boolean write(Lease lease, int newStock, JdbcFence fence) {
        try (Connection tx = database.getConnection()) {
            tx.setAutoCommit(false);
            try {
                if (fence != null) {
                    fence.check(tx, (FencedLease) lease);
                }
                try (PreparedStatement update = tx.prepareStatement("UPDATE inventory SET stock = ? WHERE sku = ?")) {
                    update.setInt(1, newStock);
                    update.setString(2, SKU);
                    update.executeUpdate();
                }
                tx.commit();
                return true;
            } catch (StaleTokenException e) {
                tx.rollback();
                return false;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("inventory write failed: " + e.getMessage(), e);
        }
    }

    int stock() {
        try (Connection c = database.getConnection();
                PreparedStatement read = c.prepareStatement("SELECT stock FROM inventory WHERE sku = ?")) {
            read.setString(1, SKU);
            try (ResultSet rs = read.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("inventory read failed: " + e.getMessage(), e);
        }
    }

    int resetStock(int units) {
        try (Connection c = database.getConnection();
                Statement ddl = c.createStatement()) {
            ddl.execute("CREATE TABLE IF NOT EXISTS inventory (sku VARCHAR(64) PRIMARY KEY, stock INT NOT NULL)");
            ddl.execute("DELETE FROM inventory");
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO inventory (sku, stock) VALUES (?, ?)")) {
                insert.setString(1, SKU);
                insert.setInt(2, units);
                insert.executeUpdate();
            }
            return units;
        } catch (SQLException e) {
            throw new IllegalStateException("inventory set-up failed: " + e.getMessage(), e);
        }
    }
}
