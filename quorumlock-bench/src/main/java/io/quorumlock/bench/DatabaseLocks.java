package io.quorumlock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.testkit.PostgresServer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * quorumlock's database lock ({@code JdbcLock}) beside ShedLock's {@code JdbcTemplateLockProvider}
 * and Spring Integration's {@code JdbcLockRegistry}, on one PostgreSQL that this starts for them
 * (the test kit's {@link PostgresServer}), through one HikariCP pool of {@value #POOL_SIZE}
 * connections that all three share. Each library gets its own table from its documented
 * PostgreSQL schema, and is set up as its documentation shows, with its defaults. Then, per
 * library: one thread's cycles (acquire, then release, a free resource) for a fixed time after a
 * warm-up; then the hand-offs from a holder to a waiter already waiting ({@link HandOff}). When
 * PostgreSQL cannot run here, the rows are skipped with the reason.
 */
final class DatabaseLocks {

    /** The pool all three libraries share: enough for a holder and a waiter at once, with room. */
    static final int POOL_SIZE = 4;

    /**
     * How often ShedLock's waiter tries again: ShedLock has no waiting acquire, so a waiter calls
     * {@code lock(...)} in a loop and sleeps this long after each refusal (Spring Integration's
     * default pause, {@code idleBetweenTries}).
     */
    static final Duration SHEDLOCK_POLL = Duration.ofMillis(100);

    /** ShedLock's table for PostgreSQL, as its README gives it. */
    static final String SHEDLOCK_DDL = "CREATE TABLE shedlock (name VARCHAR(64) NOT NULL,"
            + " lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL,"
            + " PRIMARY KEY (name))";

    /** Spring Integration's lock table, as its {@code schema-postgresql.sql} gives it. */
    static final String INT_LOCK_DDL = "CREATE TABLE INT_LOCK (LOCK_KEY CHAR(36) NOT NULL,"
            + " REGION VARCHAR(100) NOT NULL, CLIENT_ID CHAR(36), CREATED_DATE TIMESTAMP NOT NULL,"
            + " EXPIRED_AFTER TIMESTAMP NOT NULL, CONSTRAINT INT_LOCK_PK PRIMARY KEY (LOCK_KEY, REGION))";

    private static final AtomicInteger CLIENTS = new AtomicInteger();

    /** One library of the comparison: its name, how a client of its own is made, what a row says. */
    private record Library(String name, Function<DataSource, HandOff.Client> client, String cycle, String waiting) {}

    private static final List<Library> LIBRARIES = List.of(
            new Library(
                    Plan.QUORUMLOCK,
                    DatabaseLocks::jdbcLock,
                    "JdbcLock: tryAcquire + release",
                    "acquire(resource, ttl, " + HandOff.MAX_WAIT.toSeconds()
                            + " s): woken by the release (LISTEN/NOTIFY)"),
            new Library(
                    Plan.SHEDLOCK,
                    DatabaseLocks::shedLock,
                    "JdbcTemplateLockProvider usingDbTime: lock + unlock",
                    "no waiting acquire: lock(...) in a loop, " + SHEDLOCK_POLL.toMillis() + " ms sleep after a"
                            + " refusal"),
            new Library(
                    Plan.SPRING_INTEGRATION,
                    DatabaseLocks::springIntegration,
                    "JdbcLockRegistry: obtain(key).tryLock() + unlock()",
                    "tryLock(" + HandOff.MAX_WAIT.toSeconds() + " s): default idleBetweenTries, 100 ms"));

    private DatabaseLocks() {}

    /** The step's label. */
    static String label() {
        return Plan.DB_CYCLE + ", " + Plan.DB_HAND_OFF + " / "
                + String.join(", ", LIBRARIES.stream().map(Library::name).toList());
    }

    /** The pool, for the results file. */
    static String poolText() {
        return "HikariCP, " + POOL_SIZE + " connections, shared by the three libraries";
    }

    /** Runs the cases, adding each result to {@code results} as soon as it is measured. */
    static void run(Plan plan, Progress progress, Consumer<CaseResult> results) {
        if (!PostgresServer.available()) {
            String why = PostgresServer.unavailableReason().orElse("PostgreSQL is not available");
            for (String caseId : List.of(Plan.DB_CYCLE, Plan.DB_HAND_OFF)) {
                for (Library library : LIBRARIES) {
                    results.accept(
                            CaseResult.skipped(caseId, library.name(), 1, caseId.equals(Plan.DB_CYCLE) ? 1 : 2, why));
                }
            }
            return;
        }
        List<CaseResult> measured = new ArrayList<>();
        Consumer<CaseResult> out = r -> {
            measured.add(r);
            results.accept(r);
        };
        try (PostgresServer server = PostgresServer.start();
                HikariDataSource pool = pool(server)) {
            createTables(pool);
            String version = server.version();
            for (Library library : LIBRARIES) {
                out.accept(cycles(library, pool, version, plan));
            }
            for (Library library : LIBRARIES) {
                CaseResult handOff = HandOff.run(
                        Plan.DB_HAND_OFF,
                        library.name(),
                        1,
                        () -> library.client().apply(pool),
                        library.waiting(),
                        plan.handOffs(),
                        progress);
                handOff.extra().put("postgresql", version);
                out.accept(handOff);
            }
        } catch (RuntimeException e) {
            // PostgreSQL did not start, or a table could not be made: every row not measured says why
            for (String caseId : List.of(Plan.DB_CYCLE, Plan.DB_HAND_OFF)) {
                for (Library library : LIBRARIES) {
                    if (measured.stream().noneMatch(r -> r.is(caseId, library.name()))) {
                        results.accept(CaseResult.failed(
                                caseId, library.name(), 1, caseId.equals(Plan.DB_CYCLE) ? 1 : 2, firstLine(e)));
                    }
                }
            }
        }
    }

    private static CaseResult cycles(Library library, DataSource pool, String version, Plan plan) {
        HandOff.Client client;
        try {
            client = library.client().apply(pool);
        } catch (RuntimeException e) {
            return CaseResult.failed(Plan.DB_CYCLE, library.name(), 1, 1, e.toString());
        }
        try (client) {
            CaseResult result = ManyCallers.measure(
                    Plan.DB_CYCLE,
                    library.name(),
                    1,
                    List.of(resource -> {
                        if (!client.tryLock(resource)) {
                            return false;
                        }
                        client.unlock();
                        return true;
                    }),
                    1,
                    plan.contentionWarmup(),
                    plan.databaseTime());
            result.extra().put("calls", library.cycle());
            result.extra().put("postgresql", version);
            return result;
        }
    }

    private static HikariDataSource pool(PostgresServer server) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("bench-postgresql");
        config.setJdbcUrl(server.jdbcUrl());
        config.setUsername(server.user());
        config.setMaximumPoolSize(POOL_SIZE);
        config.setMinimumIdle(POOL_SIZE);
        config.setConnectionTimeout(TimeUnit.SECONDS.toMillis(5));
        return new HikariDataSource(config);
    }

    /** Each library's table: JdbcLock's by its own {@code createTable()}, the others' from their schema. */
    private static void createTables(DataSource pool) {
        try (JdbcLock lock = JdbcLock.builder().dataSource(pool).build()) {
            lock.createTable();
        }
        try (Connection connection = pool.getConnection();
                Statement statement = connection.createStatement()) {
            statement.execute(SHEDLOCK_DDL);
            statement.execute(INT_LOCK_DDL);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create the ShedLock and Spring Integration tables: " + e, e);
        }
    }

    /** quorumlock's {@code JdbcLock}, with its defaults, named as a service instance of its own. */
    private static HandOff.Client jdbcLock(DataSource pool) {
        JdbcLock lock = JdbcLock.builder()
                .dataSource(pool)
                .holder("bench-" + CLIENTS.incrementAndGet())
                .build();
        return HandOff.quorumlock(lock);
    }

    /**
     * ShedLock's {@code JdbcTemplateLockProvider} as its README sets it up for PostgreSQL ({@code
     * usingDbTime()}: the database's clock), with {@code lockAtLeastFor} zero, so that an unlock
     * frees the lock at once.
     */
    private static HandOff.Client shedLock(DataSource pool) {
        JdbcTemplateLockProvider provider =
                new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                        .withJdbcTemplate(new JdbcTemplate(pool))
                        .withLockedByValue("bench-" + CLIENTS.incrementAndGet())
                        .usingDbTime()
                        .build());
        return new HandOff.Client() {
            private SimpleLock held;

            @Override
            public boolean tryLock(String resource) {
                held = provider.lock(new LockConfiguration(ClockProvider.now(), resource, Trial.TTL, Duration.ZERO))
                        .orElse(null);
                return held != null;
            }

            @Override
            public boolean await(String resource, Duration maxWait) throws InterruptedException {
                long deadline = System.nanoTime() + maxWait.toNanos();
                while (!tryLock(resource)) {
                    if (System.nanoTime() - deadline >= 0) {
                        return false;
                    }
                    Thread.sleep(SHEDLOCK_POLL.toMillis());
                }
                return true;
            }

            @Override
            public void unlock() {
                held.unlock();
                held = null;
            }

            @Override
            public void close() {
                // the provider holds nothing but the pool, which is not its own
            }
        };
    }

    /**
     * Spring Integration's {@code JdbcLockRegistry} over a {@code DefaultLockRepository} of its own
     * (a client id of its own, as each service instance has), set up outside an application context
     * as the context would: a transaction manager on the pool, then its initialization callbacks.
     */
    private static HandOff.Client springIntegration(DataSource pool) {
        DefaultLockRepository repository = new DefaultLockRepository(pool);
        repository.setTransactionManager(new DataSourceTransactionManager(pool));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        repository.start();
        JdbcLockRegistry registry = new JdbcLockRegistry(repository, Trial.TTL);
        // closing the repository deletes this client's rows, if any are left
        return HandOff.locks(registry::obtain, repository::close);
    }

    /** The settings of the database cases, for the results file. */
    static Map<String, Object> settings() {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("pool", poolText());
        settings.put("shedlock_poll_ms", SHEDLOCK_POLL.toMillis());
        settings.put("hand_off", HandOff.settingsText());
        return settings;
    }

    private static String firstLine(RuntimeException e) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }
}
