package io.quorumlock.lab.demo;

import io.quorumlock.cli.Formats;
import io.quorumlock.lab.ProgressLine;
import io.quorumlock.lab.RecentRate;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import java.sql.SQLException;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.stream.Collectors;

/**
 * One run of the demo: starts the Redis nodes and the database, lets the clients reserve until the
 * stock is gone or the time is up, injects the faults halfway (half the time or half the stock,
 * whichever comes first), and stops everything it started, whatever happens.
 */
final class DemoRun {

    static final String SKU = "SKU-42";
    static final int NODES = 5;
    private static final Duration TICK = Duration.ofMillis(100);

    private final int clients;
    private final int stock;
    private final Duration duration;
    private final long seed;
    private final ProgressLine progress;

    DemoRun(int clients, int stock, Duration duration, long seed, ProgressLine progress) {
        this.clients = clients;
        this.stock = stock;
        this.duration = duration;
        this.seed = seed;
        this.progress = progress;
    }

    DemoResult run() throws SQLException, InterruptedException {
        SplittableRandom random = new SplittableRandom(seed);
        try (RedisServers servers = RedisServers.start(NODES);
                Faults faults = new Faults(servers, random);
                InventoryDatabase database = InventoryDatabase.inMemory(clients + 2)) {
            InventoryRepository repository = new InventoryRepository(database.dataSource());
            repository.createTable();
            repository.addSku(SKU, stock);
            progress.println(startLines(servers));
            try (ReservationClients fleet =
                    ReservationClients.start(servers.uris(), repository, SKU, clients, random)) {
                Duration elapsed = watch(fleet, repository, faults);
                progress.clear();
                Tally tally = fleet.tally();
                return new DemoResult(
                        servers.uris(),
                        fleet.quorum(),
                        faults.summary(),
                        clients,
                        tally.counts(),
                        tally.firstError(),
                        stock,
                        repository.findStock(SKU),
                        elapsed,
                        fleet.latency());
            }
        }
    }

    /** Watches the clients until they are done: injects the faults, stops them at the end, shows progress. */
    private Duration watch(ReservationClients fleet, InventoryRepository repository, Faults faults)
            throws SQLException, InterruptedException {
        long start = System.nanoTime();
        RecentRate rate = new RecentRate(Duration.ofSeconds(1));
        while (!fleet.awaitFinished(TICK)) {
            long now = System.nanoTime();
            Duration elapsed = Duration.ofNanos(now - start);
            int left = repository.findStock(SKU);
            if (!faults.injected() && (elapsed.multipliedBy(2).compareTo(duration) >= 0 || 2L * left <= stock)) {
                progress.println(Formats.duration(elapsed) + ": " + faults.inject() + "; " + faults.nodesLeft() + " of "
                        + NODES + " nodes answer, quorum " + fleet.quorum());
            }
            if (left <= 0 || elapsed.compareTo(duration) >= 0) {
                fleet.stop();
            }
            Tally.Counts counts = fleet.tally().counts();
            progress.status(String.format(
                    "%8s   reservations %s   stock left %s   lock acquisitions %s",
                    Formats.duration(elapsed),
                    Formats.count(counts.reserved()),
                    Formats.count(left),
                    Formats.perSecond(rate.update(now, counts.lockAcquisitions()))));
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }

    private String startLines(RedisServers servers) {
        String ports = servers.servers().stream()
                .map(server -> Integer.toString(server.port()))
                .collect(Collectors.joining(", "));
        RedisServer first = servers.get(0);
        return "Started " + NODES + " Redis nodes (redis-server " + first.version() + ") on " + first.host()
                + ", ports " + ports + ".\n"
                + clients + " clients reserve 1-3 units of " + SKU + " (stock " + Formats.count(stock)
                + ") under a Redlock, for up to " + Formats.duration(duration) + " (seed " + seed + ").";
    }
}
