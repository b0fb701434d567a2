package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.testkit.MariaDbServerExtension;
import io.quorumlock.testkit.PostgresServerExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLSyntaxErrorException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The fence on H2, and on a real PostgreSQL and MariaDB: every test runs on each. */
class JdbcFenceIT {

    private static final Logger log = LoggerFactory.getLogger(JdbcFenceIT.class);

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @RegisterExtension
    static final MariaDbServerExtension mariadb = new MariaDbServerExtension();

    private static final AtomicInteger tables = new AtomicInteger();

    private DataSource database;
    private JdbcFence fence;
    /** The business table: rows (id, amount, last_token, writes) that fenced transactions write. */
    private String stock;

    private final List<Connection> open = new ArrayList<>();

    private void setUp(Engine engine) throws SQLException {
        setUp(engine, "fence_" + tables.incrementAndGet());
    }

    private void setUp(Engine engine, String fenceTable) throws SQLException {
        database = engine.dataSource(postgres, mariadb);
        fence = JdbcFence.builder().table(fenceTable).build();
        stock = "stock_" + tables.incrementAndGet();
        try (Connection connection = database.getConnection();
                Statement statement = connection.createStatement()) {
            fence.createTable(connection);
            fence.createTable(connection); // IF NOT EXISTS
            statement.execute("CREATE TABLE " + stock
                    + " (id VARCHAR(64) PRIMARY KEY, amount INT NOT NULL, last_token BIGINT NOT NULL, writes INT NOT"
                    + " NULL)");
            statement.execute("INSERT INTO " + stock + " VALUES ('SKU-42', 10, 0, 0)");
        }
    }

