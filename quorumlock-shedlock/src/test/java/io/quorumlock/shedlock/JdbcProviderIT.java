package io.quorumlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.FencedLease;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The provider over the database lock on a real PostgreSQL: unlike ShedLock's own JDBC provider,
 * the running task sees a fencing token, larger on each run, and lockAtLeastFor holds.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JdbcProviderIT {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    private static final Duration AT_MOST = TestTime.scaled(Duration.ofSeconds(10));

    private TwoClients clients;

    @BeforeEach
    void clients() {
        clients = new TwoClients(this::lock);
    }

    @AfterEach
    void close() {
        clients.close();
    }

    private JdbcLock lock() {
        JdbcLock lock = JdbcLock.builder()
                .url(postgres.jdbcUrl())
                .user(postgres.user())
                .table("shedlock_jobs")
                .build();
        lock.createTable();
        return lock;
    }

    private static LockConfiguration job(String name, Duration atLeast) {
        return new LockConfiguration(Instant.now(), name, AT_MOST, atLeast);
    }

    @Test
    void eachRunSeesALargerFencingTokenAndTheOtherInstanceSkips() {
        SimpleLock first = clients.a.lock(job("nightly-report", Duration.ZERO)).orElseThrow();
        long token = QuorumlockLockProvider.currentFencingToken().orElseThrow();
        assertThat(token).isPositive();
        assertThat(clients.b.lock(job("nightly-report", Duration.ZERO)))
                .as("held by a")
                .isEmpty();
        first.unlock();

        SimpleLock second = clients.b.lock(job("nightly-report", Duration.ZERO)).orElseThrow();
        assertThat(QuorumlockLockProvider.currentFencingToken().orElseThrow()).isGreaterThan(token);
        second.unlock();
        assertThat(QuorumlockLockProvider.currentLease()).isEmpty();
    }

    @Test
    void lockAtLeastForKeepsTheRowUntilItIsOver() {
        Duration atLeast = TestTime.scaled(Duration.ofMillis(1500));
        long start = System.nanoTime();
        SimpleLock held = clients.a.lock(job("report", atLeast)).orElseThrow();
        FencedLease lease = (FencedLease) QuorumlockLockProvider.currentLease().orElseThrow();
        held.unlock();
        assertThat(lease.isValid()).as("kept for lockAtLeastFor").isTrue();
        assertThat(clients.b.lock(job("report", Duration.ZERO))).isEmpty();

        TestTime.await(atLeast.plusSeconds(3), () -> !lease.isValid(), "the kept lease to be released");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(atLeast.toMillis());
        // The lease is invalid from the moment its release begins; the row is free once it returns.
        SimpleLock[] next = new SimpleLock[1];
        TestTime.await(
                Duration.ofSeconds(3),
                () -> (next[0] = clients.b.lock(job("report", Duration.ZERO)).orElse(null)) != null,
                "b to lock the released job");
        next[0].unlock();
    }
}
