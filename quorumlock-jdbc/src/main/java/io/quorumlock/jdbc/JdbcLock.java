package io.quorumlock.jdbc;

import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LeasedSection;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.LockHolder;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.AsyncAcquireLoop;
import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.CriticalSections;
import io.quorumlock.internal.Holders;
import io.quorumlock.internal.LeaseTimes;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import io.quorumlock.internal.WaitsWithoutThread;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * A fenced lock kept in the application's own database (PostgreSQL, MariaDB, H2): a correctness
 * lock that needs no other service, whose fencing token can be checked by {@link JdbcFence} in the
 * very transaction that writes the protected data.
 *
 * <p>The table holds one row per resource: {@code (resource, holder, token, expires_at, attempt)}.
 * A grant, one statement on PostgreSQL and MariaDB, draws a new token from the table's sequence and
 * takes the row if it is free or its expiry has passed, <em>by the database's clock</em>: no
 * client's clock decides who holds the lock. Tokens
 * come from one sequence, so every later grant of a resource carries a larger token, also after
 * the row was deleted or the database restarted. A held lease renews its row every third of its
 * TTL; it is {@linkplain FencedLease#inDoubt() in doubt} once no renewal came for two thirds of
 * it, and lost at its end, or as soon as a renewal finds its token gone. Every statement runs on
 * its own in auto-commit, bounded by the {@linkplain JdbcLockBuilder#requestTimeout request
 * timeout}.
 *
 * <p>A grant whose answer did not come in time may still land after its client gave up (its
 * statement waited in a database that froze). The lock undoes it in the background, found by the
 * attempt identity the grant recorded, trying again
 * for as long as the database does not answer: such a grant is freed within about a request
 * timeout of the database answering again, not held for its TTL. {@link #close()} makes a last
 * try, and logs a grant it could not undo.
 *
 * <pre>{@code
 * JdbcLock lock = JdbcLock.builder().dataSource(dataSource).build();
 * lock.createTable(); // or run lock.ddl(Dialect.POSTGRESQL) in a migration
 * try (FencedLease lease = lock.acquire("stock:sku-42", Duration.ofSeconds(30), Duration.ofSeconds(5))) {
 *     // in one transaction: fence.check(tx, lease), then the writes
 * }
 * }</pre>
 *
 * <p>On PostgreSQL a waiter is woken by the release ({@code LISTEN}/{@code NOTIFY}, one connection
 * while threads wait; a release notifies only a row a waiter marked), on MariaDB too (the
 * release ends the {@code SLEEP} of one connection while threads wait), or when the holder's row
 * ends; on H2 it polls with the
 * {@linkplain JdbcLockBuilder#retry retry} backoff. Within one lock, the threads waiting for one
 * resource are woken in the order they came. Instances are thread-safe; share one per database
 * and close it on shutdown, which releases the leases it still holds.
 */
public final class JdbcLock implements DistributedLock<FencedLease>, Clocked, WaitsWithoutThread<FencedLease> {

    /** The longest TTL: a year. */
    static final Duration MAX_TTL = Duration.ofDays(365);

    /** The shortest TTL is the request timeout divided by this: a grant must come back well within it. */
    private static final int TTL_FLOOR_DIVISOR = 10;

    /** The least time the first attempt of an {@code acquire} gets, for a cold connection. */
    private static final long FIRST_ATTEMPT_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final AtomicInteger instances = new AtomicInteger();

    private final String table;
    private final int maxResourceLength;
    private final long requestTimeoutNanos;
    private final long ttlFloorMillis;
    private final long overrunNanos;
    private final LockEvents events;
    private final Ticker ticker;
    /** The lock's timer, and its workers for renewals and clean-ups, which block on the database. */
    private final Timers timers;
    /** Connections within a deadline, and the table's statements once resolved. */
    private final Connections connections;
    /** The rows as the leases use them, and the leases held. */
    private final JdbcRows rows;
    /** One attempt, and the undo of grants whose answer was lost. */
    private final JdbcAttempts attempts;

    /** The threads waiting in {@link #acquire}, and what wakes them. */
    private final ReleaseWaits waits;

    private final AtomicBoolean closed = new AtomicBoolean();

    JdbcLock(JdbcLockBuilder builder, DataSource dataSource, String database) {
        this.ticker = builder.ticker;
        this.table = builder.table;
        this.maxResourceLength = builder.maxResourceLength;
        this.requestTimeoutNanos = builder.requestTimeout.toNanos();
        this.ttlFloorMillis = Math.max(1, builder.requestTimeout.toMillis() / TTL_FLOOR_DIVISOR);
        this.overrunNanos = AcquireLoop.overrun(builder.requestTimeout).toNanos();
        this.events = LockEvents.of("jdbc", builder.listener);
        int instance = instances.incrementAndGet();
        this.timers =
                builder.timers != null ? builder.timers : Timers.threads("jdbc-" + instance, builder.renewalThreads);
        this.connections = new Connections(
                dataSource,
                database,
                table,
                maxResourceLength,
                builder.dialect,
                ticker,
                requestTimeoutNanos,
                instance,
                timers);
        this.rows = new JdbcRows(connections, this::ttlMillis);
        this.attempts = new JdbcAttempts(connections, rows, events, timers, builder.holder, closed);
        this.waits = new ReleaseWaits(connections, builder.retry, builder.recheck.toNanos(), instance, closed);
    }

    /** Starts the configuration of a lock. */
    public static JdbcLockBuilder builder() {
        return new JdbcLockBuilder();
    }

    /**
     * One attempt to lock {@code resource} for {@code ttl}, bounded by the request timeout.
     *
     * @return the lease, or empty if another holder has the lock
     * @throws LockUnavailableException if the database could not be reached or did not answer in
     *     time, or the attempt could not take the row for another reason than a holder, with what
     *     the database answered
     * @throws LockConfigurationException if the table is missing, the user lacks a privilege, or the
     *     database cannot store the resource name (a column narrower than {@link
     *     JdbcLockBuilder#maxResourceLength}), with the remedy
     * @throws IllegalArgumentException if the resource is empty, too long or has a NUL character, or
     *     the TTL out of range (shorter than a tenth of the {@linkplain JdbcLockBuilder#requestTimeout request timeout}, or longer
     *     than a year)
     * @throws IllegalStateException if this lock was closed
     */
    @Override
    public Optional<FencedLease> tryAcquire(String resource, Duration ttl) {
        checkResource(resource);
        long ttlMillis = ttlMillis(ttl);
        requireOpen();
        return AcquireLoop.once(
                resource,
                ticker,
                events,
                () -> attempts.attempt(resource, ttlMillis, ticker.nanos() + requestTimeoutNanos, null, false));
    }

    /**
     * Locks {@code resource} for {@code ttl}, trying again with the {@linkplain
     * JdbcLockBuilder#retry retry} backoff while another holder has it, up to {@code maxWait}. The
     * statements of each attempt are bounded by what is left of the wait plus the {@linkplain
     * AcquireLoop#overrun overrun} (the first attempt is given at least a second, for a cold
     * connection), never more than the request timeout; a {@code maxWait} of zero makes one
     * attempt, bounded by the request timeout.
     *
     * @throws LockUnavailableException if the lock was not acquired in time, naming the holder and
     *     how long its row has left by the database's clock, or what the database answered
     * @throws LockConfigurationException as {@link #tryAcquire}, not retried
     * @throws IllegalArgumentException if the resource is empty, too long or has a NUL character, the TTL out of range (as
     *     in {@link #tryAcquire}) or {@code maxWait} negative
     * @throws IllegalStateException if this lock was closed
     * @throws QuorumlockException if the thread was interrupted during a pause (the flag stays set)
     */
    @Override
    public FencedLease acquire(String resource, Duration ttl, Duration maxWait) {
        checkResource(resource);
        long ttlMillis = ttlMillis(ttl);
        boolean once = Settings.maxWait(maxWait).isZero();
        requireOpen();
        try (ReleaseWait pause = waits.pause(resource)) {
            FencedLease lease = AcquireLoop.acquire(
                    resource,
                    maxWait,
                    pause,
                    ticker,
                    events,
                    (number, remainingNanos) -> attempt(resource, ttlMillis, once, number, remainingNanos, pause));
            return lease;
        }
    }

    /**
     * As {@link #acquire}, holding no thread between its attempts: they run on the threads that
     * the asynchronous acquires of this process share (each its statements, bounded as {@code
     * acquire}'s), and the pauses between them end on a timer or at a release heard. Cancelling
     * the future gives the wait up; a lease granted after the cancel is released. {@link
     * #acquireAsync} takes its leases with this.
     */
    @Override
    public CompletableFuture<FencedLease> acquireWithoutThread(String resource, Duration ttl, Duration maxWait) {
        checkResource(resource);
        long ttlMillis = ttlMillis(ttl);
        boolean once = Settings.maxWait(maxWait).isZero();
        requireOpen();
        ReleaseWait pause = waits.pause(resource);
        CompletableFuture<FencedLease> lease = AsyncAcquireLoop.acquireAsyncBy(
                resource,
                maxWait,
                0,
                pause::pauseWithoutThread,
                ticker,
                events,
                (number, remainingNanos, acquire) -> {
                    AcquireLoop.Attempt<FencedLease> attempt =
                            attempt(resource, ttlMillis, once, number, remainingNanos, pause);
                    if (attempt.lease().isPresent()) {
                        pause.close(); // out of the line before the lease reaches anyone: its release wakes the next
                    }
                    return CompletableFuture.completedFuture(attempt);
                },
                FencedLease::release,
                pause::close);
        lease.whenComplete((granted, failure) -> pause.cancel()); // however it ended: no pause goes on
        return lease;
    }

    /**
     * Attempt {@code number} of an acquire: its statements are bounded by what is left of the wait
     * plus the overrun (the first attempt is given at least a second, for a cold connection), never
     * more than the request timeout; one attempt ({@code once}) by the request timeout.
     */
    private AcquireLoop.Attempt<FencedLease> attempt(
            String resource, long ttlMillis, boolean once, int number, long remainingNanos, ReleaseWait pause) {
        requireOpen(); // closed during the pause, which the close ended
        long budget = once
                ? requestTimeoutNanos
                : Math.min(
                        requestTimeoutNanos,
                        Math.max(remainingNanos, number == 1 ? FIRST_ATTEMPT_NANOS : 0) + overrunNanos);
        pause.attempting();
        AcquireLoop.Attempt<FencedLease> attempt =
                attempts.attempt(resource, ttlMillis, ticker.nanos() + budget, pause, !once);
        if (attempt.lease().isPresent()) {
            pause.granted();
        }
        return attempt;
    }

    /**
     * Runs {@code work} while holding the lock, and releases it afterwards; the lease renews itself
     * meanwhile. If the lease is {@linkplain FencedLease#inDoubt() in doubt} or lost, the thread
     * running the work is interrupted, and the call ends with a {@link LeaseLostException}.
     *
     * @throws LockUnavailableException if the lock could not be acquired within {@code maxWait}
     */
    @Override
    public <T, X extends Exception> T withLease(
            String resource, Duration ttl, Duration maxWait, LeasedSection<FencedLease, T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        FencedLease lease = acquire(resource, ttl, maxWait);
        return CriticalSections.run(lease, () -> work.run(lease));
    }

    /**
     * A third of the TTL: a lease is in doubt once no renewal came for two thirds of it, and its
     * row expires at its end.
     */
    @Override
    public Duration lossNotice(Duration ttl) {
        return Duration.ofNanos(LeaseTimes.doubtNoticeNanos(TimeUnit.MILLISECONDS.toNanos(ttlMillis(ttl))));
    }

    /**
     * The statements that create the lock table and its token sequence on {@code dialect}, for a
     * migration (Flyway, Liquibase); {@link #createTable()} runs them. The last one gives a table
     * made by an earlier version the columns this one uses ({@code ALTER TABLE ... ADD COLUMN IF
     * NOT EXISTS}: empty columns, every row kept), and does nothing to a table that has them.
     */
    public List<String> ddl(Dialect dialect) {
        Objects.requireNonNull(dialect, "dialect").checkMaxResourceLength(maxResourceLength);
        return dialect.ddl(table, maxResourceLength);
    }

    /**
     * Creates the lock table and its token sequence if they do not exist, on the database's
     * dialect; gives a table made by an earlier version the columns this one uses, keeping its rows.
     *
     * @throws QuorumlockException naming the database and what failed
     */
    public void createTable() {
        requireOpen();
        TableAdmin.create(connections, ticker.nanos() + requestTimeoutNanos, this::ddl, table);
    }

    /**
     * Reads the database's clock and checks that the lock's statements can run (the table, the
     * sequence, the privileges to read and update), within {@code timeout}: for health checks and
     * {@code quorumlock check}.
     *
     * @return the dialect and the database's clock against this host's
     * @throws QuorumlockException naming the database, what failed, and the remedy where there is one
     */
    public DatabaseCheck check(Duration timeout) {
        Settings.positive("timeout", Objects.requireNonNull(timeout, "timeout"));
        requireOpen();
        return TableAdmin.check(connections, ticker.nanos() + timeout.toNanos());
    }

    /**
     * Who holds {@code resource} now: the holder and token columns of its row, if its lease has not
     * ended by the database's clock (one {@code SELECT}, in auto-commit, bounded by the {@linkplain
     * JdbcLockBuilder#requestTimeout request timeout}). The name is the holder lock's {@link
     * JdbcLockBuilder#holder(String)}; the token is the one its lease carries. Empty if there is no
     * row, its lease was released, or it ended without a release.
     *
     * @throws QuorumlockException naming the database and what failed (not reached, no answer within
     *     the request timeout, the table missing or not readable, with the remedy)
     * @throws IllegalArgumentException if the resource is empty or too long
     * @throws IllegalStateException if this lock was closed
     */
    @Override
    public Optional<LockHolder> holder(String resource) {
        checkResource(resource);
        requireOpen();
        LockTable statements = null;
        try (LockTable.Session session = connections.open(ticker.nanos() + requestTimeoutNanos, false)) {
            statements = connections.statements();
            return statements
                    .read(session, resource)
                    .filter(LockTable.Row::held)
                    .map(row -> new LockHolder(
                            row.holder()
                                    .filter(name -> Holders.problem(name).isEmpty())
                                    .orElse(""),
                            OptionalLong.of(row.token())));
        } catch (SQLException e) {
            SqlErrors.Failure failure = connections.classify(e, statements);
            throw new QuorumlockException(
                    connections.database() + ": could not tell who holds '" + resource + "': "
                            + failure.kind().description() + " (" + failure.detail() + ")",
                    e);
        }
    }

    /**
     * Ends every lease this lock holds as lost (so work under {@code withLock} is interrupted
     * before another holder can come in), frees their rows (each within the request timeout), makes
     * a last try at undoing the grants whose answer was lost (each within the request timeout; one
     * it cannot undo is logged), and stops the lock's threads. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<JdbcLease> open = List.copyOf(rows.leases);
        for (JdbcLease lease : open) {
            lease.loseOnClose();
        }
        for (JdbcLease lease : open) {
            lease.release();
        }
        attempts.lastTries();
        waits.close();
        timers.close(); // the releases of grants whose answer was lost still run
        // the connector's threads end by themselves when idle: those releases need it
        connections.close(); // the connection url(...) kept; those releases open their own
    }

    @Override
    public String toString() {
        return "JdbcLock[" + connections.database() + ", table " + table + "]";
    }

    /** The lock's clock: every validity and deadline of the lock counts on it. */
    @Override
    public Ticker ticker() {
        return ticker;
    }

    /** How many threads wait in {@link #acquire} for {@code resource} after a refusal. */
    int waiting(String resource) {
        return waits.waiting(resource);
    }

    /** Whether this lock keeps a connection for its next grant or release now. */
    boolean keepsConnection() {
        return connections.keeps();
    }

    /** Whether this lock listens for releases now (PostgreSQL). */
    boolean listening() {
        return waits.listening();
    }

    /** Whether this lock hears the releases of {@code resource} now (PostgreSQL, MariaDB). */
    boolean listening(String resource) {
        return waits.listening(resource);
    }

    // ---- arguments -------------------------------------------------------------------------------

    /** Refuses, before anything is sent, a name the table could not hold. */
    private void checkResource(String resource) {
        Settings.resource(resource, "stock:sku-42");
        if (resource.length() > maxResourceLength) {
            throw new IllegalSettingException(
                    "resource",
                    "resource '" + Holders.shown(resource) + "' must be at most maxResourceLength ("
                            + maxResourceLength + ") characters, was " + resource.length()
                            + ": use shorter names, or raise maxResourceLength and the column");
        }
        if (resource.indexOf('\0') >= 0) {
            throw new IllegalSettingException(
                    "resource",
                    "resource '" + Holders.shown(resource) + "' has a NUL character at " + resource.indexOf('\0')
                            + ", which PostgreSQL cannot store: leave it out of lock names");
        }
    }

    /** The TTL in whole milliseconds, checked: from a tenth of the request timeout to a year. */
    long ttlMillis(Duration ttl) {
        Settings.ttl(ttl, "");
        Settings.atMost("ttl", ttl, MAX_TTL);
        long millis = ttl.toMillis();
        if (millis < ttlFloorMillis) {
            throw new IllegalSettingException(
                    "ttl",
                    "ttl must be at least a tenth of requestTimeout (" + ttlFloorMillis + " ms), was "
                            + (millis < 1 ? ttl.toNanos() + " ns" : millis + " ms")
                            + ": a grant's statements are each allowed up to requestTimeout, and it must come back"
                            + " well within the TTL; raise the ttl or lower requestTimeout");
        }
        return millis;
    }

    private void requireOpen() {
        if (closed.get()) {
            throw new IllegalStateException("this JdbcLock is closed");
        }
    }

    /**
     * What {@link #check(Duration)} found.
     *
     * @param database the database, as messages name it
     * @param dialect its dialect
     * @param clockOffset the database's clock less this host's (positive: the database is ahead),
     *     measured to within half of {@code roundTrip}
     * @param roundTrip how long the read of the clock took
     */
    public record DatabaseCheck(String database, Dialect dialect, Duration clockOffset, Duration roundTrip) {}
}
