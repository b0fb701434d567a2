package io.quorumlock.lab.demo;

import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.redis.Redlock;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The article's inventory reservation (section 4.4): read the stock, check it, write it back,
 * all under a Redlock on {@code lock:sku:<sku>}. The read and the write are separate statements,
 * so without the lock two clients could both sell the same units.
 *
 * <p>Redlock is an efficiency lock: it keeps this exclusive only while no holder pauses longer
 * than its lease and clocks do not jump. Real stock would also need a guard in the database (a
 * fencing token, a version column, or an atomic decrement).
 */
final class InventoryService {

    /** The lock's TTL, as in the article: far longer than the read and the write take. */
    static final Duration LOCK_TTL = Duration.ofSeconds(10);
    /** How long a reservation waits for the lock before giving up. */
    static final Duration MAX_WAIT = Duration.ofMillis(200);

    /** What a reservation came to, once the lock was held. */
    enum Outcome {
        RESERVED,
        OUT_OF_STOCK
    }

    private final Redlock redlock;
    private final InventoryRepository repository;

    InventoryService(Redlock redlock, InventoryRepository repository) {
        this.redlock = redlock;
        this.repository = repository;
    }

    /**
     * Takes {@code quantity} units of {@code sku} out of the stock if there are enough.
     *
     * @throws LockUnavailableException if the lock was not granted within {@link #MAX_WAIT}; the
     *     stock is untouched and the caller may retry later
     */
    Outcome reserve(String sku, int quantity) throws SQLException {
        Lease lease = redlock.acquire("lock:sku:" + sku, LOCK_TTL, MAX_WAIT);
        try {
            int stock = repository.findStock(sku);
            if (stock < quantity) {
                return Outcome.OUT_OF_STOCK;
            }
            repository.updateStock(sku, stock - quantity);
            return Outcome.RESERVED;
        } finally {
            lease.release();
        }
    }
}
