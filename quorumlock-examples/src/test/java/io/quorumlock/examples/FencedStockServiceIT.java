package io.quorumlock.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.jdbc.JdbcFence;
import io.quorumlock.jdbc.StaleTokenException;
import io.quorumlock.jdbc.TestLease;
import io.quorumlock.testkit.PostgresServerExtension;
import java.sql.Connection;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** JdbcFence in the same transaction as the business write, on H2 and PostgreSQL. */
class FencedStockServiceIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    private static final String SKU = "SKU-42";
    private static final String RESOURCE = FencedStockService.resource(SKU);

    private DataSource database;
    private final JdbcFence fence = JdbcFence.builder().build();

    private FencedStockService service(Engine engine) throws Exception {
        database = engine.newDatabase(postgres);
        InventoryTable.create(database);
        InventoryTable.add(database, SKU, 10);
        try (Connection connection = database.getConnection()) {
            fence.createTable(connection);
        }
        return new FencedStockService(database, fence);
    }

    /** The GC timeline: A (token 33) locks and pauses; B (token 34) sells; A wakes up and sells. */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aPausedClientWithALostLeaseIsRefusedAndChangesNothing(Engine engine) throws Exception {
        FencedStockService service = service(engine);
        TestLease leaseA = new TestLease(RESOURCE, 33);
        TestLease leaseB = new TestLease(RESOURCE, 34);

        assertThat(service.reserve(leaseB, SKU, 2)).isTrue();
        assertThat(service.reserve(leaseB, SKU, 1)).isTrue(); // one lease may write again

        StaleTokenException stale =
                catchThrowableOfType(StaleTokenException.class, () -> service.reserve(leaseA, SKU, 3));
        assertThat(stale.resource()).isEqualTo(RESOURCE);
        assertThat(stale.staleToken()).isEqualTo(33);
        assertThat(stale.newestToken()).isEqualTo(34);

        assertThat(InventoryTable.stock(database, SKU)).hasValue(7);
        assertThat(service.reserve(new TestLease(RESOURCE, 35), SKU, 7)).isTrue(); // a fresh lease succeeds
        assertThat(InventoryTable.stock(database, SKU)).hasValue(0);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aShortStockWritesNothing(Engine engine) throws Exception {
        FencedStockService service = service(engine);
        assertThat(service.reserve(new TestLease(RESOURCE, 5), SKU, 11)).isFalse();
        assertThat(InventoryTable.stock(database, SKU)).hasValue(10);
        try (Connection connection = database.getConnection()) {
            assertThat(fence.newestToken(connection, RESOURCE)).isEmpty(); // rolled back with the rest
        }
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aLeaseOnAnotherResourceOrAnUnknownSkuIsRefused(Engine engine) throws Exception {
        FencedStockService service = service(engine);
        assertThatThrownBy(() -> service.reserve(new TestLease("inventory:SKU-7", 5), SKU, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the lease is on 'inventory:SKU-7', not on 'inventory:SKU-42'");
        assertThatThrownBy(() -> service.reserve(new TestLease("inventory:SKU-7", 5), "SKU-7", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no SKU SKU-7");
        assertThat(InventoryTable.stock(database, SKU)).hasValue(10);
    }
}
