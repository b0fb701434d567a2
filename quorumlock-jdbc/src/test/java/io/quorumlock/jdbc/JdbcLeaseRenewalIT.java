package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.TestTime;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The database lease's renewals on a real PostgreSQL, where a connection or an answer comes late:
 * the lease believes no more than its row, and no less than what it knows.
 */
@Timeout(120)
class JdbcLeaseRenewalIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    private static int tables;

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : open) {
            closeable.close();
        }
        if (postgres.server().isPaused()) {
            postgres.server().resume();
        }
    }

    /**
     * A pool whose next connection comes only after the delay the test sets, as a busy pool's would;
     * it keeps one connection given back open and hands it out again unchecked, as a pool does
     * between its idle checks.
     */
    private static final class SlowPool implements DataSource, AutoCloseable {
        final PGSimpleDataSource real = new PGSimpleDataSource();
        final AtomicLong nextDelayNanos = new AtomicLong();
        final java.util.concurrent.atomic.AtomicReference<Connection> idle =
                new java.util.concurrent.atomic.AtomicReference<>();

        SlowPool() {
            real.setURL(postgres.jdbcUrl());
            real.setUser(postgres.user());
        }

        @Override
        public Connection getConnection() throws SQLException {
            long delay = nextDelayNanos.getAndSet(0);
            if (delay > 0) {
                try {
                    Thread.sleep(Duration.ofNanos(delay).toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SQLException("interrupted", e);
                }
            }
            Connection kept = idle.getAndSet(null);
            return pooled(kept != null && !kept.isClosed() ? kept : real.getConnection());
        }

        /** {@code connection}, whose {@code close()} gives it back to the pool if it is still open. */
        private Connection pooled(Connection connection) {
            java.util.concurrent.atomic.AtomicBoolean given = new java.util.concurrent.atomic.AtomicBoolean();
            return (Connection) java.lang.reflect.Proxy.newProxyInstance(
                    Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                        if (method.getName().equals("close")) {
                            if (!given.getAndSet(true)
                                    && (connection.isClosed()
                                            || !connection.getAutoCommit()
                                            || !idle.compareAndSet(null, connection))) {
                                connection.close();
                            }
                            return null;
                        }
                        if (method.getName().equals("isClosed")) {
                            return given.get() || connection.isClosed();
                        }
                        try {
                            return method.invoke(connection, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            return getConnection();
        }

        @Override
        public void close() throws SQLException {
            Connection kept = idle.getAndSet(null);
            if (kept != null) {
                kept.close();
            }
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {}

        @Override
        public void setLoginTimeout(int seconds) {}

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }

    private JdbcLock lock(DataSource source, Duration requestTimeout) {
        String table = "locks_renewal_" + (++tables);
        JdbcLock lock = JdbcLock.builder()
                .dataSource(source)
                .table(table)
                .holder("holder")
                .requestTimeout(requestTimeout)
                .build();
        open.add(lock);
        if (source instanceof AutoCloseable pool) {
            open.add(pool); // after the lock, which gives its connections back first
        }
        lock.createTable();
        return lock;
    }

    @Test
    void aLeaseGrantedLateInItsTtlRenewsAtOnceAndIsNeitherDoubtedNorLost() {
        SlowPool pool = new SlowPool();
        // The renewal sent at once after a grant that took 13/30 of the TTL must be answered within
        // 7/30 of it (0.7 s of 3 s) to come before the doubt; a full build beside two CPU burners
        // once took longer. The TTL grows with the machine's load, and every time below with it.
        Duration ttl = TestTime.scaledByLoad(Duration.ofSeconds(3));
        JdbcLock lock = lock(pool, ttl);
        lock.tryAcquire("warm", ttl).orElseThrow().release();
        TestTime.await(Duration.ofSeconds(5), () -> !lock.keepsConnection(), "the release's connection given back");
        pool.nextDelayNanos.set(ttl.multipliedBy(13).dividedBy(30).toNanos()); // 1.3 s of 3 s

        FencedLease lease = lock.acquire("r", ttl, Duration.ZERO);
        long granted = System.nanoTime();

        // A whole TTL after the grant, the row has been renewed and the lease never doubted.
        TestTime.await(ttl.multipliedBy(2), () -> System.nanoTime() - granted > ttl.toNanos(), "a TTL to pass");
        assertThat(lease.inDoubt())
                .as("the lease's doubt, the database answering everything")
                .isNotDone();
        assertThat(lease.lost()).isNotDone();
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.remaining()).isGreaterThan(ttl.dividedBy(3));
        lease.release();
    }

    @Test
    void anExtensionThatCouldNotReachTheDatabaseChangesNothing() {
        SlowPool pool = new SlowPool();
        Duration requestTimeout = TestTime.scaled(Duration.ofSeconds(1));
        Duration ttl = Duration.ofSeconds(30);
        JdbcLock lock = lock(pool, requestTimeout);
        FencedLease lease = lock.acquire("r", ttl, Duration.ZERO);
        pool.nextDelayNanos.set(requestTimeout.multipliedBy(2).toNanos()); // the connection comes too late

        assertThat(lease.extend(Duration.ofSeconds(3))).isFalse();
        long after = System.nanoTime();

        assertThat(lease.remaining())
                .as("what the lease believes after nothing was sent")
                .isGreaterThan(ttl.dividedBy(2));
        Duration watch = Duration.ofSeconds(5);
        TestTime.await(watch.multipliedBy(2), () -> System.nanoTime() - after > watch.toNanos(), "5 s to pass");
        assertThat(lease.lost()).isNotDone();
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.remaining()).isGreaterThan(ttl.dividedBy(3));
        lease.release();
    }

    @Test
    void anExtensionLeftUnansweredShortensTheLeaseAndTheRenewalsKeepItInStep() {
        Duration requestTimeout = TestTime.scaled(Duration.ofMillis(700));
        Duration ttl = Duration.ofSeconds(30);
        Duration shorter = TestTime.scaled(Duration.ofSeconds(3));
        // One connection kept open and handed out unchecked, however long the machine takes to get
        // to the extension: the UPDATE goes out on it.
        SlowPool pool = new SlowPool();
        JdbcLock lock = lock(pool, requestTimeout);
        FencedLease lease = lock.acquire("r", ttl, Duration.ZERO);

        postgres.server().pause(); // the UPDATE goes out and is not answered
        boolean extended;
        try {
            extended = lease.extend(shorter);
        } finally {
            postgres.server().resume();
        }
        assertThat(extended).isFalse();
        assertThat(lease.remaining())
                .as("what the unanswered extension may have set")
                .isLessThanOrEqualTo(shorter);

        // The renewals follow the shortened end: three of those shorter TTLs later, the lease holds.
        long after = System.nanoTime();
        TestTime.await(
                shorter.multipliedBy(6),
                () -> System.nanoTime() - after > shorter.multipliedBy(3).toNanos(),
                "3 TTLs");
        assertThat(lease.lost()).isNotDone();
        assertThat(lease.isValid()).isTrue();
        lease.release();
    }

    @Test
    void aLockRunsOnTheClockAndTheTimersItsBuilderIsGiven() {
        java.util.concurrent.atomic.AtomicLong ahead = new java.util.concurrent.atomic.AtomicLong();
        io.quorumlock.internal.Ticker clock = () -> System.nanoTime() + ahead.get();
        List<String> renewedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
        JdbcLock lock = JdbcLock.builder()
                .url(postgres.jdbcUrl())
                .user(postgres.user())
                .table("locks_renewal_" + (++tables))
                .ticker(clock)
                .timers(io.quorumlock.internal.Timers.threads("given", 1))
                .listener(new io.quorumlock.LockListener() {
                    @Override
                    public void extended(String backend, String resource, Duration took, boolean held) {
                        renewedOn.add(Thread.currentThread().getName());
                    }
                })
                .build();
        open.add(lock);
        lock.createTable();

        FencedLease timed = lock.acquire("by-the-clock", Duration.ofSeconds(30), Duration.ZERO);
        ahead.set(Duration.ofSeconds(31).toNanos());
        assertThat(timed.isValid())
                .as("a 30 s lease, 31 s later by the lock's clock")
                .isFalse();
        ahead.set(0);
        timed.release();

        Duration ttl = TestTime.scaled(Duration.ofSeconds(1));
        FencedLease kept = lock.acquire("kept", ttl, Duration.ZERO);
        TestTime.await(ttl.multipliedBy(3), () -> !renewedOn.isEmpty(), "a renewal");
        kept.release();
        assertThat(renewedOn).allMatch(name -> name.startsWith("quorumlock-given-worker"));
    }
}