    @AfterEach
    void closeConnections() throws SQLException {
        for (Connection connection : open) {
            connection.close();
        }
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void recordsTheFirstTokenThenAcceptsNewerAndEqualOnes(Engine engine) throws Exception {
        setUp(engine);
        Connection tx = transaction();

        assertThat(fence.newestToken(tx, "r")).isEmpty();
        fence.check(tx, new TestLease("r", 33));
        tx.commit();
        assertThat(fence.newestToken(tx, "r")).hasValue(33);

        fence.check(tx, new TestLease("r", 33)); // the same lease writes again
        fence.check(tx, new TestLease("r", 34));
        fence.checkRawToken(tx, "r", 40);
        fence.checkRawToken(tx, "r", 40);
        tx.commit();
        assertThat(fence.newestToken(tx, "r")).hasValue(40);
    }

    /** A reader raises the newest token and refuses nothing; a writer older than a reader is refused. */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void raiseRecordsAReadersTokenWithoutRefusingAnOlderOne(Engine engine) throws Exception {
        setUp(engine);
        Connection tx = transaction();

        fence.raise(tx, new TestLease("catalog", 20)); // the first row
        fence.raise(tx, new TestLease("catalog", 25)); // a later reader
        fence.raise(tx, new TestLease("catalog", 22)); // an earlier reader, reading last: not refused
        tx.commit();
        assertThat(fence.newestToken(tx, "catalog")).hasValue(25);

        StaleTokenException stale =
                catchThrowableOfType(StaleTokenException.class, () -> fence.check(tx, new TestLease("catalog", 24)));
        assertThat(stale.newestToken())
                .as("a writer paused past its lease, older than a reader")
                .isEqualTo(25);
        tx.rollback();
        fence.check(tx, new TestLease("catalog", 26)); // the next writer
        tx.commit();
        assertThat(fence.newestToken(tx, "catalog")).hasValue(26);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void refusesAnOlderTokenWithTheEvidenceAndLeavesTheTransactionUsable(Engine engine) throws Exception {
        setUp(engine);
        Connection tx = transaction();
        fence.check(tx, new TestLease("inventory:SKU-42", 34));
        tx.commit();

        StaleTokenException stale = catchThrowableOfType(
                StaleTokenException.class, () -> fence.check(tx, new TestLease("inventory:SKU-42", 33)));

        assertThat(stale.resource()).isEqualTo("inventory:SKU-42");
        assertThat(stale.staleToken()).isEqualTo(33);
        assertThat(stale.newestToken()).isEqualTo(34);
        assertThat(stale).hasMessageContaining("fencing token 33 for 'inventory:SKU-42' is stale");
        assertThat(amount(tx, "SKU-42")).isEqualTo(10); // no SQL error: the caller decides, and rolls back
        tx.rollback();
        assertThat(catchThrowableOfType(StaleTokenException.class, () -> fence.checkRawToken(tx, "inventory:SKU-42", 1))
                        .newestToken())
                .isEqualTo(34);
        tx.rollback();
        assertThat(fence.newestToken(tx, "inventory:SKU-42")).hasValue(34);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aStaleWriterChangesNothingWhetherItWritesBeforeOrAfterTheCheck(Engine engine) throws Exception {
        setUp(engine);
        Connection fresh = transaction();
        fence.check(fresh, new TestLease("inventory:SKU-42", 34));
        write(fresh, "SKU-42", 7, 34);
        fresh.commit();

        Connection stale = transaction();
        write(stale, "SKU-42", 99, 33); // the business write first ...
        assertThat(catchThrowableOfType(
                        StaleTokenException.class, () -> fence.check(stale, new TestLease("inventory:SKU-42", 33))))
                .isNotNull(); // ... then the fence refuses
        stale.rollback();

        Connection staleCheckingFirst = transaction();
        assertThat(catchThrowableOfType(
                        StaleTokenException.class,
                        () -> fence.check(staleCheckingFirst, new TestLease("inventory:SKU-42", 33))))
                .isNotNull();
        staleCheckingFirst.rollback();

        assertThat(amount(fresh, "SKU-42")).isEqualTo(7);
        assertThat(lastToken(fresh, "SKU-42")).isEqualTo(34);
        assertThat(fence.newestToken(fresh, "inventory:SKU-42")).hasValue(34);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aRolledBackCheckRecordsNothing(Engine engine) throws Exception {
        setUp(engine);
        Connection tx = transaction();
        fence.check(tx, new TestLease("r", 10));
        tx.commit();
        fence.check(tx, new TestLease("r", 50));
        tx.rollback();
        fence.check(tx, new TestLease("new", 50));
        tx.rollback();

        assertThat(fence.newestToken(tx, "r")).hasValue(10);
        assertThat(fence.newestToken(tx, "new")).isEmpty();
        fence.check(tx, new TestLease("r", 20)); // 50 was never committed, so 20 is the newest
        tx.commit();
        assertThat(fence.newestToken(tx, "r")).hasValue(20);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void resourcesAreFencedIndependently(Engine engine) throws Exception {
        setUp(engine);
        Connection tx = transaction();
        fence.check(tx, new TestLease("a", 100));
        fence.check(tx, new TestLease("b", 1));
        tx.commit();
        assertThat(fence.newestToken(tx, "a")).hasValue(100);
        assertThat(fence.newestToken(tx, "b")).hasValue(1);
    }

    /** Names are compared as the lock compares them, byte for byte: case and trailing spaces count. */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void namesThatDifferInCaseOrTrailingSpacesAreFencedApart(Engine engine) throws Exception {
        setUp(engine);
        Connection tx = transaction();
        fence.check(tx, new TestLease("Stock", 5));
        fence.check(tx, new TestLease("sku ", 5));
        tx.commit();

        fence.check(tx, new TestLease("stock", 3));
        fence.check(tx, new TestLease("sku", 3));
        tx.commit();

        assertThat(fence.newestToken(tx, "Stock")).hasValue(5);
        assertThat(fence.newestToken(tx, "stock")).hasValue(3);
        assertThat(fence.newestToken(tx, "sku ")).hasValue(5);
        assertThat(fence.newestToken(tx, "sku")).hasValue(3);
    }

    /**
     * A MariaDB fence table made with the database's default collation, which folds case and
     * trailing spaces, is refused with the statement that migrates it; after it, names are apart.
     */
    @Test
    void aMariaDbTableThatFoldsNamesIsRefusedWithTheMigration() throws Exception {
        database = Engine.MARIADB.dataSource(postgres, mariadb);
        JdbcFence old =
                JdbcFence.builder().table("fence_" + tables.incrementAndGet()).build();
        try (Connection connection = database.getConnection();
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE " + old.table() + " (resource VARCHAR(255) PRIMARY KEY, token BIGINT NOT"
                    + " NULL) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci");
        }
        Connection tx = transaction();
        SQLException refused = catchThrowableOfType(SQLException.class, () -> old.check(tx, new TestLease("Stock", 5)));
        tx.rollback();

        assertThat((Throwable) refused)
                .isNotNull()
                .hasMessageContaining(old.table())
                .hasMessageContaining("utf8mb4_general_ci")
                .hasMessageContaining("ALTER TABLE " + old.table() + " MODIFY resource VARCHAR(255) CHARACTER SET"
                        + " utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL");
        try (Connection connection = database.getConnection();
                Statement statement = connection.createStatement()) {
            statement.execute(refused.getMessage().replaceAll(".*(ALTER TABLE [^;]*NOT NULL).*", "$1"));
        }
        old.check(tx, new TestLease("Stock", 5));
        tx.commit();
        old.check(tx, new TestLease("stock", 3));
        tx.commit();
        assertThat(old.newestToken(tx, "stock")).hasValue(3);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void worksInASchemaQualifiedTable(Engine engine) throws Exception {
        setUp(engine);
        String schema = "fencing_" + tables.incrementAndGet();
        JdbcFence qualified = JdbcFence.builder().table(schema + ".fence").build();
        try (Connection connection = database.getConnection();
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE SCHEMA " + schema);
            qualified.createTable(connection);
        }
        Connection tx = transaction();
        qualified.check(tx, new TestLease("r", 5));
        tx.commit();
        assertThat(catchThrowableOfType(StaleTokenException.class, () -> qualified.check(tx, new TestLease("r", 4))))
                .isNotNull();
        tx.rollback();
        assertThat(qualified.newestToken(tx, "r")).hasValue(5);
        assertThat(fence.newestToken(tx, "r")).isEmpty(); // the other fence table
    }

    /**
     * A fence whose table was never created says so, with the remedy, on every call that uses the
     * table; the database's own error is the cause and its SQLSTATE is kept. Then the remedy works.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aMissingTableIsNamedWithTheRemedy(Engine engine) throws Exception {
        database = engine.dataSource(postgres, mariadb);
        JdbcFence missing =
                JdbcFence.builder().table("missing_" + tables.incrementAndGet()).build();
        String outsideTransaction = "the fence table " + missing.table() + " does not exist: call"
                + " fence.createTable(connection) once, or run fence.ddl() in a migration ("
                + missing.ddl(engine.dialect()) + ")";
        String inTransaction = outsideTransaction
                + (engine == Engine.POSTGRESQL ? "; PostgreSQL has aborted the transaction: roll it back" : "");
        Connection tx = transaction();
        List<ThrowingCallable> calls = List.of(
                () -> missing.check(tx, new TestLease("r", 1)),
                () -> missing.checkRawToken(tx, "r", 1),
                () -> missing.newestToken(tx, "r"));
        for (ThrowingCallable call : calls) {
            assertThat(missingTable(call).getMessage()).isEqualTo(inTransaction);
            tx.rollback();
        }
        try (Connection autoCommit = database.getConnection()) {
            assertThat(missingTable(() -> missing.newestToken(autoCommit, "r")).getMessage())
                    .isEqualTo(outsideTransaction);
        }

        missing.createTable(tx);
        missing.check(tx, new TestLease("r", 1));
        tx.commit();
        assertThat(missing.newestToken(tx, "r")).hasValue(1);
    }

    /** H2 has three ways of saying a table is not there: an empty database, a plain miss, a miss with candidates. */
    @Test
    void everyH2TableNotFoundIsNamedWithTheRemedy() throws Exception {
        database = Engine.H2.dataSource(postgres, mariadb);
        Connection tx = transaction();
        JdbcFence missing = JdbcFence.builder().build();
        ThrowingCallable check = () -> missing.checkRawToken(tx, "r", 1);
        assertThat(missingTable(check).getSQLState()).isEqualTo("42S04"); // the database is empty
        try (Statement statement = tx.createStatement()) {
            statement.execute("CREATE TABLE other (id INT)");
            assertThat(missingTable(check).getSQLState()).isEqualTo("42S02");
            statement.execute("CREATE TABLE \"quorumlock_fence\" (id INT)"); // quoted: another name on H2
            assertThat(missingTable(check).getSQLState()).isEqualTo("42S03"); // with candidates
        }
    }

    /** {@return the SQLException the call throws, checked to be the explained missing table} */
    private static SQLException missingTable(ThrowingCallable call) {
        SQLException explained = catchThrowableOfType(SQLException.class, call);
        assertThat((Throwable) explained)
                .isInstanceOf(SQLSyntaxErrorException.class)
                .hasMessageStartingWith("the fence table ")
                .hasMessageContaining("call fence.createTable(connection) once, or run fence.ddl() in a migration");
        assertThat(explained.getCause()).isInstanceOf(SQLException.class);
        assertThat(explained.getSQLState())
                .isIn("42S02", "42S03", "42S04", "42P01")
                .isEqualTo(((SQLException) explained.getCause()).getSQLState());
        return explained;
    }

    /**
     * Two first writers of a new resource: the second waits for the first's uncommitted row, then
     * is compared with its token, and its transaction stays usable (no unique violation leaks out,
     * which on PostgreSQL would abort the whole transaction).
     */
    @ParameterizedTest
    @CsvSource({"H2, 5", "H2, 20", "POSTGRESQL, 5", "POSTGRESQL, 20", "MARIADB, 5"})
    void aSecondFirstWriterWaitsForTheFirstThenIsComparedWithIt(Engine engine, long secondToken) throws Exception {
        setUp(engine);
        Connection first = transaction();
        fence.check(first, new TestLease("new", 10)); // inserts the row, not committed yet

        Connection second = transaction();
        write(second, "SKU-42", 5, secondToken);
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<Throwable> outcome = thread.submit(() -> {
                try {
                    fence.check(second, new TestLease("new", secondToken));
                    return null;
                } catch (StaleTokenException | SQLException e) {
                    return e;
                }
            });
            engine.awaitBlockedOn(database, fence.table());
            assertThat(outcome.isDone()).isFalse();
            first.commit();

            Throwable failure = outcome.get(30, TimeUnit.SECONDS);
            assertThat(amount(second, "SKU-42")).isEqualTo(5); // the transaction is still usable
            if (secondToken < 10) {
                assertThat(failure).isInstanceOf(StaleTokenException.class);
                assertThat(((StaleTokenException) failure).newestToken()).isEqualTo(10);
                second.rollback();
                assertThat(fence.newestToken(second, "new")).hasValue(10);
                assertThat(amount(second, "SKU-42")).isEqualTo(10);
            } else {
                assertThat(failure).isNull();
                second.commit();
                assertThat(fence.newestToken(second, "new")).hasValue(secondToken);
                assertThat(amount(second, "SKU-42")).isEqualTo(5);
            }
        } finally {
            thread.shutdownNow();
        }
    }

    /**
     * Many writers with random tokens on one resource. Each accepted transaction reads the business
     * row after its check: the fence serializes them, so it must see no newer token than its own.
     * Every refused token is older than the newest one committed when it was refused, and the
     * final token is the largest of all.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void concurrentWritersWithRandomTokensCommitInTokenOrder(Engine engine) throws Exception {
        setUp(engine);
        int threads = 8;
        int perThread = 60;
        Set<Long> accepted = ConcurrentHashMap.newKeySet();
        AtomicInteger acceptedCount = new AtomicInteger();
        List<StaleTokenException> refused = Collections.synchronizedList(new ArrayList<>());
        List<String> violations = Collections.synchronizedList(new ArrayList<>());
        List<Long> attempted = Collections.synchronizedList(new ArrayList<>());
        AtomicLong issued = new AtomicLong(1000);
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                workers.add(pool.submit(() -> {
                    try (Connection tx = database.getConnection()) {
                        tx.setAutoCommit(false);
                        start.await(10, TimeUnit.SECONDS); // the first writes race for the insert too
                        for (int i = 0; i < perThread; i++) {
                            // Grants come in increasing order, writers arrive late by a random amount.
                            long token = issued.incrementAndGet()
                                    - ThreadLocalRandom.current().nextLong(0, 3L * threads);
                            attempted.add(token);
                            try {
                                fence.check(tx, new TestLease("inventory:SKU-42", token));
                                long previous = lastToken(tx, "SKU-42");
                                if (previous > token) {
                                    violations.add("token " + token + " accepted after " + previous);
                                }
                                write(tx, "SKU-42", (int) token, token);
                                tx.commit();
                                accepted.add(token);
                                acceptedCount.incrementAndGet();
                            } catch (StaleTokenException e) {
                                tx.rollback();
                                refused.add(e);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(50, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        long max = attempted.stream().mapToLong(Long::longValue).max().orElseThrow();
        log.info(
                "{}: {} transactions, {} accepted, {} refused as stale, final token {}",
                engine,
                attempted.size(),
                acceptedCount.get(),
                refused.size(),
                max);
        assertThat(violations).isEmpty();
        assertThat(acceptedCount.get() + refused.size()).isEqualTo(threads * perThread);
        assertThat(refused).isNotEmpty();
        assertThat(acceptedCount.get()).isGreaterThan(threads);
        assertThat(refused).allSatisfy(e -> {
            assertThat(e.newestToken()).isGreaterThan(e.staleToken());
            assertThat(accepted).contains(e.newestToken()); // a token that was committed
        });
        Connection check = transaction();
        assertThat(fence.newestToken(check, "inventory:SKU-42")).hasValue(max);
        assertThat(lastToken(check, "SKU-42")).isEqualTo(max);
        assertThat(writes(check, "SKU-42")).isEqualTo(acceptedCount.get());
    }

    /** Rounds of many first writers of a new resource at once: exactly one row, the largest token wins. */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void manyFirstWritersAtOnce(Engine engine) throws Exception {
        setUp(engine);
        int threads = 8;
        int rounds = 15;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Throwable> unexpected = Collections.synchronizedList(new ArrayList<>());
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long token = t + 1;
                workers.add(pool.submit(() -> {
                    try (Connection tx = database.getConnection()) {
                        tx.setAutoCommit(false);
                        for (int round = 0; round < rounds; round++) {
                            start.await(10, TimeUnit.SECONDS);
                            try {
                                fence.checkRawToken(tx, "round-" + round, token);
                                tx.commit();
                            } catch (StaleTokenException e) {
                                tx.rollback();
                            } catch (SQLException | RuntimeException e) {
                                unexpected.add(e);
                                tx.rollback();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(50, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(unexpected).isEmpty();
        Connection check = transaction();
        for (int round = 0; round < rounds; round++) {
            assertThat(fence.newestToken(check, "round-" + round)).hasValue(threads);
        }
        try (Statement statement = check.createStatement();
                ResultSet rows = statement.executeQuery("SELECT COUNT(*) FROM " + fence.table())) {
            rows.next();
            assertThat(rows.getInt(1)).isEqualTo(rounds);
        }
    }

    private Connection transaction() throws SQLException {
        Connection connection = database.getConnection();
        open.add(connection);
        connection.setAutoCommit(false);
        return connection;
    }

    private void write(Connection tx, String id, int amount, long token) throws SQLException {
        try (PreparedStatement statement = tx.prepareStatement(
                "UPDATE " + stock + " SET amount = ?, last_token = ?, writes = writes + 1 WHERE id = ?")) {
            statement.setInt(1, amount);
            statement.setLong(2, token);
            statement.setString(3, id);
            assertThat(statement.executeUpdate()).isEqualTo(1);
        }
    }

    private int amount(Connection connection, String id) throws SQLException {
        return (int) column(connection, "amount", id);
    }

    private long lastToken(Connection connection, String id) throws SQLException {
        return column(connection, "last_token", id);
    }

    private int writes(Connection connection, String id) throws SQLException {
        return (int) column(connection, "writes", id);
    }

    private long column(Connection connection, String column, String id) throws SQLException {
        try (PreparedStatement statement =
                connection.prepareStatement("SELECT " + column + " FROM " + stock + " WHERE id = ?")) {
            statement.setString(1, id);
            try (ResultSet rows = statement.executeQuery()) {
                assertThat(rows.next()).isTrue();
                return rows.getLong(1);
            }
        }
    }
}
