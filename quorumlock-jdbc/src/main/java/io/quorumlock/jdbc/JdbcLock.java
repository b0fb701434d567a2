package io.quorumlock.jdbc;

import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LeasedSection;
import io.quorumlock.LockConfigurationException;
import io.quorumlock.LockHolder;
import io.quorumlock.LockListener;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.CriticalSections;
import io.quorumlock.internal.Holders;
import io.quorumlock.internal.KeepAlive;
import io.quorumlock.internal.LeaseTimes;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import io.quorumlock.internal.Waiters;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fenced lock kept in the application's own database (PostgreSQL, MariaDB, H2): a correctness
 * lock that needs no other service, whose fencing token can be checked by {@link JdbcFence} in the
 * very transaction that writes the protected data.
 *
 * <p>The table holds one row per resource: {@code (resource, holder, token, expires_at)}. A grant
 * draws a new token from the table's sequence and takes the row if it is free or its expiry has
 * passed, <em>by the database's clock</em>: no client's clock decides who holds the lock. Tokens
 * come from one sequence, so every later grant of a resource carries a larger token, also after
 * the row was deleted or the database restarted. A held lease renews its row every third of its
 * TTL; it is {@linkplain FencedLease#inDoubt() in doubt} once no renewal came for two thirds of
 * it, and lost at its end, or as soon as a renewal finds its token gone. Every statement runs on
 * its own in auto-commit, bounded by the {@linkplain Builder#requestTimeout request timeout}.
 *
 * <p>A grant whose answer did not come in time may still land after its client gave up (its
 * statement waited in a database that froze). The lock undoes it in the background, trying again
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
 * while threads wait) or when the holder's row ends; on MariaDB and H2 it polls with the
 * {@linkplain Builder#retry retry} backoff. Within one lock, the threads waiting for one resource
 * are woken in the order they came. Instances are thread-safe;
 * share one per database and close it on shutdown, which releases the leases it still holds.
 */
public final class JdbcLock implements DistributedLock<FencedLease>, Clocked {

    private static final Logger log = LoggerFactory.getLogger(JdbcLock.class);

    /** The longest TTL: a year. */
    static final Duration MAX_TTL = Duration.ofDays(365);

    /** The shortest TTL is the request timeout divided by this: a grant must come back well within it. */
    private static final int TTL_FLOOR_DIVISOR = 10;

    /** How many times one attempt draws a new token when the row changed hands under it. */
    private static final int ROUNDS_PER_ATTEMPT = 3;

    /** The least time the first attempt of an {@code acquire} gets, for a cold connection. */
    private static final long FIRST_ATTEMPT_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** A regular SQL identifier, optionally qualified by a schema (PostgreSQL's limit is 63 bytes). */
    private static final Pattern TABLE_NAME =
            Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,56}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    /** How soon the undo of a grant whose answer was lost is first tried again; the wait doubles up to the request timeout. */
    private static final long UNDO_RETRY_MILLIS = 250;

    /** How many connections may be pending at once: more means the database does not answer. */
    private static final int MAX_CONNECTING = 64;

    private static final AtomicInteger instances = new AtomicInteger();

    private final DataSource dataSource;
    private final String table;
    private final int maxResourceLength;
    private final String holder;
    private final Dialect configuredDialect;
    private final long requestTimeoutNanos;
    private final long ttlFloorMillis;
    private final long overrunNanos;
    private final RetryPolicy retry;
    private final long recheckNanos;
    private final LockEvents events;
    private final Ticker ticker = Ticker.SYSTEM;
    /** The lock's timer, and its workers for renewals and clean-ups, which block on the database. */
    private final Timers timers;
    /** The rows as the leases use them. */
    private final Rows rows = new Rows();
    /** Asks the data source for connections, so that no caller waits past its deadline. */
    private final ThreadPoolExecutor connector;
    /** The grants being undone: {@link #close()} makes a last try at each. */
    private final Set<Undo> undoing = ConcurrentHashMap.newKeySet();

    private final Set<JdbcLease> leases = ConcurrentHashMap.newKeySet();
    /** The threads waiting in {@link #acquire}, woken by releases where the database tells of them. */
    private final Waiters waiters = new Waiters();
    /** Listens for releases on PostgreSQL; made once the dialect is known. */
    private volatile PgListener listener;
    /** Set when no listener can be made: waiters poll. */
    private volatile boolean polls;

    private final int instance;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** The table's statements for the database's dialect, made on the first connection. */
    private volatile LockTable statements;
    /** The database as messages name it (never with a password). */
    private volatile String database;

    private JdbcLock(Builder builder, DataSource dataSource, String database) {
        this.dataSource = dataSource;
        this.database = database;
        this.table = builder.table;
        this.maxResourceLength = builder.maxResourceLength;
        this.holder = builder.holder;
        this.configuredDialect = builder.dialect;
        this.requestTimeoutNanos = builder.requestTimeout.toNanos();
        this.ttlFloorMillis = Math.max(1, builder.requestTimeout.toMillis() / TTL_FLOOR_DIVISOR);
        this.overrunNanos = AcquireLoop.overrun(builder.requestTimeout).toNanos();
        this.retry = builder.retry;
        this.recheckNanos = builder.recheck.toNanos();
        this.events = LockEvents.of("jdbc", builder.listener);
        this.instance = instances.incrementAndGet();
        this.timers = Timers.threads("jdbc-" + instance, builder.renewalThreads);
        this.connector = new ThreadPoolExecutor(
                0,
                MAX_CONNECTING,
                30,
                TimeUnit.SECONDS,
                new SynchronousQueue<>(),
                daemon("quorumlock-jdbc-" + instance + "-connect"));
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Starts the configuration of a lock. */
    public static Builder builder() {
        return new Builder();
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
     *     Builder#maxResourceLength}), with the remedy
     * @throws IllegalArgumentException if the resource is empty, too long or has a NUL character, or
     *     the TTL out of range (shorter than a tenth of the {@linkplain Builder#requestTimeout request timeout}, or longer
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
                () -> attempt(resource, ttlMillis, ticker.nanos() + requestTimeoutNanos, null));
    }

    /**
     * Locks {@code resource} for {@code ttl}, trying again with the {@linkplain Builder#retry retry}
     * backoff while another holder has it, up to {@code maxWait}. The statements of each attempt
     * are bounded by what is left of the wait plus the {@linkplain AcquireLoop#overrun overrun}
     * (the first attempt is given at least a second, for a cold connection), never more than the
     * request timeout; a {@code maxWait} of zero makes one attempt, bounded by the request timeout.
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
        try (ReleaseWait pause = new ReleaseWait(waiters, this::listener, retry, recheckNanos, ticker)) {
            FencedLease lease =
                    AcquireLoop.acquire(resource, maxWait, pause, ticker, events, (number, remainingNanos) -> {
                        long budget = once
                                ? requestTimeoutNanos
                                : Math.min(
                                        requestTimeoutNanos,
                                        Math.max(remainingNanos, number == 1 ? FIRST_ATTEMPT_NANOS : 0) + overrunNanos);
                        pause.attempting();
                        return attempt(resource, ttlMillis, ticker.nanos() + budget, pause);
                    });
            pause.granted();
            return lease;
        }
    }

    /**
     * The listener for releases, once the first connection showed PostgreSQL and pgjdbc is on the
     * class path; null otherwise (waiters poll).
     */
    private PgListener listener() {
        PgListener current = listener;
        LockTable resolved = statements;
        if (current != null || resolved == null || resolved.channel == null || closed.get() || polls) {
            return current;
        }
        synchronized (waiters) {
            if (listener == null && !polls) {
                polls = !PgListener.driverPresent();
                if (polls) {
                    log.info(
                            "waiters for locks on {} poll with the backoff: pgjdbc is not on the class path", database);
                    return null;
                }
                listener = new PgListener(
                        resolved.channel,
                        deadline -> connect(deadline, false),
                        waiters,
                        ticker,
                        requestTimeoutNanos,
                        daemon("quorumlock-jdbc-" + instance + "-listen"),
                        database);
            }
            return listener;
        }
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
        return Duration.ofMillis(ttlMillis(ttl) / 3);
    }

    /**
     * The statements that create the lock table and its token sequence on {@code dialect}, for a
     * migration (Flyway, Liquibase); {@link #createTable()} runs them.
     */
    public List<String> ddl(Dialect dialect) {
        Objects.requireNonNull(dialect, "dialect").checkMaxResourceLength(maxResourceLength);
        return dialect.ddl(table, maxResourceLength);
    }

    /**
     * Creates the lock table and its token sequence if they do not exist, on the database's
     * dialect.
     *
     * @throws QuorumlockException naming the database and what failed
     */
    public void createTable() {
        requireOpen();
        try (LockTable.Session session = open(ticker.nanos() + requestTimeoutNanos, false)) {
            for (String ddl : ddl(statements.dialect)) {
                try (PreparedStatement statement = session.prepare(ddl)) {
                    statement.execute();
                }
            }
        } catch (SQLException e) {
            throw new QuorumlockException(
                    database + ": could not create the lock table " + table + ": " + SqlErrors.shortMessage(e), e);
        }
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
        long deadline = ticker.nanos() + timeout.toNanos();
        LockTable statements = null;
        try (LockTable.Session session = open(deadline, false)) {
            statements = this.statements;
            long before = System.currentTimeMillis();
            long clock = statements.clockMillis(session);
            long after = System.currentTimeMillis();
            statements.read(session, "");
            statements.renew(session, "", -1, 1); // changes nothing: checks the privilege to update
            statements.nextToken(session);
            long offset = clock - (before + after) / 2;
            return new DatabaseCheck(
                    database, statements.dialect, Duration.ofMillis(offset), Duration.ofMillis(after - before));
        } catch (SQLException e) {
            SqlErrors.Failure failure = classify(e, statements);
            throw new QuorumlockException(
                    database + ": " + failure.kind().description() + " (" + failure.detail() + ")", e);
        }
    }

    /**
     * Who holds {@code resource} now: the holder and token columns of its row, if its lease has not
     * ended by the database's clock (one {@code SELECT}, in auto-commit, bounded by the {@linkplain
     * Builder#requestTimeout request timeout}). The name is the holder lock's {@link
     * Builder#holder(String)}; the token is the one its lease carries. Empty if there is no row, its
     * lease was released, or it ended without a release.
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
        try (LockTable.Session session = open(ticker.nanos() + requestTimeoutNanos, false)) {
            statements = this.statements;
            return statements
                    .read(session, resource)
                    .filter(LockTable.Row::held)
                    .map(row -> new LockHolder(
                            row.holder()
                                    .filter(name -> Holders.problem(name).isEmpty())
                                    .orElse(""),
                            OptionalLong.of(row.token())));
        } catch (SQLException e) {
            SqlErrors.Failure failure = classify(e, statements);
            throw new QuorumlockException(
                    database + ": could not tell who holds '" + resource + "': "
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
        List<JdbcLease> open = List.copyOf(leases);
        for (JdbcLease lease : open) {
            lease.loseOnClose();
        }
        for (JdbcLease lease : open) {
            lease.release();
        }
        for (Undo undo : List.copyOf(undoing)) {
            lastTry(undo);
        }
        PgListener listening = listener;
        if (listening != null) {
            listening.close();
        }
        timers.close(); // the releases of grants whose answer was lost still run
        // the connector's threads end by themselves when idle: those releases need it
        if (dataSource instanceof UrlDataSource own) {
            own.close(); // the connection it kept; those releases open their own
        }
    }

    @Override
    public String toString() {
        return "JdbcLock[" + database + ", table " + table + "]";
    }

    // ---- one attempt -----------------------------------------------------------------------------

    /** @param wait the pauses of the acquire making the attempt, told of a holder; null for a try */
    private AcquireLoop.Attempt<FencedLease> attempt(String resource, long ttlMillis, long deadline, ReleaseWait wait) {
        long sent = ticker.nanos();
        long pending = 0; // a token whose grant was sent without an answer yet
        long granted = 0;
        AcquireLoop.Attempt<FencedLease> refusal = null;
        LockTable statements = null;
        try (LockTable.Session session = open(deadline, false)) {
            statements = this.statements;
            boolean absent = false;
            long token = 0;
            long drawn = 0;
            Optional<LockTable.Row> row = Optional.empty();
            for (int round = 1; round <= ROUNDS_PER_ATTEMPT && granted == 0 && refusal == null; round++) {
                if (token == 0) {
                    token = statements.nextToken(session);
                    drawn = token;
                }
                pending = token;
                boolean taken = statements.take(session, resource, holder, token, ttlMillis, absent);
                pending = 0;
                if (taken) {
                    granted = token;
                } else {
                    row = statements.read(session, resource);
                    absent = row.isEmpty();
                    if (row.isPresent() && row.get().held()) {
                        refusal = busy(row.get());
                        if (wait != null) {
                            wait.held(row.get().millisLeft());
                        }
                    } else if (row.isPresent()) {
                        token = 0; // free, but a newer token took it meanwhile: draw a newer one
                    }
                }
            }
            if (granted == 0 && refusal == null) {
                String why = row.isPresent() && row.get().token() >= drawn
                        ? "the row of '" + resource + "' holds token "
                                + row.get().token()
                                + ", newer than the sequence gave: if the sequence was reset, restart it above that"
                        : "the lock changed hands during the attempt";
                refusal = AcquireLoop.Attempt.refused(new ServerAnswer(database, ServerAnswer.Kind.ERROR, why), true);
            }
        } catch (SQLException e) {
            if (granted == 0) {
                SqlErrors.Failure failure = classify(e, statements);
                ServerAnswer answer = new ServerAnswer(database, failure.kind(), failure.detail());
                if (!failure.retryable()) {
                    throw new LockConfigurationException(resource, 1, List.of(answer)); // refused: it did not run
                }
                if (pending != 0) {
                    undo(resource, pending, TimeUnit.MILLISECONDS.toNanos(ttlMillis)); // it may still run
                }
                log.debug("attempt on '{}' failed: {}", resource, answer);
                return AcquireLoop.Attempt.refused(answer, true);
            }
            log.debug("could not give back the connection of a grant: {}", SqlErrors.shortMessage(e));
        }
        return granted != 0 ? granted(resource, granted, ttlMillis, sent) : refusal;
    }

    private AcquireLoop.Attempt<FencedLease> granted(String resource, long token, long ttlMillis, long sent) {
        long ttlNanos = TimeUnit.MILLISECONDS.toNanos(ttlMillis);
        long now = ticker.nanos();
        if (LeaseTimes.endAfter(sent, ttlNanos) - now <= 0) {
            undo(resource, token, ttlNanos);
            return AcquireLoop.Attempt.refused(
                    new ServerAnswer(
                            database,
                            ServerAnswer.Kind.ERROR,
                            "granted too late: the attempt took " + (now - sent) / 1_000_000 + " ms of the " + ttlMillis
                                    + " ms TTL"),
                    true);
        }
        JdbcLease lease =
                new JdbcLease(rows, ticker, events, timers, resource, token, ttlNanos, sent, requestTimeoutNanos);
        leases.add(lease);
        if (closed.get()) {
            lease.release();
            throw new IllegalStateException("this JdbcLock was closed during the attempt");
        }
        lease.start(ttlNanos);
        return AcquireLoop.Attempt.granted(lease);
    }

    private AcquireLoop.Attempt<FencedLease> busy(LockTable.Row row) {
        String who = row.holder().map(Holders::shown).orElse("?");
        return AcquireLoop.Attempt.busy(
                who,
                new ServerAnswer(
                        database,
                        ServerAnswer.Kind.HELD_BY_OTHER,
                        Holders.named(who, holder) + ", fencing token " + row.token() + ", " + row.millisLeft()
                                + " ms left by the database's clock"));
    }

    /** A grant of {@code ttlNanos} to undo, and how its tries went. */
    private static final class Undo {
        final String resource;
        final long token;
        final long ttlNanos;
        long waitMillis = UNDO_RETRY_MILLIS;
        /** When the database first answered with the row held by an older token, if it did. */
        OptionalLong heldSince = OptionalLong.empty();

        Undo(String resource, long token, long ttlNanos) {
            this.resource = resource;
            this.token = token;
            this.ttlNanos = ttlNanos;
        }
    }

    /**
     * Undoes, in the background, a grant whose answer was lost or came too late: its statement may
     * still run in the database after the client gave up on it (a database that froze, a row lock
     * it waited for), and would then hold the row for a whole TTL. Each try {@linkplain
     * LockTable#settle settles} the grant: it frees the row, or makes the statement unable to take
     * it. The tries go on with a wait from 250 ms doubling up to the request timeout, also while
     * the database does not answer, so that a grant landing later is freed within about a request
     * timeout of the database answering again; while the row is held by an older token, for at
     * most the grant's TTL. {@link #close()} makes a last try.
     */
    private void undo(String resource, long token, long ttlNanos) {
        Undo undo = new Undo(resource, token, ttlNanos);
        undoing.add(undo);
        try {
            timers.execute(() -> tryUndo(undo));
        } catch (RejectedExecutionException closing) {
            lastTry(undo);
        }
    }

    /** What one try at undoing a grant came to. */
    private enum Undone {
        SETTLED,
        /** The row is held by an older token: the grant's statement could take it once it is free. */
        HELD,
        NO_ANSWER
    }

    private void tryUndo(Undo undo) {
        if (closed.get()) {
            return; // close() makes the last try
        }
        Undone outcome = settle(undo);
        if (outcome == Undone.SETTLED) {
            undoing.remove(undo);
            return;
        }
        long now = ticker.nanos();
        if (outcome == Undone.HELD && undo.heldSince.isEmpty()) {
            undo.heldSince = OptionalLong.of(now);
        } else if (outcome == Undone.HELD && now - undo.heldSince.getAsLong() > undo.ttlNanos) {
            undoing.remove(undo);
            log.warn(
                    "gave up undoing the grant of '{}' (token {}) whose answer was lost: the row stayed held by an"
                            + " older token for its TTL",
                    undo.resource,
                    undo.token);
            return;
        }
        long wait = undo.waitMillis;
        undo.waitMillis = Math.max(wait, Math.min(2 * wait, TimeUnit.NANOSECONDS.toMillis(requestTimeoutNanos)));
        try {
            timers.schedule(() -> timers.execute(() -> tryUndo(undo)), TimeUnit.MILLISECONDS.toNanos(wait));
        } catch (RejectedExecutionException closing) {
            // close() makes the last try
        }
    }

    /** The try {@link #close()} makes; a grant it cannot settle is logged. */
    private void lastTry(Undo undo) {
        if (settle(undo) == Undone.SETTLED) {
            undoing.remove(undo);
            return;
        }
        log.warn(
                "closed before the grant of '{}' (token {}) whose answer was lost was undone: if it landed, the row"
                        + " stays held until its TTL ({} ms) ends",
                undo.resource,
                undo.token,
                TimeUnit.NANOSECONDS.toMillis(undo.ttlNanos));
    }

    /** One try at settling a grant, within the request timeout. */
    private Undone settle(Undo undo) {
        try (LockTable.Session session = open(ticker.nanos() + requestTimeoutNanos, true)) {
            return statements.settle(session, undo.resource, undo.token) ? Undone.SETTLED : Undone.HELD;
        } catch (SQLException e) {
            log.debug(
                    "could not undo the grant of '{}' (token {}) on {} yet: {}",
                    undo.resource,
                    undo.token,
                    database,
                    SqlErrors.shortMessage(e));
            return Undone.NO_ANSWER;
        }
    }

    // ---- for JdbcLease ---------------------------------------------------------------------------

    /** The rows as a lease uses them: its renewals, its release, its end. */
    private final class Rows implements JdbcLease.Rows {
        /**
         * Sets the expiry of the row held with {@code token} to {@code ttlNanos} from the database's
         * now, within the request timeout and before {@code endNanos} (the lease's end, past which
         * the answer no longer matters). Nothing is sent if no connection comes in that time.
         */
        @Override
        public KeepAlive.Result renew(String resource, long token, long ttlNanos, long endNanos) {
            long deadline = ticker.nanos() + requestTimeoutNanos;
            LockTable.Session session;
            try {
                session = open(deadline - endNanos < 0 ? deadline : endNanos, true);
            } catch (SQLException e) {
                return KeepAlive.Result.notSent("no connection to " + database + ": " + SqlErrors.shortMessage(e));
            }
            try (session) {
                return statements.renew(session, resource, token, TimeUnit.NANOSECONDS.toMillis(ttlNanos))
                        ? KeepAlive.Result.RENEWED
                        : KeepAlive.Result.gone("the lock's row no longer holds this lease's token: it expired and was"
                                + " taken by another holder, or was freed by hand; storage that has seen a newer token"
                                + " refuses this one");
            } catch (SQLException e) {
                log.debug("could not renew '{}' on {}: {}", resource, database, SqlErrors.shortMessage(e));
                return KeepAlive.Result.unknown(
                        "no answer to the renewal from " + database + ": " + SqlErrors.shortMessage(e));
            }
        }

        @Override
        public void release(String resource, long token) {
            releaseRow(resource, token);
        }

        @Override
        public long ttlMillis(Duration ttl) {
            return JdbcLock.this.ttlMillis(ttl);
        }

        @Override
        public void forget(JdbcLease lease) {
            leases.remove(lease);
        }
    }

    /**
     * Frees the row if it holds {@code token}, within the request timeout, also on an interrupted
     * thread; a failure is logged.
     *
     * @return true if it freed the row
     */
    boolean releaseRow(String resource, long token) {
        try (LockTable.Session session = open(ticker.nanos() + requestTimeoutNanos, true)) {
            if (statements.release(session, resource, token)) {
                return true;
            }
            log.debug("the row of '{}' did not hold token {} at the release", resource, token);
        } catch (SQLException e) {
            log.warn(
                    "could not free the row of '{}' (token {}) on {}; it expires by its TTL: {}",
                    resource,
                    token,
                    database,
                    SqlErrors.shortMessage(e));
        }
        return false;
    }

    /** The lock's clock: every validity and deadline of the lock counts on it. */
    @Override
    public Ticker ticker() {
        return ticker;
    }

    /** How many threads wait in {@link #acquire} for {@code resource} after a refusal. */
    int waiting(String resource) {
        return waiters.waiting(resource);
    }

    /** Whether this lock listens for releases now. */
    boolean listening() {
        PgListener current = listener;
        return current != null && current.listening() != 0;
    }

    /** What a failure means; {@code statements} is null if no connection was made. */
    private SqlErrors.Failure classify(SQLException e, LockTable statements) {
        return SqlErrors.classify(
                e, statements != null, table, statements == null ? configuredDialect : statements.dialect);
    }

    // ---- connections and statements --------------------------------------------------------------

    /**
     * A connection for statements until {@code deadline}, with the table's statements resolved;
     * {@code uninterruptibly} for a renewal or a release, which must not give up on an interrupt.
     */
    private LockTable.Session open(long deadline, boolean uninterruptibly) throws SQLException {
        Connection connection = connect(deadline, uninterruptibly);
        try {
            statements(connection);
            return new LockTable.Session(connection, ticker, deadline);
        } catch (SQLException | RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /**
     * A connection from the data source by {@code deadline}: asked for on the connector thread, so
     * that a database that accepts a connection and then stays silent (or a pool that waits for
     * one) cannot hold the caller past the deadline. A connection that comes too late is closed.
     */
    private Connection connect(long deadline, boolean uninterruptibly) throws SQLException {
        long left = deadline - ticker.nanos();
        CompletableFuture<Connection> connecting;
        try {
            connecting = CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return dataSource.getConnection();
                        } catch (SQLException e) {
                            throw new CompletionException(e);
                        }
                    },
                    connector);
        } catch (RejectedExecutionException e) {
            throw new SQLTransientConnectionException(
                    "too many connections to the database are pending (" + MAX_CONNECTING + "): it does not answer");
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return connecting.get(Math.max(0, deadline - ticker.nanos()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    if (!uninterruptibly) {
                        connecting.thenAccept(JdbcLock::closeQuietly);
                        Thread.currentThread().interrupt();
                        throw new SQLException("interrupted while connecting to the database", e);
                    }
                    interrupted = true;
                }
            }
        } catch (TimeoutException e) {
            connecting.thenAccept(JdbcLock::closeQuietly);
            throw new SQLTimeoutException(
                    "no connection to the database within " + TimeUnit.NANOSECONDS.toMillis(Math.max(0, left)) + " ms");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof SQLException sql) {
                throw sql;
            }
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new SQLException("could not connect to the database: " + cause, cause);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (SQLException e) {
            log.debug("could not close a connection that came too late: {}", e.toString());
        }
    }

    private LockTable statements(Connection connection) throws SQLException {
        LockTable resolved = statements;
        if (resolved != null) {
            return resolved;
        }
        DatabaseMetaData metadata = connection.getMetaData();
        if (metadata.getURL() != null) {
            database = UrlDataSource.redact(metadata.getURL());
        }
        Dialect dialect = configuredDialect;
        if (dialect == null) {
            String product = metadata.getDatabaseProductName();
            dialect = Dialect.of(product, metadata.getDatabaseProductVersion())
                    .orElseThrow(() -> new IllegalSettingException(
                            "dialect",
                            "JdbcLock runs on PostgreSQL, MariaDB and H2, not on " + Holders.shown(product)
                                    + " (MySQL has no sequences for the fencing tokens); if this database speaks one"
                                    + " of their dialects, name it with dialect(...)"));
        }
        dialect.checkMaxResourceLength(maxResourceLength);
        resolved = new LockTable(table, dialect);
        statements = resolved;
        return resolved;
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
                            + ": a grant takes two statements, each allowed up to requestTimeout, and must come back"
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

    /** Configures a {@link JdbcLock}; every setting is checked in {@link #build()}. */
    public static final class Builder {
        private DataSource dataSource;
        private String url;
        private String user;
        private String password;
        private String table = "quorumlock_locks";
        private int maxResourceLength = 255;
        private String holder = Holders.defaultName();
        private Dialect dialect;
        private Duration requestTimeout = Duration.ofSeconds(5);
        private RetryPolicy retry = RetryPolicy.DEFAULT;
        private LockListener listener = LockListener.NONE;
        private int renewalThreads = 2;
        private Duration recheck = Duration.ofSeconds(1);

        private Builder() {}

        /**
         * The database, as the application's {@link DataSource} (a pool such as HikariCP): the lock
         * borrows a connection for each statement and gives it back at once. Either this or {@link
         * #url}. Bound the pool's own connection timeout: the lock cannot bound how long the pool
         * makes it wait for a connection.
         */
        public Builder dataSource(DataSource source) {
            this.dataSource = source;
            return this;
        }

        /**
         * The database's JDBC URL, such as {@code jdbc:postgresql://db:5432/app}: the lock connects
         * through {@link java.sql.DriverManager}, with connect and socket timeouts of the request
         * timeout, and keeps one connection between statements (checked after a second idle,
         * closed with the lock). The driver must be on the class path. Either this or {@link
         * #dataSource}; for a busy service, give it a pool.
         */
        public Builder url(String jdbcUrl) {
            this.url = jdbcUrl;
            return this;
        }

        /** The user for the {@linkplain #url URL}; or in the URL itself. */
        public Builder user(String user) {
            this.user = user;
            return this;
        }

        /** The password for the {@linkplain #url URL}; never shown in a message, a log or {@code toString()}. */
        public Builder password(String password) {
            this.password = password;
            return this;
        }

        /**
         * The lock table; its token sequence is named {@code <table>_token}. The default is {@code
         * quorumlock_locks}.
         *
         * @param table a SQL identifier (letters, digits and underscores, not starting with a digit,
         *     at most 57 characters, so that the sequence's name fits), optionally {@code schema.table}
         */
        public Builder table(String table) {
            this.table = table;
            return this;
        }

        /**
         * The longest resource name, the width of the table's {@code resource} column. The default is
         * 255; at most 897 on PostgreSQL (its btree index entry holds 2692 bytes of a name, and a
         * Java character takes up to 3 in UTF-8), 768 on MariaDB (its key holds 3072 bytes of
         * utf8mb4) and 10000 on H2, checked here if {@link #dialect} is set, else on the first
         * connection.
         */
        public Builder maxResourceLength(int maxResourceLength) {
            this.maxResourceLength = maxResourceLength;
            return this;
        }

        /**
         * How this process is named in the table's {@code holder} column and in other clients'
         * refusals: 1 to 64 printable ASCII characters. The default is {@code pid@host}.
         */
        public Builder holder(String holder) {
            this.holder = holder;
            return this;
        }

        /** The database's dialect; by default read from the driver's metadata on the first connection. */
        public Builder dialect(Dialect dialect) {
            this.dialect = dialect;
            return this;
        }

        /**
         * How long one statement (or a connection through the {@linkplain #url URL}) may take before
         * it counts as failed. The default is 5 s. A TTL must be at least a tenth of it (500 ms by
         * default): a grant takes two statements and must come back well within its TTL.
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = timeout;
            return this;
        }

        /**
         * The backoff between two attempts of {@link JdbcLock#acquire} while another holder has the
         * lock. The default is {@link RetryPolicy#DEFAULT} (10 to 200 ms).
         */
        public Builder retry(RetryPolicy policy) {
            this.retry = policy;
            return this;
        }

        /**
         * The listener told of every grant, refusal, renewal (automatic or a caller's extension), loss
         * and release, as backend {@code "jdbc"}. The default is {@link LockListener#NONE}.
         */
        public Builder listener(LockListener listener) {
            this.listener = listener;
            return this;
        }

        /**
         * On PostgreSQL, a thread waiting in {@link JdbcLock#acquire} is woken by the release
         * ({@code LISTEN}/{@code NOTIFY}) or when the holder's row ends, and tries again at least
         * this often anyway, in case a release went unheard (a pooler such as PgBouncer in
         * transaction mode passes no notifications). The default is 1 s. On MariaDB and H2 a waiter
         * polls with the {@linkplain #retry retry} backoff instead.
         */
        public Builder recheck(Duration interval) {
            this.recheck = interval;
            return this;
        }

        /**
         * How many threads renew leases at once; a renewal waits for the database up to the request
         * timeout. The default is 2.
         */
        public Builder renewalThreads(int threads) {
            this.renewalThreads = threads;
            return this;
        }

        /**
         * Checks the configuration and builds the lock; it connects on first use.
         *
         * @throws IllegalSettingException naming the setting that is wrong and how to fix it
         */
        public JdbcLock build() {
            Settings.requireArgument(
                    dataSource == null || url == null,
                    "url",
                    "both dataSource(...) and url(...) are set: give the lock one of them");
            Settings.requireArgument(
                    dataSource != null || url != null,
                    "url",
                    "no database: give the lock the application's DataSource with dataSource(...), or a JDBC URL"
                            + " with url(\"jdbc:postgresql://host:5432/db\")");
            Settings.requireArgument(
                    dataSource == null || (user == null && password == null),
                    "user",
                    "user(...) and password(...) are for url(...): a DataSource carries its own");
            if (url != null) {
                Settings.requireArgument(
                        url.startsWith("jdbc:"),
                        "url",
                        "url '%s' must be a JDBC URL, such as jdbc:postgresql://host:5432/db or"
                                + " jdbc:mariadb://host:3306/db",
                        UrlDataSource.redact(url));
            }
            Settings.requireArgument(
                    table != null && TABLE_NAME.matcher(table).matches(),
                    "table",
                    "table must be a SQL identifier (letters, digits and underscores, not starting with a digit,"
                            + " at most 57 characters, optionally schema.table), was '%s'",
                    table == null ? "null" : Holders.shown(table));
            Settings.requireArgument(
                    maxResourceLength >= 1 && maxResourceLength <= 10_000,
                    "maxResourceLength",
                    "maxResourceLength must be from 1 to 10000 characters, was %d (at most 897 on PostgreSQL, 768"
                            + " on MariaDB)",
                    maxResourceLength);
            if (dialect != null) {
                dialect.checkMaxResourceLength(maxResourceLength);
            }
            Holders.problem(holder).ifPresent(problem -> {
                throw new IllegalSettingException("holder", problem);
            });
            Settings.positive("requestTimeout", requestTimeout, " (the default is 5 s)");
            Settings.retry(retry);
            Settings.listener(listener);
            Settings.atLeast("renewalThreads", renewalThreads, 1);
            Settings.positive("recheck", recheck, " (the default is 1 s)");
            if (dataSource != null) {
                return new JdbcLock(
                        this,
                        dataSource,
                        "the database of " + dataSource.getClass().getSimpleName());
            }
            return new JdbcLock(
                    this, new UrlDataSource(url, user, password, requestTimeout), UrlDataSource.redact(url));
        }
    }
}
