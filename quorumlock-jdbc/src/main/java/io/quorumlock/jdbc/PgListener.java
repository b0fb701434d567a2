package io.quorumlock.jdbc;

import io.quorumlock.internal.LocalLine;
import io.quorumlock.internal.Ticker;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one connection of a {@link JdbcLock} on PostgreSQL that {@code LISTEN}s for releases while
 * threads wait, so that a release wakes them at once: the release statement sends the resource's
 * name with {@code pg_notify}. Taken from the data source when the first thread waits, and given
 * back ({@code UNLISTEN *} first) once none has waited for {@link #LINGER_MILLIS}. When it cannot
 * listen (a pooler that drops notifications, another driver than pgjdbc, a broken connection),
 * waiters poll with the lock's backoff meanwhile; that is logged once.
 */
final class PgListener implements ReleaseSignal {

    private static final Logger log = LoggerFactory.getLogger(PgListener.class);

    /** How long the connection is kept after the last waiter left. */
    static final long LINGER_MILLIS = 5_000;

    /** How long one read for notifications blocks. */
    private static final int READ_MILLIS = 250;

    /** How often a silent connection is checked with a round trip. */
    private static final long CHECK_NANOS = TimeUnit.SECONDS.toNanos(5);

    /** The longest resource name sent as a payload (PostgreSQL's limit is 8,000 bytes). */
    static final int MAX_PAYLOAD_BYTES = 4_000;

    /** Gives a connection by a deadline. */
    @FunctionalInterface
    interface Connector {
        Connection connect(long deadlineNanos) throws SQLException;
    }

    private final String channel;
    private final Connector connector;
    private final LocalLine waiters;
    private final Ticker ticker;
    private final long requestTimeoutNanos;
    private final ThreadFactory threads;
    private final String database;

    /** The number of the current {@code LISTEN}, or 0 while not listening; grows with each new one. */
    private volatile long listening;

    private long listens;
    private boolean running;
    private boolean closed;
    private boolean warned;
    /** Set for good when the connections cannot listen at all (another driver). */
    private volatile boolean unsupported;

    /** Whether pgjdbc, whose connections can wait for notifications, is on the class path. */
    static boolean driverPresent() {
        try {
            Class.forName("org.postgresql.PGConnection", false, PgListener.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    PgListener(
            String channel,
            Connector connector,
            LocalLine waiters,
            Ticker ticker,
            long requestTimeoutNanos,
            ThreadFactory threads,
            String database) {
        this.channel = channel;
        this.connector = connector;
        this.waiters = waiters;
        this.ticker = ticker;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.threads = threads;
        this.database = database;
    }

    /** The channel of {@code table}'s releases: its name in lower case, {@code .} as {@code _}, at most 63 bytes. */
    static String channel(String table) {
        String name = table.toLowerCase(Locale.ROOT).replace('.', '_');
        return name.length() > 63 ? name.substring(0, 63) : name;
    }

    /** The payload a release of {@code resource} sends: its name, or empty (wake every waiter) if too long. */
    static String payload(String resource) {
        return resource.getBytes(StandardCharsets.UTF_8).length <= MAX_PAYLOAD_BYTES ? resource : "";
    }

    @Override
    public boolean usable() {
        return !unsupported;
    }

    /**
     * The number of the {@code LISTEN} in force, or 0 while not listening: a waiter whose attempt
     * ran under the same number cannot have missed a release since.
     */
    long listening() {
        return listening;
    }

    /** The number of the {@code LISTEN} in force, for every resource. */
    @Override
    public long listening(String resource) {
        return listening;
    }

    /** A thread waits: starts listening if it is not yet. */
    @Override
    public synchronized void wanted(String resource) {
        if (running || closed || unsupported) {
            return;
        }
        running = true;
        threads.newThread(this::run).start();
    }

    @Override
    public synchronized void close() {
        closed = true;
        notifyAll();
    }

    private synchronized boolean stopping(boolean idle) {
        if (closed || unsupported || (idle && waiters.isEmpty())) {
            running = false;
            return true;
        }
        return false;
    }

    private void run() {
        while (!stopping(true)) {
            try {
                listen();
            } catch (SQLException | RuntimeException e) {
                lost(e);
                pauseAfterFailure();
            } catch (LinkageError e) {
                unsupported("the PostgreSQL driver's PGConnection is not reachable from this library: " + e);
            }
        }
        listening = 0;
        waiters.wakeAll(); // whoever still waits polls from now on
    }

    private void listen() throws SQLException {
        try (Connection connection = connector.connect(ticker.nanos() + requestTimeoutNanos)) {
            PGConnection pg;
            try {
                pg = connection.unwrap(PGConnection.class);
            } catch (SQLException notPgjdbc) {
                unsupported("the connections are not pgjdbc's ("
                        + connection.getClass().getName() + ")");
                return;
            }
            connection.setNetworkTimeout(Runnable::run, (int) TimeUnit.NANOSECONDS.toMillis(requestTimeoutNanos));
            if (!connection.getAutoCommit()) {
                connection.setAutoCommit(true); // LISTEN takes effect at commit
            }
            try {
                execute(connection, "LISTEN " + channel);
                synchronized (this) {
                    listening = ++listens;
                }
                waiters.wakeAll(); // their attempts ran before the LISTEN: they try again, now heard
                log.debug("listening for releases on {} (channel {})", database, channel);
                receive(connection, pg);
            } finally {
                listening = 0;
                if (!connection.isClosed()) {
                    execute(connection, "UNLISTEN *"); // before the connection goes back to a pool
                }
            }
        }
    }

    /** Reads notifications until no thread has waited for the linger time, or the listener closes. */
    private void receive(Connection connection, PGConnection pg) throws SQLException {
        long lastCheck = ticker.nanos();
        long idleSince = 0;
        while (true) {
            PGNotification[] notifications = pg.getNotifications(READ_MILLIS);
            long now = ticker.nanos();
            if (notifications != null && notifications.length > 0) {
                lastCheck = now;
                for (PGNotification notification : notifications) {
                    if (channel.equals(notification.getName())) {
                        String resource = notification.getParameter();
                        if (resource == null || resource.isEmpty()) {
                            waiters.wakeAll();
                        } else {
                            waiters.wake(resource);
                        }
                    }
                }
            } else if (now - lastCheck > CHECK_NANOS) {
                execute(connection, "SELECT 1"); // a silent connection may be a cut one
                lastCheck = now;
            }
            if (!waiters.isEmpty()) {
                idleSince = 0;
            } else if (idleSince == 0) {
                idleSince = now;
            }
            boolean idle = idleSince != 0 && now - idleSince > TimeUnit.MILLISECONDS.toNanos(LINGER_MILLIS);
            synchronized (this) {
                if (closed || (idle && waiters.isEmpty())) {
                    return;
                }
            }
        }
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private void lost(Exception e) {
        String why = e instanceof SQLException sql
                ? SqlErrors.shortMessage(sql)
                : e.getClass().getSimpleName();
        listening = 0;
        waiters.wakeAll();
        boolean first;
        synchronized (this) {
            first = !warned;
            warned = true;
        }
        String message = "waiters for locks on {} poll with the backoff until it can LISTEN again: {}";
        if (first) {
            log.warn(message, database, why);
        } else {
            log.debug(message, database, why);
        }
    }

    private void unsupported(String why) {
        unsupported = true;
        log.info("waiters for locks on {} poll with the backoff: {}", database, why);
    }

    private synchronized void pauseAfterFailure() {
        try {
            if (!closed) {
                wait(1_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }
}
