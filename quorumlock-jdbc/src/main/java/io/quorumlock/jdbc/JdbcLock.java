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
import io.quorumlock.internal.AcquireLoop;
import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.CriticalSections;
import io.quorumlock.internal.Holders;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import io.quorumlock.internal.Waiters;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
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

    /** The least time the first attempt of an {@code acquire} gets, for a cold connection. */
    private static final long FIRST_ATTEMPT_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** A regular SQL identifier, optionally qualified by a schema (PostgreSQL's limit is 63 bytes). */
    private static final Pattern TABLE_NAME =
            Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,56}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    private static final AtomicInteger instances = new AtomicInteger();

    private final String table;
    private final int maxResourceLength;
    private final long requestTimeoutNanos;
    private final long ttlFloorMillis;
    private final long overrunNanos;
    private final RetryPolicy retry;
    private final long recheckNanos;
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

    /** The threads waiting in {@link #acquire}, woken by releases where the database tells of them. */
    private final Waiters waiters = new Waiters();
    /** Listens for releases on PostgreSQL; made once the dialect is known. */
    private volatile PgListener listener;
    /** Set when no listener can be made: waiters poll. */
    private volatile boolean polls;

    private final int instance;
    private final AtomicBoolean closed = new AtomicBoolean();

    private JdbcLock(Builder builder, DataSource dataSource, String database) {
        this.ticker = builder.ticker;
        this.table = builder.table;
        this.maxResourceLength = builder.maxResourceLength;
        this.requestTimeoutNanos = builder.requestTimeout.toNanos();
        this.ttlFloorMillis = Math.max(1, builder.requestTimeout.toMillis() / TTL_FLOOR_DIVISOR);
        this.overrunNanos = AcquireLoop.overrun(builder.requestTimeout).toNanos();
        this.retry = builder.retry;
        this.recheckNanos = builder.recheck.toNanos();
        this.events = LockEvents.of("jdbc", builder.listener);
        this.instance = instances.incrementAndGet();
        this.timers =
                builder.timers != null ? builder.timers : Timers.threads("jdbc-" + instance, builder.renewalThreads);
        this.connections = new Connections(
                dataSource, database, table, maxResourceLength, builder.dialect, ticker, requestTimeoutNanos, instance);
        this.rows = new JdbcRows(connections, this::ttlMillis);
        this.attempts = new JdbcAttempts(connections, rows, events, timers, builder.holder, closed);
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
                () -> attempts.attempt(resource, ttlMillis, ticker.nanos() + requestTimeoutNanos, null));
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
                        return attempts.attempt(resource, ttlMillis, ticker.nanos() + budget, pause);
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
        LockTable resolved = connections.statements();
        if (current != null || resolved == null || resolved.channel == null || closed.get() || polls) {
            return current;
        }
        synchronized (waiters) {
            if (listener == null && !polls) {
                polls = !PgListener.driverPresent();
                if (polls) {
                    log.info(
                            "waiters for locks on {} poll with the backoff: pgjdbc is not on the class path",
                            connections.database());
                    return null;
                }
                listener = new PgListener(
                        resolved.channel,
                        deadline -> connections.connect(deadline, false),
                        waiters,
                        ticker,
                        requestTimeoutNanos,
                        Connections.daemon("quorumlock-jdbc-" + instance + "-listen"),
                        connections.database());
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
        try (LockTable.Session session = connections.open(ticker.nanos() + requestTimeoutNanos, false)) {
            for (String ddl : ddl(connections.statements().dialect)) {
                try (PreparedStatement statement = session.prepare(ddl)) {
                    statement.execute();
                }
            }
        } catch (SQLException e) {
            throw new QuorumlockException(
                    connections.database() + ": could not create the lock table " + table + ": "
                            + SqlErrors.shortMessage(e),
                    e);
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
        try (LockTable.Session session = connections.open(deadline, false)) {
            statements = connections.statements();
            long before = System.currentTimeMillis();
            long clock = statements.clockMillis(session);
            long after = System.currentTimeMillis();
            statements.read(session, "");
            statements.renew(session, "", -1, 1); // changes nothing: checks the privilege to update
            statements.nextToken(session);
            long offset = clock - (before + after) / 2;
            return new DatabaseCheck(
                    connections.database(),
                    statements.dialect,
                    Duration.ofMillis(offset),
                    Duration.ofMillis(after - before));
        } catch (SQLException e) {
            SqlErrors.Failure failure = connections.classify(e, statements);
            throw new QuorumlockException(
                    connections.database() + ": " + failure.kind().description() + " (" + failure.detail() + ")", e);
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
        PgListener listening = listener;
        if (listening != null) {
            listening.close();
        }
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
        return waiters.waiting(resource);
    }

    /** Whether this lock listens for releases now. */
    boolean listening() {
        PgListener current = listener;
        return current != null && current.listening() != 0;
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
        private Ticker ticker = Ticker.SYSTEM;
        /** Null: the lock makes its own. */
        private Timers timers;

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
         * The clock every validity and deadline of the lock counts on; by default {@link
         * Ticker#SYSTEM}, the monotonic clock. For tests that run the lock on a clock of their own.
         * {@link Ticker} is an internal type of the library and may change in any release.
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Settings.notNull("ticker", ticker, "pass a Ticker, or leave the default");
            return this;
        }

        /**
         * The threads that keep the lock's leases alive: a timer, workers for the renewals and
         * threads for the notices; by default the lock's own, started on first use. For tests that
         * run the leases' lives on timers of their own. The lock closes them when it is closed.
         * {@link Timers} is an internal type of the library and may change in any release.
         */
        public Builder timers(Timers timers) {
            this.timers = Settings.notNull("timers", timers, "pass Timers, or leave the default");
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
