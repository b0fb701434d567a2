package io.quorumlock.lab.demo;

import io.quorumlock.LockUnavailableException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.redis.Redlock;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Clients that reserve one SKU at the same time until stopped, each with its own {@link Redlock}
 * over the same nodes, as separate service instances would be. Each one loops: reserve 1 to 3
 * units, count the outcome, again. A client that meets an unexpected error stops and leaves it in
 * the {@link Tally}.
 */
final class ReservationClients implements AutoCloseable {

    private static final Duration NODE_TIMEOUT = Duration.ofMillis(50);
    private static final RetryPolicy RETRY = RetryPolicy.jitteredBackoff(Duration.ofMillis(5), Duration.ofMillis(50));
    /** Long enough for the reservation in flight to end: its wait for the lock, then the release. */
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

    private final String sku;
    private final Tally tally = new Tally();
    private final List<Client> clients = new ArrayList<>();
    private final ExecutorService threads;
    private volatile boolean stopped;

    private ReservationClients(String sku, int count) {
        this.sku = sku;
        AtomicInteger names = new AtomicInteger();
        this.threads = Executors.newFixedThreadPool(count, task -> {
            Thread thread = new Thread(task, "demo-client-" + names.incrementAndGet());
            thread.setDaemon(true); // never holds up the JVM's exit, on Ctrl-C for one
            return thread;
        });
    }

    /**
     * Starts {@code count} clients.
     *
     * @param random the source of each client's own random quantities
     */
    static ReservationClients start(
            List<String> nodes, InventoryRepository repository, String sku, int count, SplittableRandom random) {
        ReservationClients fleet = new ReservationClients(sku, count);
        try {
            for (int i = 0; i < count; i++) {
                // Without the restart guard: the nodes were started a moment ago and the TTL is 10 s,
                // so the guard would refuse every reservation for the first 10 s, the whole default
                // run. No node restarts during the demo (one is frozen, one killed for good).
                Redlock redlock = Redlock.builder()
                        .nodes(nodes)
                        .nodeTimeout(NODE_TIMEOUT)
                        .retry(RETRY)
                        .restartGuard(false)
                        .build();
                fleet.clients.add(fleet.new Client(redlock, new InventoryService(redlock, repository), random.split()));
            }
        } catch (RuntimeException e) {
            fleet.close();
            throw e;
        }
        fleet.clients.forEach(fleet.threads::execute);
        fleet.threads.shutdown(); // no more tasks: awaitFinished can tell when the clients are done
        return fleet;
    }

    /** How many yes votes a lock needs. */
    int quorum() {
        return clients.get(0).redlock.quorum();
    }

    Tally tally() {
        return tally;
    }

    /** Asks every client to stop after the reservation it is making. */
    void stop() {
        stopped = true;
    }

    /** Waits up to {@code timeout} for every client to end; true if they all did. */
    boolean awaitFinished(Duration timeout) throws InterruptedException {
        return threads.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * The latency of every reservation that held the lock.
     *
     * @throws IllegalStateException if the clients have not finished
     */
    Latency latency() {
        if (!threads.isTerminated()) {
            throw new IllegalStateException("the clients are still running");
        }
        return Latency.of(clients.stream()
                .flatMapToLong(c -> Arrays.stream(c.latencies, 0, c.samples))
                .toArray());
    }

    /** Stops the clients, waits for them, and closes their Redlocks. */
    @Override
    public void close() {
        stop();
        threads.shutdown();
        try {
            if (!awaitFinished(STOP_TIMEOUT)) {
                threads.shutdownNow();
            }
        } catch (InterruptedException e) {
            threads.shutdownNow();
            Thread.currentThread().interrupt();
        } finally {
            clients.forEach(client -> client.redlock.close());
        }
    }

    /** One client: a service instance with its own Redlock. */
    private final class Client implements Runnable {
        private final Redlock redlock;
        private final InventoryService service;
        private final SplittableRandom random;
        private long[] latencies = new long[1024];
        private int samples;

        Client(Redlock redlock, InventoryService service, SplittableRandom random) {
            this.redlock = redlock;
            this.service = service;
            this.random = random;
        }

        @Override
        public void run() {
            while (!stopped) {
                int quantity = random.nextInt(1, 4);
                long start = System.nanoTime();
                try {
                    InventoryService.Outcome outcome = service.reserve(sku, quantity);
                    record(System.nanoTime() - start);
                    tally.count(outcome, quantity);
                } catch (LockUnavailableException e) {
                    tally.lockTimeout();
                } catch (SQLException | RuntimeException e) {
                    tally.error(e);
                    return;
                }
            }
        }

        private void record(long nanos) {
            if (samples == latencies.length) {
                latencies = Arrays.copyOf(latencies, samples * 2);
            }
            latencies[samples++] = nanos;
        }
    }
}
