package io.quorumlock.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.PostgresServerExtension;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The article's fenced repository on H2 and PostgreSQL. */
class FencedInventoryRepositoryIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    private FencedInventoryRepository repository(Engine engine) throws Exception {
        DataSource database = engine.newDatabase(postgres);
        InventoryTable.create(database);
        InventoryTable.add(database, "SKU-42", 10);
        return new FencedInventoryRepository(database);
    }

    /** The article's GC timeline: A (token 33) pauses, B (token 34) writes, A wakes up and writes. */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aPausedWriterWithAnOlderTokenChangesNothing(Engine engine) throws Exception {
        FencedInventoryRepository repository = repository(engine);
        int seenByA = repository.findStock("SKU-42").orElseThrow(); // A reads 10, then pauses

        int seenByB = repository.findStock("SKU-42").orElseThrow();
        assertThat(repository.updateStock("SKU-42", seenByB - 1, 34)).isTrue(); // B sells one

        assertThat(repository.updateStock("SKU-42", seenByA - 3, 33)).isFalse(); // A wakes up: refused
        assertThat(repository.findStock("SKU-42")).hasValue(9);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aNewerTokenWritesAndTheStrictComparisonRefusesTheSameTokenTwice(Engine engine) throws Exception {
        FencedInventoryRepository repository = repository(engine);
        assertThat(repository.updateStock("SKU-42", 9, 34)).isTrue();
        assertThat(repository.updateStock("SKU-42", 8, 35)).isTrue();
        // last_token < ? : one lease writes a row once; JdbcFence (FencedStockService) allows more.
        assertThat(repository.updateStock("SKU-42", 7, 35)).isFalse();
        assertThat(repository.findStock("SKU-42")).hasValue(8);
        assertThat(repository.updateStock("SKU-7", 1, 99)).isFalse(); // no such SKU
    }

    /**
     * The limit of fencing only the write: A (token 33) reads, its lease runs out, B (token 34)
     * reads the same stock; A's write lands first, its token still the newest the row has seen,
     * then B's. Two units sold, one recorded. FencedStockService fences the read too.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void anUnfencedReadLetsAnExpiredHoldersWriteLandFirstAndLoseAnUpdate(Engine engine) throws Exception {
        FencedInventoryRepository repository = repository(engine);
        int seenByA = repository.findStock("SKU-42").orElseThrow();
        int seenByB = repository.findStock("SKU-42").orElseThrow(); // B holds the lock now

        assertThat(repository.updateStock("SKU-42", seenByA - 1, 33)).isTrue(); // A is not refused
        assertThat(repository.updateStock("SKU-42", seenByB - 1, 34)).isTrue();
        assertThat(repository.findStock("SKU-42")).hasValue(9); // 2 sold, 1 recorded
    }
}
