package io.quorumlock.lab.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.lab.demo.InventoryService.Outcome;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisServersExtension;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The article's InventoryService with a real Redlock over five real nodes and an H2 database. */
class InventoryServiceIT {

    private static final String SKU = "SKU-1";

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(5);

    private InventoryDatabase database;
    private InventoryRepository repository;

    @BeforeEach
    void createInventory() throws SQLException {
        database = InventoryDatabase.inMemory(16);
        repository = new InventoryRepository(database.dataSource());
        repository.createTable();
    }

    @AfterEach
    void dropInventory() throws SQLException {
        database.close();
    }

    @Test
    void concurrentClientsSellTheWholeStockExactlyOnce() throws Exception {
        repository.addSku(SKU, 300);

        Sales sales = sellOut(8);

        assertThat(sales.unitsSold.sum()).isEqualTo(300);
        assertThat(repository.findStock(SKU)).isZero();
        assertThat(sales.outOfStock.sum()).as("each client ends on a refusal").isGreaterThanOrEqualTo(8);
    }

    @Test
    void concurrentClientsSellExactlyOnceWithOneNodeFrozenAndOneKilled() throws Exception {
        repository.addSku(SKU, 150);
        redis.get(1).pause();
        redis.get(3).stop();

        Sales sales = sellOut(4);

        assertThat(sales.unitsSold.sum()).isEqualTo(150);
        assertThat(repository.findStock(SKU)).isZero();
    }

    @Test
    void refusesMoreThanTheStockAndLeavesItAsItWas() throws SQLException {
        repository.addSku(SKU, 2);
        try (Redlock redlock = newRedlock()) {
            InventoryService service = new InventoryService(redlock, repository);

            assertThat(service.reserve(SKU, 3)).isEqualTo(Outcome.OUT_OF_STOCK);
            assertThat(repository.findStock(SKU)).isEqualTo(2);
            assertThat(service.reserve(SKU, 2)).isEqualTo(Outcome.RESERVED);
            assertThat(repository.findStock(SKU)).isZero();
        }
    }

    @Test
    void givesUpAfterTheMaxWaitWhileAnotherHolderHasTheLock() throws SQLException {
        repository.addSku(SKU, 10);
        try (Redlock holder = newRedlock();
                Redlock client = newRedlock();
                Lease held = holder.acquire("lock:sku:" + SKU, Duration.ofSeconds(10), Duration.ofSeconds(1))) {
            InventoryService service = new InventoryService(client, repository);
            long start = System.nanoTime();

            assertThatThrownBy(() -> service.reserve(SKU, 1)).isInstanceOf(LockUnavailableException.class);

            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .isLessThan(InventoryService.MAX_WAIT.multipliedBy(5));
            assertThat(held.isValid()).isTrue();
            assertThat(repository.findStock(SKU)).isEqualTo(10);
        }
    }

    /** What the clients of {@link #sellOut} did. */
    private static final class Sales {
        final LongAdder unitsSold = new LongAdder();
        final LongAdder outOfStock = new LongAdder();
    }

    /**
     * Lets {@code clients} threads, each with its own Redlock, reserve 1 to 3 units until each one
     * is refused a single unit, which happens only once the stock is 0.
     */
    private Sales sellOut(int clients) throws Exception {
        Sales sales = new Sales();
        ExecutorService threads = Executors.newFixedThreadPool(clients);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                SplittableRandom random = new SplittableRandom(i);
                done.add(threads.submit(() -> {
                    try (Redlock redlock = newRedlock()) {
                        InventoryService service = new InventoryService(redlock, repository);
                        while (true) {
                            int quantity = random.nextInt(1, 4);
                            try {
                                if (service.reserve(SKU, quantity) == Outcome.RESERVED) {
                                    sales.unitsSold.add(quantity);
                                } else {
                                    sales.outOfStock.increment();
                                    if (quantity == 1) {
                                        return null;
                                    }
                                }
                            } catch (LockUnavailableException busy) {
                                // try again, as a client of the article would
                            }
                        }
                    }
                }));
            }
            for (Future<?> client : done) {
                client.get(60, TimeUnit.SECONDS);
            }
            return sales;
        } finally {
            threads.shutdownNow();
        }
    }

    private static Redlock newRedlock() {
        // Without the restart guard, as in the demo: the nodes were started for this class (and a
        // killed one again before the next test), far less than the service's 10 s TTL ago.
        return Redlock.builder().nodes(redis.uris()).restartGuard(false).build();
    }
}
