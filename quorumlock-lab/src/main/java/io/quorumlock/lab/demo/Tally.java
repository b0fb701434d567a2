package io.quorumlock.lab.demo;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/** What the clients' reservations came to, counted as they go; safe to read while they run. */
final class Tally {

    /**
     * The counts at one moment.
     *
     * @param reserved reservations granted
     * @param outOfStock reservations refused because the stock was too low (the lock was held)
     * @param lockTimeouts reservations that got no lock within the wait
     * @param unitsSold units taken out of the stock by the granted reservations
     * @param errors reservations that failed otherwise (each ends its client)
     */
    record Counts(long reserved, long outOfStock, long lockTimeouts, long unitsSold, long errors) {

        /** Every call to reserve, whatever it came to. */
        long attempts() {
            return reserved + outOfStock + lockTimeouts + errors;
        }

        /** The calls that held the lock. */
        long lockAcquisitions() {
            return reserved + outOfStock;
        }
    }

    private final LongAdder reserved = new LongAdder();
    private final LongAdder outOfStock = new LongAdder();
    private final LongAdder lockTimeouts = new LongAdder();
    private final LongAdder unitsSold = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final AtomicReference<Exception> firstError = new AtomicReference<>();

    void count(InventoryService.Outcome outcome, int quantity) {
        if (outcome == InventoryService.Outcome.RESERVED) {
            reserved.increment();
            unitsSold.add(quantity);
        } else {
            outOfStock.increment();
        }
    }

    void lockTimeout() {
        lockTimeouts.increment();
    }

    void error(Exception error) {
        firstError.compareAndSet(null, error);
        errors.increment();
    }

    Counts counts() {
        return new Counts(reserved.sum(), outOfStock.sum(), lockTimeouts.sum(), unitsSold.sum(), errors.sum());
    }

    /** The first error a client met, as one line. */
    Optional<String> firstError() {
        return Optional.ofNullable(firstError.get()).map(Exception::toString);
    }
}
