package io.quorumlock.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.examples.OptimisticInventoryRepository.Stock;
import io.quorumlock.testkit.PostgresServerExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Optimistic locking with a version column on H2 and PostgreSQL: no lock, no lost update. */
class OptimisticInventoryRepositoryIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    private DataSource database;

    private OptimisticInventoryRepository repository(Engine engine, int stock) throws Exception {
        database = engine.newDatabase(postgres);
        InventoryTable.create(database);
        InventoryTable.add(database, "SKU-42", stock);
        return new OptimisticInventoryRepository(database);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aWriterThatReadAnOlderVersionChangesNothing(Engine engine) throws Exception {
        OptimisticInventoryRepository repository = repository(engine, 10);
        Stock seenByA = repository.find("SKU-42").orElseThrow(); // A reads (10, version 0), then pauses
        Stock seenByB = repository.find("SKU-42").orElseThrow();

        assertThat(repository.updateStock("SKU-42", seenByB.units() - 1, seenByB.version()))
                .isTrue();
        assertThat(repository.updateStock("SKU-42", seenByA.units() - 3, seenByA.version()))
                .isFalse();

        assertThat(repository.find("SKU-42")).contains(new Stock(9, 1));
        assertThat(repository.find("SKU-7")).isEmpty();
    }

    /** Writers without any lock: each unit is sold once, and never more than the stock. */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void concurrentReservationsSellEveryUnitOnce(Engine engine) throws Exception {
        int threads = 6;
        int perThread = 15;
        int stock = 60; // less than threads x perThread: some reservations find the stock short
        OptimisticInventoryRepository repository = repository(engine, stock);
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        int granted = 0;
        try {
            List<Future<Integer>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                workers.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    int mine = 0;
                    for (int i = 0; i < perThread; i++) {
                        if (repository.reserve("SKU-42", 1, 1_000)) {
                            mine++;
                        }
                    }
                    return mine;
                }));
            }
            for (Future<Integer> worker : workers) {
                granted += worker.get(50, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        Stock left = repository.find("SKU-42").orElseThrow();
        assertThat(granted).isEqualTo(stock);
        assertThat(left.units()).isZero();
        assertThat(left.version()).isEqualTo(stock); // one version per sale, none lost
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void reserveRefusesBadArguments(Engine engine) throws Exception {
        OptimisticInventoryRepository repository = repository(engine, 1);
        assertThat(repository.reserve("SKU-42", 2, 3)).isFalse();
        assertThatThrownBy(() -> repository.reserve("SKU-42", 0, 3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> repository.reserve("SKU-7", 1, 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no SKU SKU-7");
    }
}
