package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.RetryPolicy;
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
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * What a release costs and whom it wakes: on PostgreSQL it notifies only a row a waiter marked,
 * and on MariaDB it ends the server-side sleep of the waiting lock's connection. The waiters here
 * retry only every 30 s and recheck every minute, so a grant within the test's bound was a wake-up.
 */
class JdbcLockWakeIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @RegisterExtension
    static final MariaDbServerExtension mariadb = new MariaDbServerExtension();

    private static final AtomicInteger tables = new AtomicInteger();
    private static final Duration TTL = Duration.ofSeconds(60);
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(10));

    private final List<JdbcLock> locks = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private DataSource database;
    private String table;

    private JdbcLock setUp(Engine engine) {
        database = engine.dataSource(postgres, mariadb);
        table = "wakes_" + tables.incrementAndGet();
        JdbcLock lock = lock("client-a", RetryPolicy.DEFAULT, Duration.ofSeconds(1));
        lock.createTable();
        return lock;
    }

    private JdbcLock lock(String holder, RetryPolicy retry, Duration recheck) {
        JdbcLock lock = JdbcLock.builder()
                .dataSource(database)
                .table(table)
                .holder(holder)
                .retry(retry)
                .recheck(recheck)
                .build();
        locks.add(lock);
        return lock;
    }

    /** A lock that retries only every 30 s, and rechecks while it can be woken only every minute. */
    private JdbcLock slowWaiter() {
        return lock(
                "client-b",
                RetryPolicy.jitteredBackoff(Duration.ofSeconds(30), Duration.ofSeconds(30)),
                Duration.ofMinutes(1));
    }

    @AfterEach
    void closeAll() {
        threads.shutdownNow();
        locks.forEach(JdbcLock::close);
    }

    @Test
    void onPostgresOnlyAReleaseSomeoneWaitsForNotifies() throws Exception {
        JdbcLock a = setUp(Engine.POSTGRESQL);
        try (Connection listening = database.getConnection();
                Statement sql = listening.createStatement()) {
            sql.execute("LISTEN " + PgListener.channel(table));
            FencedLease sentinel = a.acquire("sentinel", TTL, Duration.ZERO);
            sql.execute("UPDATE " + table + " SET wanted_until = clock_timestamp() + INTERVAL '1 minute'"
                    + " WHERE resource = 'sentinel'"); // as a waiter's refusal marks it

            a.acquire("alone", TTL, Duration.ZERO).release(); // nobody waits
            sentinel.release(); // committed after it: its notification would come after the other's

            assertThat(notifications(listening.unwrap(PGConnection.class))).containsExactly("sentinel");
        }
    }

    @Test
    void onPostgresAReleaseWakesAWaiterOfAnotherClientAtOnce() throws Exception {
        JdbcLock a = setUp(Engine.POSTGRESQL);
        JdbcLock b = slowWaiter();
        try (Connection listening = database.getConnection();
                Statement sql = listening.createStatement()) {
            sql.execute("LISTEN " + PgListener.channel(table));
            FencedLease held = a.acquire("r", TTL, Duration.ZERO);
            Future<FencedLease> waiter = threads.submit(() -> b.acquire("r", TTL, TTL));
            TestTime.await(
                    Duration.ofSeconds(10),
                    () -> b.listening() && b.waiting("r") == 1 && wanted("r"),
                    "the waiter to listen and mark the row");

            FencedLease next = handOn(held, waiter);
            assertThat(notifications(listening.unwrap(PGConnection.class))).containsExactly("r");
            next.release(); // notifies too: the waiter's mark lasts two rechecks
        }
    }

    @Test
    void onMariaDbAReleaseEndsTheWaitOfAWaiterOfAnotherClient() throws Exception {
        JdbcLock a = setUp(Engine.MARIADB);
        JdbcLock b = slowWaiter();
        FencedLease held = a.acquire("r", TTL, Duration.ZERO);
        Future<FencedLease> waiter = threads.submit(() -> b.acquire("r", TTL, TTL));
        TestTime.await(
                Duration.ofSeconds(10),
                () -> b.listening("r") && b.waiting("r") == 1,
                "the waiter's connection to hold a wake-up slot of r");

        handOn(held, waiter).release();
    }

    /**
     * The waiting lock's connection dies (as with its process): its wake-up slots end with it, the
     * table holds nothing of it, and once it waits again a release still wakes it.
     */
    @Test
    void onMariaDbAWaiterWhoseConnectionDiedLeavesNothingBehind() throws Exception {
        JdbcLock a = setUp(Engine.MARIADB);
        JdbcLock b = slowWaiter();
        FencedLease held = a.acquire("r", TTL, Duration.ZERO);
        Future<FencedLease> waiter = threads.submit(() -> b.acquire("r", TTL, TTL));
        TestTime.await(Duration.ofSeconds(10), () -> b.listening("r"), "the waiter to hold a wake-up slot");
        long connection = slotHolders("r").get(0);

        sql("KILL " + connection);

        TestTime.await(Duration.ofSeconds(10), () -> slotHolders("r").isEmpty(), "the slot to end with it");
        assertThat(a.holder("r").orElseThrow().fencingToken()).hasValue(held.fencingToken());
        TestTime.await(
                Duration.ofSeconds(20),
                () -> b.listening("r") && !slotHolders("r").contains(connection),
                "the waiter to wait again, on a connection of its own");
        handOn(held, waiter).release();
    }

    /** Releases {@code held}: the waiter is granted within the test's bound, with a newer token. */
    private static FencedLease handOn(FencedLease held, Future<FencedLease> waiter) throws Exception {
        held.release();
        FencedLease next = waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        return next;
    }

    /** The notifications on {@code pg}'s channel, read until one came and then for a moment longer. */
    private static List<String> notifications(PGConnection pg) throws SQLException {
        List<String> heard = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (heard.isEmpty() && System.nanoTime() - deadline < 0) {
            for (PGNotification notification : pg.getNotifications(250)) {
                heard.add(notification.getParameter());
            }
        }
        for (PGNotification notification : pg.getNotifications(250)) {
            heard.add(notification.getParameter());
        }
        return heard;
    }

    /** Whether a waiter marked {@code resource}'s row as wanted. */
    private boolean wanted(String resource) {
        try (Connection connection = database.getConnection();
                PreparedStatement read = connection.prepareStatement(
                        "SELECT wanted_until > clock_timestamp() FROM " + table + " WHERE resource = ?")) {
            read.setString(1, resource);
            try (ResultSet rows = read.executeQuery()) {
                return rows.next() && rows.getBoolean(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The MariaDB connections that hold a wake-up slot of {@code resource}. */
    private List<Long> slotHolders(String resource) {
        List<Long> holders = new ArrayList<>();
        try (Connection connection = database.getConnection();
                PreparedStatement read = connection.prepareStatement("SELECT IS_USED_LOCK(?)")) {
            for (String slot : MariaDbWaker.slots(table, resource)) {
                read.setString(1, slot);
                try (ResultSet rows = read.executeQuery()) {
                    rows.next();
                    long id = rows.getLong(1);
                    if (!rows.wasNull()) {
                        holders.add(id);
                    }
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return holders;
    }

    private void sql(String statement) throws SQLException {
        try (Connection connection = database.getConnection();
                Statement sql = connection.createStatement()) {
            sql.execute(statement);
        }
    }
}
