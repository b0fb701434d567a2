package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.LockHolder;
import io.quorumlock.LockListener;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.MariaDbServerExtension;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.TestTime;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The database lock on H2 and on real servers: every test runs on each engine. */
class JdbcLockIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @RegisterExtension
    static final MariaDbServerExtension mariadb = new MariaDbServerExtension();

    private static final AtomicInteger tables = new AtomicInteger();
    private static final Duration TTL = Duration.ofSeconds(10);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(10));

    private final List<JdbcLock> locks = new ArrayList<>();
    private DataSource database;
    private String table;
    private Engine engine;

    private JdbcLock setUp(Engine engine) {
        this.engine = engine;
        this.database = engine.dataSource(postgres, mariadb);
        this.table = "locks_" + tables.incrementAndGet();
        JdbcLock lock = lock("client-a");
        lock.createTable();
        lock.createTable(); // IF NOT EXISTS
        return lock;
    }

    private JdbcLock lock(String holder) {
        return lock(JdbcLock.builder().dataSource(database).table(table).holder(holder));
    }

    private JdbcLock lock(JdbcLockBuilder builder) {
        JdbcLock lock = builder.build();
        locks.add(lock);
        return lock;
    }

    @AfterEach
    void closeLocks() {
        locks.forEach(JdbcLock::close);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void grantsOneHolderAtATimeNamesTheHolderAndHandsOnWithANewerToken(Engine engine) {
        JdbcLock a = setUp(engine);
        JdbcLock b = lock("client-b");

        FencedLease first = a.acquire("stock:sku-42", TTL, Duration.ZERO);
        assertThat(first.isValid()).isTrue();
        assertThat(first.fencingToken()).isPositive();
        assertThat(first.remaining()).isLessThanOrEqualTo(TTL).isGreaterThan(TTL.minusSeconds(5));
        assertThat(b.tryAcquire("stock:sku-42", TTL)).isEmpty();
        LockUnavailableException busy = catchThrowableOfType(
                LockUnavailableException.class, () -> b.acquire("stock:sku-42", TTL, Duration.ofSeconds(1)));
        assertThat(busy.busy()).isTrue();
        assertThat(busy).hasMessageContaining("held by client-a");
        assertThat(busy.lastAttempt()).singleElement().satisfies(answer -> {
            assertThat(answer.kind()).isEqualTo(ServerAnswer.Kind.HELD_BY_OTHER);
            assertThat(answer.detail()).contains("fencing token " + first.fencingToken(), "by the database's clock");
        });
        assertThat(busy.attempts()).isGreaterThan(1);

        first.release();
        first.release(); // idempotent
        assertThat(first.isValid()).isFalse();
        FencedLease second = b.acquire("stock:sku-42", TTL, Duration.ZERO);
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        assertThat(a.tryAcquire("other", TTL)).isPresent(); // resources are independent
        second.release();
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aWaiterGetsTheLockOnceItIsReleased(Engine engine) throws Exception {
        JdbcLock a = setUp(engine);
        AtomicInteger connections = new AtomicInteger();
        JdbcLock b = lock(JdbcLock.builder()
                .dataSource(counting(database, connections))
                .table(table)
                .holder("client-b"));
        FencedLease held = a.acquire("r", TTL, Duration.ZERO);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<FencedLease> waiter = pool.submit(() -> b.acquire("r", TTL, WAIT));
            TestTime.await(Duration.ofSeconds(5), () -> connections.get() >= 2, "the waiter to try twice");
            for (int i = 0; i < 10; i++) { // reading who holds it disturbs neither holder nor waiter
                assertThat(b.holder("r").orElseThrow().name()).isEqualTo("client-a");
            }
            assertThat(waiter).isNotDone();
            held.release();
            FencedLease next = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            assertThat(a.holder("r").orElseThrow().fencingToken()).hasValue(next.fencingToken());
            next.release();
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void holderReadsTheRowUntilItsReleaseOrItsEndAndTakesNothing(Engine engine) throws Exception {
        JdbcLock a = setUp(engine);
        JdbcLock b = lock("client-b");
        JdbcLock observer = lock("observer");
        assertThat(observer.holder("r")).as("no row yet").isEmpty();

        FencedLease held = a.acquire("r", TTL, Duration.ZERO);
        assertThat(observer.holder("r")).contains(new LockHolder("client-a", OptionalLong.of(held.fencingToken())));
        assertThat(b.tryAcquire("r", TTL)).as("still held").isEmpty();
        held.release();
        assertThat(observer.holder("r")).as("released").isEmpty();

        FencedLease next = b.acquire("r", TTL, Duration.ZERO); // the read took nothing
        assertThat(observer.holder("r")).contains(new LockHolder("client-b", OptionalLong.of(next.fencingToken())));
        expireNow("r"); // as if its renewals had stopped a TTL ago
        assertThat(observer.holder("r")).as("ended by the database's clock").isEmpty();
        FencedLease third = a.acquire("r", TTL, Duration.ZERO);
        assertThat(observer.holder("r").orElseThrow().fencingToken()).hasValue(third.fencingToken());
        third.release();
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void holderOnAMissingTableSaysWhatFailed(Engine engine) {
        setUp(engine);
        JdbcLock nowhere = lock(JdbcLock.builder().dataSource(database).table("no_such_table"));
        assertThatThrownBy(() -> nowhere.holder("r"))
                .isInstanceOf(QuorumlockException.class)
                .hasMessageContaining("could not tell who holds 'r'")
                .hasMessageContaining("no_such_table");
    }

    /** A holder that stopped renewing (a crash) is replaced once its row expires by the database's clock. */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aRowThatExpiredByTheDatabasesClockIsTakenAndItsHolderLosesTheLease(Engine engine) throws Exception {
        JdbcLock a = setUp(engine);
        JdbcLock b = lock("client-b");
        FencedLease crashed = a.acquire("r", TTL, Duration.ZERO);
        expireNow("r"); // as if its renewals had stopped a TTL ago

        FencedLease next = b.acquire("r", TTL, Duration.ZERO);
        assertThat(next.fencingToken()).isGreaterThan(crashed.fencingToken());

        // The old holder's next renewal finds its token gone: lost, at once told
        assertThat(crashed.extend(TTL)).isFalse();
        assertThat(crashed.isValid()).isFalse();
        LeaseLostException loss = crashed.lost().get(5, TimeUnit.SECONDS);
        assertThat(loss).hasMessageContaining("no longer holds this lease's token");
        crashed.release(); // frees nothing: the row is the new holder's
        assertThat(b.tryAcquire("r", TTL)).isEmpty();
        assertThat(holderOf("r")).hasValue("client-b");
        next.release();
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void tokensGrowAcrossADeletedRow(Engine engine) throws Exception {
        JdbcLock a = setUp(engine);
        long before;
        try (FencedLease lease = a.acquire("r", TTL, Duration.ZERO)) {
            before = lease.fencingToken();
        }
        sql("DELETE FROM " + table);
        try (FencedLease lease = a.acquire("r", TTL, Duration.ZERO)) {
            assertThat(lease.fencingToken()).isGreaterThan(before);
        }
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aSequenceResetBehindTheTableIsNamedNotOverrun(Engine engine) throws Exception {
        JdbcLock a = setUp(engine);
        long token;
        try (FencedLease lease = a.acquire("r", TTL, Duration.ZERO)) {
            token = lease.fencingToken();
        }
        sql("UPDATE " + table + " SET token = " + (token + 1_000_000));
        LockUnavailableException refused =
                catchThrowableOfType(LockUnavailableException.class, () -> a.acquire("r", TTL, Duration.ZERO));
        assertThat(refused).hasMessageContaining("newer than the sequence gave");
        assertThat(refused.busy()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void extendsToALongerOrShorterTtlFromNow(Engine engine) throws Exception {
        JdbcLock a = setUp(engine);
        FencedLease lease = a.acquire("r", Duration.ofSeconds(3), Duration.ZERO);

        assertThat(lease.extend(Duration.ofSeconds(60))).isTrue();
        assertThat(lease.remaining()).isGreaterThan(Duration.ofSeconds(50));
        assertThat(millisLeft("r")).isGreaterThan(50_000);

        assertThat(lease.extend(Duration.ofSeconds(20))).isTrue();
        assertThat(lease.remaining()).isLessThanOrEqualTo(Duration.ofSeconds(20));
        assertThat(millisLeft("r")).isBetween(10_000L, 20_000L);

        lease.release();
        assertThatThrownBy(() -> lease.extend(TTL))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("was released");
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aLeaseRenewsItselfPastItsTtl(Engine engine) throws Exception {
        JdbcLock a = setUp(engine);
        Duration ttl = TestTime.scaled(Duration.ofMillis(1500));
        FencedLease lease = a.acquire("r", ttl, Duration.ZERO);
        long end = System.nanoTime() + ttl.multipliedBy(3).toNanos();
        while (System.nanoTime() - end < 0) {
            assertThat(lease.isValid()).isTrue();
            Thread.sleep(50);
        }
        assertThat(lease.lost()).isNotDone();
        assertThat(lock("client-b").tryAcquire("r", ttl)).isEmpty();
        lease.release();
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void withLockInterruptsTheWorkWhenTheLeaseIsLost(Engine engine) {
        JdbcLock a = setUp(engine);
        Duration ttl = TestTime.scaled(Duration.ofSeconds(3)); // the renewal at a third finds the token gone
        LeaseLostException lost = catchThrowableOfType(
                LeaseLostException.class,
                () -> a.runWithLease("r", ttl, Duration.ZERO, lease -> {
                    sql("UPDATE " + table + " SET holder = 'intruder', token = token + 1"); // by hand
                    Thread.sleep(TestTime.scaled(Duration.ofSeconds(30)).toMillis()); // interrupted
                }));
        assertThat(lost).hasMessageContaining("no longer holds this lease's token");
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void oneHolderAtATimeUnderContention(Engine engine) throws Exception {
        setUp(engine);
        int clients = 4;
        int rounds = 15;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                JdbcLock lock = lock("client-" + c);
                runs.add(pool.submit(() -> {
                    for (int i = 0; i < rounds; i++) {
                        lock.runWithLease("hot", TTL, WAIT.multipliedBy(6), lease -> {
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            tokens.add(lease.fencingToken());
                            Thread.sleep(1);
                            inside.decrementAndGet();
                        });
                    }
                    return null;
                }));
            }
            for (Future<?> run : runs) {
                run.get(TestTime.scaled(Duration.ofSeconds(120)).toMillis(), TimeUnit.MILLISECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(overlaps).hasValue(0);
        assertThat(tokens).hasSize(clients * rounds).isSorted().doesNotHaveDuplicates();
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void theFenceInTheSameDatabaseRefusesAnOlderHoldersWrite(Engine engine) throws Exception {
        JdbcLock a = setUp(engine);
        JdbcFence fence = JdbcFence.builder().table("fence_" + table).build();
        try (Connection connection = database.getConnection()) {
            fence.createTable(connection);
        }
        FencedLease paused = a.acquire("stock:sku-42", TTL, Duration.ZERO);
        expireNow("stock:sku-42");
        FencedLease next = lock("client-b").acquire("stock:sku-42", TTL, Duration.ZERO);
        try (Connection tx = database.getConnection()) {
            tx.setAutoCommit(false);
            fence.check(tx, next);
            tx.commit();
            assertThatThrownBy(() -> fence.check(tx, paused)).isInstanceOf(StaleTokenException.class);
            tx.rollback();
        }
        next.release();
    }

    /** A replica, or sessions set read-only: the lock cannot work there, and says so at once. */
    @ParameterizedTest
    @EnumSource(
            value = Engine.class,
            names = {"POSTGRESQL", "MARIADB"})
    void aReadOnlyDatabaseIsAConfigurationErrorThatPointsAtThePrimary(Engine engine) throws Exception {
        setUp(engine);
        DataSource readOnly;
        if (engine == Engine.POSTGRESQL) {
            org.postgresql.ds.PGSimpleDataSource pg = new org.postgresql.ds.PGSimpleDataSource();
            pg.setUrl(postgres.jdbcUrl());
            pg.setUser(postgres.user());
            pg.setOptions("-c default_transaction_read_only=on");
            readOnly = pg;
        } else {
            org.mariadb.jdbc.MariaDbDataSource maria =
                    new org.mariadb.jdbc.MariaDbDataSource(mariadb.jdbcUrl() + "?sessionVariables=tx_read_only=1");
            maria.setUser(mariadb.user());
            maria.setPassword(mariadb.password());
            readOnly = maria;
        }
        JdbcLock replica = lock(JdbcLock.builder().dataSource(readOnly).table(table));
        LockConfigurationException refused = catchThrowableOfType(
                LockConfigurationException.class, () -> replica.acquire("r", TTL, Duration.ofSeconds(5)));
        assertThat(refused).hasMessageContaining("read-only").hasMessageContaining("primary");
        assertThat(refused.attempts()).isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void aMissingTableIsAConfigurationErrorWithTheRemedy(Engine engine) {
        setUp(engine);
        JdbcLock nowhere = lock(JdbcLock.builder().dataSource(database).table("no_such_table"));
        LockConfigurationException missing = catchThrowableOfType(
                LockConfigurationException.class, () -> nowhere.acquire("r", TTL, Duration.ofSeconds(5)));
        assertThat(missing)
                .hasMessageContaining("no_such_table")
                .hasMessageContaining("createTable()")
                .hasMessageContaining("ddl()");
        assertThat(missing.attempts()).isEqualTo(1);
        assertThat(nowhere.ddl(engine.dialect())).hasSize(3);
        assertThat(nowhere.ddl(engine.dialect()).get(0)).contains("no_such_table_token");
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void theListenerHearsTheLeasesLife(Engine engine) throws Exception {
        setUp(engine);
        List<String> heard = new CopyOnWriteArrayList<>();
        LockListener listener = new LockListener() {
            @Override
            public void acquired(String backend, String resource, Duration took, int votes, int nodes) {
                heard.add(backend + " acquired " + resource);
            }

            @Override
            public void busy(String backend, String resource, Duration took) {
                heard.add(backend + " busy " + resource);
            }

            @Override
            public void extended(String backend, String resource, Duration took, boolean held) {
                heard.add(backend + " extended " + resource + " " + held);
            }

            @Override
            public void released(String backend, String resource, Duration held) {
                heard.add(backend + " released " + resource);
            }

            @Override
            public void lost(String backend, String resource, String reason) {
                heard.add(backend + " lost " + resource);
            }
        };
        JdbcLock a = lock(
                JdbcLock.builder().dataSource(database).table(table).holder("a").listener(listener));
        FencedLease lease = a.acquire("r", TTL, Duration.ZERO);
        assertThat(a.tryAcquire("r", TTL)).isEmpty();
        lease.extend(TTL);
        lease.release();
        FencedLease second = a.acquire("r", TTL, Duration.ZERO);
        sql("UPDATE " + table + " SET holder = 'intruder', token = token + 1");
        second.extend(TTL);
        TestTime.await(Duration.ofSeconds(5), () -> heard.contains("jdbc lost r"), "the loss to be told");
        assertThat(heard.subList(0, 5))
                .containsExactly(
                        "jdbc acquired r", "jdbc busy r", "jdbc extended r true", "jdbc released r", "jdbc acquired r");
        assertThat(heard.subList(5, heard.size())).containsExactlyInAnyOrder("jdbc extended r false", "jdbc lost r");
    }

    @ParameterizedTest
    @EnumSource(Engine.class)
    void closeEndsTheLeasesAsLostAndFreesTheirRows(Engine engine) throws Exception {
        JdbcLock a = setUp(engine);
        FencedLease lease = a.acquire("r", TTL, Duration.ZERO);
        a.close();
        assertThat(lease.lost()).isDone();
        assertThat(lease.isValid()).isFalse();
        assertThat(holderOf("r")).isEmpty();
        assertThatThrownBy(() -> a.acquire("r", TTL, Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        assertThat(lock("client-b").tryAcquire("r", TTL)).isPresent();
    }

    /** A name with a NUL character is refused before anything is sent, on every database alike. */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aNameWithANulCharacterIsRefusedAtOnce(Engine engine) {
        JdbcLock lock = setUp(engine);
        String name = "stock:\u0000sku-42";
        long start = System.nanoTime();
        List<IllegalSettingException> refusals = Arrays.asList(
                catchThrowableOfType(IllegalSettingException.class, () -> lock.tryAcquire(name, TTL)),
                catchThrowableOfType(
                        IllegalSettingException.class, () -> lock.acquire(name, TTL, Duration.ofSeconds(5))),
                catchThrowableOfType(IllegalSettingException.class, () -> lock.holder(name)));

        assertThat(refusals).allSatisfy(refused -> {
            assertThat(refused.setting()).isEqualTo("resource");
            assertThat(refused).hasMessageContaining("NUL").hasMessageContaining("'stock:?sku-42'");
        });
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .isLessThan(TestTime.scaled(Duration.ofSeconds(2)).toMillis());
    }

    /**
     * A resource column wider than the database can index is refused by name: PostgreSQL's btree
     * entry holds 2692 bytes of a name (897 Java characters of 3 bytes), MariaDB's key 3072 bytes
     * (768 characters of utf8mb4). H2 takes the name. A name as long as the limit is granted.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aResourceColumnTooWideForTheIndexIsRefusedByName(Engine engine) {
        setUp(engine);
        JdbcLock wide = lock(
                JdbcLock.builder().dataSource(database).table(table + "_wide").maxResourceLength(5000));
        String name = threeByteCharacters(4000);
        if (engine == Engine.H2) {
            wide.createTable();
            wide.tryAcquire(name, TTL).orElseThrow().release();
            return;
        }
        int limit = engine == Engine.POSTGRESQL ? 897 : 768;
        IllegalSettingException refused = catchThrowableOfType(IllegalSettingException.class, () -> {
            wide.createTable();
            wide.tryAcquire(name, TTL);
        });
        assertThat(refused).isNotNull();
        assertThat(refused.setting()).isEqualTo("maxResourceLength");
        assertThat(refused).hasMessageContaining("at most " + limit).hasMessageContaining("5000");
        assertThat(catchThrowableOfType(
                                IllegalSettingException.class,
                                () -> JdbcLock.builder()
                                        .dataSource(database)
                                        .dialect(engine.dialect())
                                        .maxResourceLength(limit + 1)
                                        .build())
                        .setting())
                .isEqualTo("maxResourceLength");
        assertThat(catchThrowableOfType(IllegalSettingException.class, () -> wide.ddl(engine.dialect())))
                .hasMessageContaining("at most " + limit);

        JdbcLock widest = lock(
                JdbcLock.builder().dataSource(database).table(table + "_widest").maxResourceLength(limit));
        widest.createTable();
        widest.tryAcquire(threeByteCharacters(limit), TTL).orElseThrow().release();
    }

    /**
     * A name the table's column cannot hold (the column narrower than maxResourceLength) is a data
     * error of the database: refused at once as a configuration error, not tried again.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aNameTheColumnCannotHoldIsAConfigurationErrorNotRetried(Engine engine) {
        setUp(engine);
        String narrowTable = table + "_narrow";
        lock(JdbcLock.builder().dataSource(database).table(narrowTable).maxResourceLength(8))
                .createTable();
        JdbcLock lock = lock(JdbcLock.builder().dataSource(database).table(narrowTable));
        String name = "stock:sku-4242";

        long start = System.nanoTime();
        LockConfigurationException once =
                catchThrowableOfType(LockConfigurationException.class, () -> lock.tryAcquire(name, TTL));
        LockConfigurationException waited = catchThrowableOfType(
                LockConfigurationException.class, () -> lock.acquire(name, TTL, Duration.ofSeconds(5)));

        assertThat(once).isNotNull().hasMessageContaining("stock:sku-4242");
        assertThat(once.lastAttempt())
                .singleElement()
                .satisfies(answer -> assertThat(answer.kind()).isEqualTo(ServerAnswer.Kind.MISCONFIGURED));
        assertThat(waited).isNotNull();
        assertThat(waited.attempts()).isEqualTo(1);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .isLessThan(TestTime.scaled(Duration.ofSeconds(3)).toMillis());
    }

    /**
     * A TTL that a grant cannot fit in is refused before anything is sent: the floor is a tenth
     * of the request timeout.
     */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aTtlTooShortToBeGrantedIsRefusedAtOnce(Engine engine) {
        setUp(engine);
        JdbcLock lock =
                lock(JdbcLock.builder().dataSource(database).table(table).requestTimeout(Duration.ofSeconds(2)));
        long start = System.nanoTime();
        IllegalSettingException once =
                catchThrowableOfType(IllegalSettingException.class, () -> lock.tryAcquire("r", Duration.ofMillis(5)));
        IllegalSettingException waited = catchThrowableOfType(
                IllegalSettingException.class, () -> lock.acquire("r", Duration.ofMillis(199), Duration.ofSeconds(2)));

        assertThat(Arrays.asList(once, waited)).allSatisfy(refused -> {
            assertThat(refused.setting()).isEqualTo("ttl");
            assertThat(refused).hasMessageContaining("200 ms").hasMessageContaining("requestTimeout");
        });
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .isLessThan(TestTime.scaled(Duration.ofSeconds(1)).toMillis());
        lock.tryAcquire("r", Duration.ofMillis(200)).ifPresent(FencedLease::release); // at the floor: tried
    }

    @Test
    void badArgumentsAndSettingsAreRefusedByName() {
        JdbcLock lock = setUp(Engine.H2);
        assertThat(catchThrowableOfType(IllegalSettingException.class, () -> lock.acquire("", TTL, Duration.ZERO))
                        .setting())
                .isEqualTo("resource");
        assertThat(catchThrowableOfType(
                                IllegalSettingException.class, () -> lock.acquire("x".repeat(256), TTL, Duration.ZERO))
                        .getMessage())
                .contains("maxResourceLength (255)");
        assertThat(catchThrowableOfType(
                                IllegalSettingException.class, () -> lock.acquire("r", Duration.ZERO, Duration.ZERO))
                        .setting())
                .isEqualTo("ttl");
        assertThat(catchThrowableOfType(
                                IllegalSettingException.class,
                                () -> lock.acquire("r", Duration.ofDays(400), Duration.ZERO))
                        .getMessage())
                .contains("at most");
        assertThat(catchThrowableOfType(
                                IllegalSettingException.class, () -> lock.acquire("r", TTL, Duration.ofMillis(-1)))
                        .setting())
                .isEqualTo("maxWait");
        assertThat(catchThrowableOfType(
                                IllegalSettingException.class,
                                () -> JdbcLock.builder().build())
                        .setting())
                .isEqualTo("url");
        assertThat(catchThrowableOfType(
                                IllegalSettingException.class,
                                () -> JdbcLock.builder()
                                        .dataSource(database)
                                        .table("locks; DROP TABLE x")
                                        .build())
                        .setting())
                .isEqualTo("table");
        assertThat(catchThrowableOfType(
                                IllegalSettingException.class,
                                () -> JdbcLock.builder()
                                        .url("postgresql://h/db")
                                        .build())
                        .setting())
                .isEqualTo("url");
        assertThat(catchThrowableOfType(
                                IllegalSettingException.class,
                                () -> JdbcLock.builder()
                                        .dataSource(database)
                                        .holder("")
                                        .build())
                        .setting())
                .isEqualTo("holder");
        assertThat(catchThrowableOfType(
                                IllegalSettingException.class,
                                () -> JdbcLock.builder()
                                        .dataSource(database)
                                        .requestTimeout(Duration.ZERO)
                                        .build())
                        .setting())
                .isEqualTo("requestTimeout");
    }

    @Test
    void aUrlWithAPasswordAndNoDriverIsNamedWithoutThePassword() {
        JdbcLock lock = lock(JdbcLock.builder()
                .url("jdbc:nosuchdb://h:1/db?password=s3cret-in-url")
                .password("s3cret-given")
                .dialect(Dialect.POSTGRESQL));
        LockConfigurationException refused = catchThrowableOfType(
                LockConfigurationException.class, () -> lock.acquire("r", TTL, Duration.ofSeconds(5)));
        assertThat(refused).hasMessageContaining("no JDBC driver");
        assertThat(refused.toString() + refused.lastAttempt() + lock)
                .doesNotContain("s3cret")
                .contains("jdbc:nosuchdb://h:1/db?***");
    }

    // ---- helpers ---------------------------------------------------------------------------------

    /** {@code length} random characters of 3 bytes each in UTF-8, which do not compress. */
    private static String threeByteCharacters(int length) {
        return new java.util.Random(42)
                .ints(length, 0x800, 0xD800)
                .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
                .toString();
    }

    /** {@code source}, counting the connections it gives. */
    private static DataSource counting(DataSource source, AtomicInteger connections) {
        return (DataSource) java.lang.reflect.Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        connections.incrementAndGet();
                    }
                    try {
                        return method.invoke(source, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private void expireNow(String resource) throws SQLException {
        sql("UPDATE " + table + " SET expires_at = " + engine.dialect().now() + " WHERE resource = '" + resource + "'");
    }

    private long millisLeft(String resource) throws SQLException {
        try (Connection connection = database.getConnection();
                PreparedStatement statement = connection.prepareStatement(
                        "SELECT " + engine.dialect().millisLeft() + " FROM " + table + " WHERE resource = ?")) {
            statement.setString(1, resource);
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }

    private Optional<String> holderOf(String resource) throws SQLException {
        try (Connection connection = database.getConnection();
                PreparedStatement statement =
                        connection.prepareStatement("SELECT holder FROM " + table + " WHERE resource = ?")) {
            statement.setString(1, resource);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() ? Optional.ofNullable(rows.getString(1)) : Optional.empty();
            }
        }
    }

    private void sql(String sql) throws SQLException {
        try (Connection connection = database.getConnection();
                Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
