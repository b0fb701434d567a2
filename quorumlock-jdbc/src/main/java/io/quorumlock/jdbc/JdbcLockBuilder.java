package io.quorumlock.jdbc;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.LockListener;
import io.quorumlock.RetryPolicy;
import io.quorumlock.internal.Holders;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import java.time.Duration;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/** Configures a {@link JdbcLock}; every setting is checked in {@link #build()}. */
public final class JdbcLockBuilder {

    /** A regular SQL identifier, optionally qualified by a schema (PostgreSQL's limit is 63 bytes). */
    private static final Pattern TABLE_NAME =
            Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,56}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    private DataSource dataSource;
    private String url;
    private String user;
    private String password;

    // Read by the lock's constructor once build() checked them.
    String table = "quorumlock_locks";
    int maxResourceLength = 255;
    String holder = Holders.defaultName();
    Dialect dialect;
    Duration requestTimeout = Duration.ofSeconds(5);
    RetryPolicy retry = RetryPolicy.DEFAULT;
    LockListener listener = LockListener.NONE;
    Ticker ticker = Ticker.SYSTEM;
    /** Null: the lock makes its own. */
    Timers timers;

    int renewalThreads = 2;
    Duration recheck = Duration.ofSeconds(1);

    JdbcLockBuilder() {}

    /**
     * The database, as the application's {@link DataSource} (a pool such as HikariCP): the lock
     * borrows a connection for each statement and gives it back at once, but for the connection of
     * a {@code tryAcquire} (or an {@code acquire} that does not wait) and of a release, which it
     * keeps 10 ms for the next one of these, so that back-to-back grants and releases skip asking
     * the pool on a thread of their own. Either this or {@link
     * #url}. Bound the pool's own connection timeout: the lock cannot bound how long the pool
     * makes it wait for a connection.
     */
    public JdbcLockBuilder dataSource(DataSource source) {
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
    public JdbcLockBuilder url(String jdbcUrl) {
        this.url = jdbcUrl;
        return this;
    }

    /** The user for the {@linkplain #url URL}; or in the URL itself. */
    public JdbcLockBuilder user(String user) {
        this.user = user;
        return this;
    }

    /** The password for the {@linkplain #url URL}; never shown in a message, a log or {@code toString()}. */
    public JdbcLockBuilder password(String password) {
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
    public JdbcLockBuilder table(String table) {
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
    public JdbcLockBuilder maxResourceLength(int maxResourceLength) {
        this.maxResourceLength = maxResourceLength;
        return this;
    }

    /**
     * How this process is named in the table's {@code holder} column and in other clients'
     * refusals: 1 to 64 printable ASCII characters. The default is {@code pid@host}.
     */
    public JdbcLockBuilder holder(String holder) {
        this.holder = holder;
        return this;
    }

    /** The database's dialect; by default read from the driver's metadata on the first connection. */
    public JdbcLockBuilder dialect(Dialect dialect) {
        this.dialect = dialect;
        return this;
    }

    /**
     * How long one statement (or a connection through the {@linkplain #url URL}) may take before
     * it counts as failed. The default is 5 s. A TTL must be at least a tenth of it (500 ms by
     * default): a grant must come back well within its TTL.
     */
    public JdbcLockBuilder requestTimeout(Duration timeout) {
        this.requestTimeout = timeout;
        return this;
    }

    /**
     * The backoff between two attempts of {@link JdbcLock#acquire} while another holder has the
     * lock. The default is {@link RetryPolicy#DEFAULT} (10 to 200 ms).
     */
    public JdbcLockBuilder retry(RetryPolicy policy) {
        this.retry = policy;
        return this;
    }

    /**
     * The clock every validity and deadline of the lock counts on; by default {@link
     * Ticker#SYSTEM}, the monotonic clock. For tests that run the lock on a clock of their own.
     * {@link Ticker} is an internal type of the library and may change in any release.
     */
    public JdbcLockBuilder ticker(Ticker ticker) {
        this.ticker = Settings.notNull("ticker", ticker, "pass a Ticker, or leave the default");
        return this;
    }

    /**
     * The threads that keep the lock's leases alive: a timer, workers for the renewals and
     * threads for the notices; by default the lock's own, started on first use. For tests that
     * run the leases' lives on timers of their own. The lock closes them when it is closed.
     * {@link Timers} is an internal type of the library and may change in any release.
     */
    public JdbcLockBuilder timers(Timers timers) {
        this.timers = Settings.notNull("timers", timers, "pass Timers, or leave the default");
        return this;
    }

    /**
     * The listener told of every grant, refusal, renewal (automatic or a caller's extension), loss
     * and release, as backend {@code "jdbc"}. The default is {@link LockListener#NONE}.
     */
    public JdbcLockBuilder listener(LockListener listener) {
        this.listener = listener;
        return this;
    }

    /**
     * On PostgreSQL and MariaDB, a thread waiting in {@link JdbcLock#acquire} is woken by the
     * release (PostgreSQL: {@code LISTEN}/{@code NOTIFY}; MariaDB: the release ends the waiting
     * lock's {@code SLEEP} in the database) or when the holder's row ends, and tries again at
     * least this often anyway, in case a release went unheard (a pooler such as PgBouncer in
     * transaction mode passes no notifications; on MariaDB, a waiter of another database user).
     * The default is 1 s. On H2 a waiter polls with the {@linkplain #retry retry} backoff
     * instead.
     */
    public JdbcLockBuilder recheck(Duration interval) {
        this.recheck = interval;
        return this;
    }

    /**
     * How many threads renew leases at once; a renewal waits for the database up to the request
     * timeout. The default is 2.
     */
    public JdbcLockBuilder renewalThreads(int threads) {
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
                    this, dataSource, "the database of " + dataSource.getClass().getSimpleName());
        }
        return new JdbcLock(this, new UrlDataSource(url, user, password, requestTimeout), UrlDataSource.redact(url));
    }
}
