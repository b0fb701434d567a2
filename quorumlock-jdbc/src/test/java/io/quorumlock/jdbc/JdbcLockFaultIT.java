package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.FencedLease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.FaultProxy;
import io.quorumlock.testkit.PostgresServer;
import io.quorumlock.testkit.TestTime;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The database lock on a real PostgreSQL behind a fault proxy: a silent partition, a holder cut
 * off from the database, and a restart of the database.
 */
class JdbcLockFaultIT {

    private static PostgresServer server;
    private static int tables;

    private final List<AutoCloseable> open = new ArrayList<>();
    private String table;

    @BeforeAll
    static void startPostgres() {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                PostgresServer.available(), PostgresServer.unavailableReason().orElse(""));
        server = PostgresServer.start();
    }

    @AfterAll
    static void stopPostgres() {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : open) {
            closeable.close();
        }
    }

    private JdbcLock lock(String holder, int port, Duration requestTimeout) {
        JdbcLock lock = JdbcLock.builder()
                .url("jdbc:postgresql://127.0.0.1:" + port + "/postgres")
                .user(server.user())
                .table(table)
                .holder(holder)
                .requestTimeout(requestTimeout)
                .build();
        open.add(lock);
        return lock;
    }

    private FaultProxy proxy() {
        FaultProxy proxy = FaultProxy.start("127.0.0.1", server.port());
        open.add(proxy);
        return proxy;
    }

    private void newTable() {
        table = "locks_fault_" + (++tables);
        lock("setup", server.port(), Duration.ofSeconds(5)).createTable();
    }

    @Test
    void aSilentPartitionEndsTheWaitOnTime() {
        newTable();
        FaultProxy proxy = proxy();
        JdbcLock lock = lock("cut-off", proxy.port(), Duration.ofSeconds(5));
        lock.acquire("warm", Duration.ofSeconds(10), Duration.ZERO).release();
        proxy.partition();

        long start = System.nanoTime();
        LockUnavailableException refused = catchThrowableOfType(
                LockUnavailableException.class,
                () -> lock.acquire("r", Duration.ofSeconds(10), Duration.ofMillis(1500)));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(refused.busy()).isFalse();
        assertThat(refused).hasMessageContaining("timed out");
        // 1.5 s of wait and the 250 ms overrun of a 5 s request timeout; the slack is for a busy machine
        assertThat(tookMillis)
                .isGreaterThanOrEqualTo(1500)
                .isLessThan(1750 + TestTime.scaled(Duration.ofMillis(500)).toMillis());
    }

    @Test
    void holderThrowsWithinTheRequestTimeoutWhenTheDatabaseIsSilent() {
        newTable();
        FaultProxy proxy = proxy();
        JdbcLock lock = lock("observer", proxy.port(), Duration.ofSeconds(1));
        assertThat(lock.holder("r")).isEmpty(); // a warm connection
        proxy.partition();

        long start = System.nanoTime();
        QuorumlockException silent = catchThrowableOfType(QuorumlockException.class, () -> lock.holder("r"));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(silent).hasMessageContaining("could not tell who holds 'r'");
        assertThat(tookMillis)
                .isLessThan(1000 + TestTime.scaled(Duration.ofMillis(1000)).toMillis());
    }

    @Test
    void aHolderCutOffFromTheDatabaseKnowsItLostTheLeaseBeforeAnotherIsGranted() throws Exception {
        newTable();
        FaultProxy proxy = proxy();
        Duration ttl = TestTime.scaled(Duration.ofSeconds(2));
        JdbcLock cutOff = lock("cut-off", proxy.port(), Duration.ofSeconds(1));
        JdbcLock other = lock("other", server.port(), Duration.ofSeconds(5));
        cutOff.acquire("warm", ttl, Duration.ZERO).release(); // a cold connection may take longer than 1 s
        FencedLease held = cutOff.acquire("r", ttl, Duration.ZERO);
        proxy.partition();

        FencedLease next = other.acquire("r", ttl, TestTime.scaled(Duration.ofSeconds(20)));

        assertThat(held.isValid()).isFalse(); // its end came no later than the row's expiry
        assertThat(held.inDoubt()).isDone();
        LeaseLostException loss =
                held.lost().get(TestTime.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS);
        // Given up when no renewal could be answered in time, or at its end.
        assertThat(loss.getMessage())
                .containsAnyOf("no answer to the renewal", "no connection to", "no renewal was answered")
                .contains("fencing token " + held.fencingToken());
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        proxy.heal();
        held.release(); // its token is gone: frees nothing
        assertThat(cutOff.tryAcquire("r", ttl)).isEmpty();
        next.release();
    }

    /**
     * The database freezes while a grant waits in it; its client gives up, and the grant lands
     * after the thaw. The lock frees that row within about a request timeout of the database
     * answering again, not at the end of the grant's TTL.
     */
    @Test
    @Timeout(120)
    void aGrantThatLandsAfterItsClientGaveUpIsFreedOnceTheDatabaseAnswersAgain() throws Exception {
        newTable();
        Duration ttl = Duration.ofSeconds(60);
        Duration requestTimeout = Duration.ofSeconds(1);
        JdbcLock gaveUp = lock("gave-up", server.port(), requestTimeout);
        JdbcLock other = lock("other", server.port(), Duration.ofSeconds(5));
        other.acquire("r", ttl, Duration.ZERO).release(); // the row exists, free
        gaveUp.acquire("warm", ttl, Duration.ZERO).release();
        ExecutorService threads = Executors.newSingleThreadExecutor();
        open.add(threads::shutdownNow);
        PGSimpleDataSource direct = new PGSimpleDataSource();
        direct.setUrl(server.jdbcUrl());
        direct.setUser(server.user());

        try (Connection blocker = direct.getConnection();
                Statement statement = blocker.createStatement()) {
            blocker.setAutoCommit(false);
            statement.executeUpdate("UPDATE " + table + " SET holder = holder WHERE resource = 'r'"); // locks the row
            Future<Optional<FencedLease>> attempt = threads.submit(() -> gaveUp.tryAcquire("r", ttl));
            Engine.POSTGRESQL.awaitBlockedOn(direct, table); // the grant waits in the database
            server.pause();
            try {
                // The client gives up: the database did not answer within the request timeout.
                assertThat(catchThrowable(() -> attempt.get(
                                TestTime.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)))
                        .as("the client gave up")
                        .isInstanceOf(java.util.concurrent.ExecutionException.class)
                        .hasCauseInstanceOf(LockUnavailableException.class);
                Thread.sleep(requestTimeout.multipliedBy(3).toMillis()); // the freeze lasts on
            } finally {
                server.resume();
            }
            blocker.rollback(); // the waiting grant runs now, for a client that gave up on it
        }

        long thawed = System.nanoTime();
        try (FencedLease next = other.acquire("r", ttl, TestTime.scaled(Duration.ofSeconds(15)))) {
            assertThat(next.isValid()).isTrue();
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - thawed))
                .as("freed within about a request timeout, long before the 60 s TTL")
                .isLessThan(TestTime.scaled(Duration.ofSeconds(5)).toMillis());
    }

    @Test
    void tryAcquireIsEmptyWhenTheLockIsHeldAndThrowsWhenTheDatabaseIsDown() {
        newTable();
        JdbcLock holder = lock("holder", server.port(), Duration.ofSeconds(5));
        JdbcLock other = lock("other", server.port(), Duration.ofSeconds(2));
        FencedLease held = holder.acquire("r", Duration.ofSeconds(30), Duration.ZERO);
        assertThat(other.tryAcquire("r", Duration.ofSeconds(30)))
                .as("held by another client")
                .isEmpty();
        held.release();

        server.stop();
        try {
            LockUnavailableException down = org.junit.jupiter.api.Assertions.assertThrows(
                    LockUnavailableException.class,
                    () -> other.tryAcquire("r", Duration.ofSeconds(30)),
                    "tryAcquire with the database down");
            assertThat(down.busy()).isFalse();
            assertThat(down.lastAttempt())
                    .singleElement()
                    .extracting(ServerAnswer::kind)
                    .isNotEqualTo(ServerAnswer.Kind.HELD_BY_OTHER);
        } finally {
            server.startAgain();
        }
    }

    @Test
    void aLeaseOutlivesAShortRestartOfTheDatabaseAndTokensGoOnGrowing() throws Exception {
        newTable();
        JdbcLock lock = lock("holder", server.port(), Duration.ofSeconds(2));
        FencedLease held = lock.acquire("r", Duration.ofSeconds(30), Duration.ZERO);

        server.stop();
        assertThat(held.extend(Duration.ofSeconds(30))).isFalse(); // no answer: it may have run
        server.startAgain();

        TestTime.await(
                Duration.ofSeconds(20), () -> held.extend(Duration.ofSeconds(30)), "a renewal after the restart");
        assertThat(held.isValid()).isTrue();
        held.release();
        try (FencedLease next = lock.acquire("r", Duration.ofSeconds(30), Duration.ofSeconds(5))) {
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        }
    }
}
