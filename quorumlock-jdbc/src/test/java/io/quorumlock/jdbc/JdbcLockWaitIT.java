package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.RetryPolicy;
import io.quorumlock.testkit.MariaDbServerExtension;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.TestTime;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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

/**
 * How a waiter of the database lock learns that the lock is free: woken by the release on
 * PostgreSQL ({@code LISTEN}/{@code NOTIFY}), in the order the threads came, and on every
 * database when the holder's row ends. The waiters here would otherwise retry only every 30 s or
 * more, so each grant within the test's bound was a wake-up.
 */
class JdbcLockWaitIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @RegisterExtension
    static final MariaDbServerExtension mariadb = new MariaDbServerExtension();

    private static final AtomicInteger tables = new AtomicInteger();
    private static final Duration TTL = Duration.ofSeconds(60);
    /** Longer than any test waits: a waiter that polled would not come back in time. */
    private static final RetryPolicy SLOW_POLL =
            RetryPolicy.jitteredBackoff(Duration.ofSeconds(30), Duration.ofSeconds(30));

    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(10));

    private final List<JdbcLock> locks = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private DataSource database;
    private String table;
    private Engine engine;

    private JdbcLock setUp(Engine engine) {
        this.engine = engine;
        this.database = engine.dataSource(postgres, mariadb);
        this.table = "waits_" + tables.incrementAndGet();
        JdbcLock lock = lock(JdbcLock.builder().dataSource(database).holder("client-a"));
        lock.createTable();
        return lock;
    }

    private JdbcLock lock(JdbcLockBuilder builder) {
        JdbcLock lock = builder.table(table).build();
        locks.add(lock);
        return lock;
    }

    /** A lock that retries only every 30 s, and rechecks while listening only every minute. */
    private JdbcLock slowWaiter(DataSource source) {
        return lock(JdbcLock.builder()
                .dataSource(source)
                .holder("client-b")
                .retry(SLOW_POLL)
                .recheck(Duration.ofMinutes(1)));
    }

    /**
     * Starts {@code lock.acquire(resource)} on a thread and waits until it listens and has tried
     * once more under the LISTEN (its first attempt's connection and that one's closed).
     */
    private Future<FencedLease> listeningWaiter(JdbcLock lock, Connections counted, String resource) {
        Future<FencedLease> waiter = threads.submit(() -> lock.acquire(resource, TTL, TTL));
        TestTime.await(
                Duration.ofSeconds(10),
                () -> lock.listening() && counted.closed.get() >= 2,
                "the waiter to listen and try again");
        return waiter;
    }

    @AfterEach
    void closeAll() {
        threads.shutdownNow();
        locks.forEach(JdbcLock::close);
    }

    @Test
    void aReleaseOnPostgresWakesTheWaiterAtOnce() throws Exception {
        JdbcLock a = setUp(Engine.POSTGRESQL);
        Connections counted = new Connections(database);
        JdbcLock b = slowWaiter(counted.source());
        FencedLease held = a.acquire("r", TTL, Duration.ZERO);

        Future<FencedLease> waiter = listeningWaiter(b, counted, "r");
        held.release();

        FencedLease next = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        next.release();
    }

    @Test
    void theThreadsOfOneLockWaitingOnPostgresAreServedInTheOrderTheyCame() throws Exception {
        JdbcLock a = setUp(Engine.POSTGRESQL);
        Connections counted = new Connections(database);
        JdbcLock b = slowWaiter(counted.source());
        FencedLease held = a.acquire("r", TTL, Duration.ZERO);

        List<Integer> served = new CopyOnWriteArrayList<>();
        List<Future<?>> waiters = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            int number = i;
            waiters.add(threads.submit(() -> {
                try (FencedLease lease = b.acquire("r", TTL, TTL)) {
                    served.add(number);
                }
                return null;
            }));
            // each attempt's connection closed; the first waiter also tried again once the listener listened
            TestTime.await(
                    Duration.ofSeconds(10),
                    () -> b.listening() && b.waiting("r") == number && counted.closed.get() >= number + 1,
                    "waiter " + number + " to queue");
        }
        held.release();

        for (Future<?> waiter : waiters) {
            waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(served).containsExactly(1, 2, 3);
    }

    @Test
    void withoutPgjdbcConnectionsTheWaitersPollAndStillGetTheLock() throws Exception {
        JdbcLock a = setUp(Engine.POSTGRESQL);
        JdbcLock b = lock(JdbcLock.builder()
                .dataSource(notUnwrappable(database))
                .holder("client-b")
                .retry(RetryPolicy.jitteredBackoff(Duration.ofMillis(10), Duration.ofMillis(50))));
        FencedLease held = a.acquire("r", TTL, Duration.ZERO);

        Future<FencedLease> waiter = threads.submit(() -> b.acquire("r", TTL, TTL));
        TestTime.await(Duration.ofSeconds(10), () -> b.waiting("r") == 1, "the waiter to queue");
        held.release();

        FencedLease next = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(b.listening()).isFalse();
        next.release();
    }

    @Test
    void theListenerGivesItsConnectionBackOnceNoThreadWaits() throws Exception {
        JdbcLock a = setUp(Engine.POSTGRESQL);
        Connections counted = new Connections(database);
        JdbcLock b = slowWaiter(counted.source());
        FencedLease held = a.acquire("r", TTL, Duration.ZERO);

        Future<FencedLease> waiter = listeningWaiter(b, counted, "r");
        TestTime.await(Duration.ofSeconds(10), () -> counted.open() == 1, "only the listener's connection open");
        held.release();
        waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).release();

        TestTime.await(
                Duration.ofMillis(PgListener.LINGER_MILLIS + 10_000),
                () -> counted.open() == 0 && !b.listening(),
                "the listener to give its connection back");
    }

    /** A holder that stopped renewing: the waiter tries again when its row ends, not at its next poll. */
    @ParameterizedTest
    @EnumSource(Engine.class)
    void aWaiterTriesAgainWhenTheHoldersRowEnds(Engine engine) throws Exception {
        setUp(engine);
        long token;
        try (Connection connection = database.getConnection()) {
            try (PreparedStatement next =
                            connection.prepareStatement(engine.dialect().nextToken(table));
                    ResultSet rows = next.executeQuery()) {
                rows.next();
                token = rows.getLong(1);
            }
            try (PreparedStatement crashed = connection.prepareStatement("INSERT INTO " + table
                    + " (resource, holder, token, expires_at) VALUES ('r', 'crashed', ?, "
                    + engine.dialect().nowPlusMillis() + ")")) {
                crashed.setLong(1, token);
                crashed.setLong(2, 2_000);
                crashed.executeUpdate();
            }
        }
        JdbcLock b = slowWaiter(database);

        FencedLease next = threads.submit(() -> b.acquire("r", TTL, TTL))
                .get(WAIT.plusSeconds(2).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(next.fencingToken()).isGreaterThan(token);
        next.release();
    }

    /** A data source that counts the connections it gave and those closed. */
    private static final class Connections {
        private final DataSource source;
        final AtomicInteger opened = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();

        Connections(DataSource source) {
            this.source = source;
        }

        int open() {
            return opened.get() - closed.get();
        }

        DataSource source() {
            return (DataSource) Proxy.newProxyInstance(
                    DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                        Object result = invoke(source, method, args);
                        if (method.getName().equals("getConnection")) {
                            opened.incrementAndGet();
                            return counting((Connection) result);
                        }
                        return result;
                    });
        }

        private Connection counting(Connection connection) {
            AtomicInteger once = new AtomicInteger();
            return (Connection) Proxy.newProxyInstance(
                    Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                        if (method.getName().equals("close") && once.getAndIncrement() == 0) {
                            closed.incrementAndGet();
                        }
                        return invoke(connection, method, args);
                    });
        }
    }

    /** {@code source}, whose connections cannot be unwrapped to the driver's own (as behind some proxies). */
    private static DataSource notUnwrappable(DataSource source) {
        return (DataSource) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    Object result = invoke(source, method, args);
                    if (!method.getName().equals("getConnection")) {
                        return result;
                    }
                    Connection connection = (Connection) result;
                    return Proxy.newProxyInstance(
                            Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (p, m, a) -> {
                                if (m.getName().equals("unwrap")) {
                                    throw new SQLException("not a wrapper");
                                }
                                if (m.getName().equals("isWrapperFor")) {
                                    return false;
                                }
                                return invoke(connection, m, a);
                            });
                });
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
