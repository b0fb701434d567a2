package io.quorumlock.jdbc;

import io.quorumlock.internal.LocalLine;
import io.quorumlock.internal.Ticker;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread of a {@link JdbcLock} that waits for releases on a connection of its own while
 * threads wait, so that a release wakes them at once: started when the first thread waits, ended
 * once none waits (after the linger of {@link #session}) or the lock closes. A connection that
 * fails is taken again a second later; meanwhile, and for good where the database cannot tell of
 * releases, the waiters poll with the lock's backoff, which is logged once. How a connection waits
 * is its subclass's: {@link PgListener} ({@code LISTEN}), {@link MariaDbWaker} ({@code SLEEP}
 * ended by the release).
 */
abstract class WakeThread implements ReleaseSignal {

    private static final Logger log = LoggerFactory.getLogger(WakeThread.class);

    /** How long the connection is kept after the last waiter left. */
    static final long LINGER_MILLIS = 5_000;

    /** Gives a connection by a deadline. */
    @FunctionalInterface
    interface Connector {
        Connection connect(long deadlineNanos) throws SQLException;
    }

    final Connector connector;
    final LocalLine waiters;
    final Ticker ticker;
    final long requestTimeoutNanos;
    final String database;
    private final ThreadFactory threads;

    /** Guarded by this, as are {@link #closed} and {@link #warned}. */
    private boolean running;

    private boolean closed;
    private boolean warned;
    /** Set for good when the connections cannot wait for releases at all (another driver). */
    private volatile boolean unsupported;

    WakeThread(
            Connector connector,
            LocalLine waiters,
            Ticker ticker,
            long requestTimeoutNanos,
            ThreadFactory threads,
            String database) {
        this.connector = connector;
        this.waiters = waiters;
        this.ticker = ticker;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.threads = threads;
        this.database = database;
    }

    /**
     * Waits for releases on one connection until no thread has waited for the linger, or the lock
     * closes ({@link #closed()}); throws when the connection fails.
     */
    abstract void session() throws SQLException;

    /** Forgets what the last connection heard: no release is heard until the next one waits. */
    abstract void deaf();

    /** What the waiters wait for while none is heard, such as {@code it can LISTEN again}. */
    abstract String until();

    /** The lock closes: ends a wait under way on the connection, if it can. */
    void closing() {}

    /** The thread ends: forgets what it was asked for. */
    void ended() {
        deaf();
    }

    @Override
    public boolean usable() {
        return !unsupported;
    }

    /** Starts the thread if it is not running and may run; true if this started it. */
    final synchronized boolean start() {
        if (running || closed || unsupported) {
            return false;
        }
        running = true;
        threads.newThread(this::run).start();
        return true;
    }

    final synchronized boolean closed() {
        return closed;
    }

    @Override
    public final void close() {
        synchronized (this) {
            closed = true;
            notifyAll();
        }
        closing();
    }

    private synchronized boolean stopping() {
        if (closed || unsupported || waiters.isEmpty()) {
            running = false;
            return true;
        }
        return false;
    }

    private void run() {
        while (!stopping()) {
            try {
                session();
            } catch (SQLException | RuntimeException e) {
                lost(e);
                pauseAfterFailure();
            } catch (LinkageError e) {
                unsupported("the driver's classes are not reachable from this library: " + e);
            }
        }
        ended();
        waiters.wakeAll(); // whoever still waits polls from now on
    }

    /** The connections cannot wait for releases: the waiters poll for good. */
    final void unsupported(String why) {
        unsupported = true;
        log.info("waiters for locks on {} poll with the backoff: {}", database, why);
    }

    private void lost(Exception e) {
        String why = e instanceof SQLException sql
                ? SqlErrors.shortMessage(sql)
                : e.getClass().getSimpleName();
        deaf();
        waiters.wakeAll();
        boolean first;
        synchronized (this) {
            first = !warned;
            warned = true;
        }
        String message = "waiters for locks on {} poll with the backoff until " + until() + ": {}";
        if (first) {
            log.warn(message, database, why);
        } else {
            log.debug(message, database, why);
        }
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
