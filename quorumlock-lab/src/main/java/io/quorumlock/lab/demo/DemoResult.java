package io.quorumlock.lab.demo;

import io.quorumlock.cli.Formats;
import io.quorumlock.lab.Table;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What one demo run came to, and whether the stock adds up: every unit that left the stock was
 * sold exactly once. The check does not trust the counters alone: it compares the units the
 * clients were granted with what the database says is left.
 *
 * @param nodes the Redis nodes, as {@code redis://host:port}
 * @param quorum how many nodes a lock needed
 * @param faults which nodes were frozen and killed
 * @param clients how many clients ran
 * @param counts what their reservations came to
 * @param firstError the first unexpected error of a client, if any
 * @param initialStock the stock at the start
 * @param finalStock the stock in the database at the end
 * @param elapsed from the start of the clients to the end of the last one
 * @param latency of the reservations that held the lock
 */
record DemoResult(
        List<String> nodes,
        int quorum,
        String faults,
        int clients,
        Tally.Counts counts,
        Optional<String> firstError,
        int initialStock,
        int finalStock,
        Duration elapsed,
        Latency latency) {

    /** Units sold beyond what left the stock, plus any stock below zero: two clients sold the same units. */
    long oversold() {
        return Math.max(0, -unaccounted()) + Math.max(0, -finalStock);
    }

    /** Units that left the stock without being sold. */
    long lost() {
        return Math.max(0, unaccounted());
    }

    /** True when the stock adds up and no client failed. */
    boolean passed() {
        return oversold() == 0 && lost() == 0 && counts.errors() == 0;
    }

    double acquisitionsPerSecond() {
        return elapsed.isZero() ? 0 : counts.lockAcquisitions() / (elapsed.toNanos() / 1e9);
    }

    /** Initial stock - units sold - final stock: zero when every unit is accounted for. */
    private long unaccounted() {
        return initialStock - counts.unitsSold() - finalStock;
    }

    Table table() {
        Table table = new Table()
                .row("nodes", nodes.size(), "quorum " + quorum + "; " + faults)
                .row("clients", clients, "each with its own Redlock")
                .row("attempts", Formats.count(counts.attempts()), "calls to reserve(sku, 1..3)")
                .row("reservations granted", Formats.count(counts.reserved()))
                .row("refused, no stock", Formats.count(counts.outOfStock()))
                .row(
                        "lock timeouts",
                        Formats.count(counts.lockTimeouts()),
                        "no lock within " + Formats.duration(InventoryService.MAX_WAIT))
                .row("errors", Formats.count(counts.errors()), firstError.orElse(""))
                .row("units sold", Formats.count(counts.unitsSold()))
                .row("final stock", Formats.count(finalStock))
                .row(
                        "oversold",
                        Formats.count(oversold()),
                        String.format(
                                "%s initial - %s sold - %s left = %s",
                                Formats.count(initialStock),
                                Formats.count(counts.unitsSold()),
                                Formats.count(finalStock),
                                Formats.count(unaccounted())));
        if (lost() > 0) {
            table.row("lost", Formats.count(lost()), "units gone from the stock but never sold");
        }
        return table.row("elapsed", Formats.duration(elapsed))
                .row("lock acquisitions", Formats.perSecond(acquisitionsPerSecond()))
                .row(
                        "reserve latency p50",
                        latency.samples() == 0 ? "-" : Formats.duration(latency.p50()),
                        "lock, read, write, release")
                .row("reserve latency p99", latency.samples() == 0 ? "-" : Formats.duration(latency.p99()));
    }

    /** One line: did the lock keep the stock right? */
    String verdict() {
        if (passed()) {
            return "OK: no unit oversold or lost; the lock kept every read-then-write exclusive.";
        }
        return "FAILED: " + Formats.count(oversold()) + " units oversold, " + Formats.count(lost()) + " lost, "
                + Formats.count(counts.errors()) + " client errors.";
    }
}
