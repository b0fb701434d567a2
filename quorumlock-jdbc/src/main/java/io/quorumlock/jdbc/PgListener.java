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
 * waiters poll with the lock's backoff meanwhile ({@link WakeThread}).
 */
final class PgListener extends WakeThread {

    private static final Logger log = LoggerFactory.getLogger(PgListener.class);

    /** How long one read for notifications blocks. */
    private static final int READ_MILLIS = 250;

    /** How often a silent connection is checked with a round trip. */
    private static final long CHECK_NANOS = TimeUnit.SECONDS.toNanos(5);

    /** The longest resource name sent as a payload (PostgreSQL's limit is 8,000 bytes). */
    static final int MAX_PAYLOAD_BYTES = 4_000;

    private final String channel;

    /** The number of the current {@code LISTEN}, or 0 while not listening; grows with each new one. */
    private volatile long listening;

    /** Guarded by this. */
    private long listens;

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
        super(connector, waiters, ticker, requestTimeoutNanos, threads, database);
        this.channel = channel;
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
    public void wanted(String resource) {
        start();
    }

    @Override
    void deaf() {
        listening = 0;
    }

    @Override
    String until() {
        return "it can LISTEN again";
    }

    @Override
    void session() throws SQLException {
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
            if (closed() || idle && waiters.isEmpty()) {
                return;
            }
        }
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
