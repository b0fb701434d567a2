package io.quorumlock.jdbc;

import io.quorumlock.RetryPolicy;
import io.quorumlock.internal.LocalLine;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What wakes the threads waiting in a {@link JdbcLock}'s {@code acquire}: their queue per resource,
 * each acquire's pause ({@link ReleaseWait}), and what hears the releases, made once the first
 * connection showed the dialect: on PostgreSQL the {@link PgListener}, on MariaDB the {@link
 * MariaDbWaker}. Where none can be made (H2), waiters poll with the lock's backoff.
 */
final class ReleaseWaits {

    private static final Logger log = LoggerFactory.getLogger(JdbcLock.class);

    private final Connections connections;
    private final RetryPolicy retry;
    private final long recheckNanos;
    private final int instance;
    /** The lock's: once closed, no listener is made. */
    private final AtomicBoolean closed;

    /** The threads waiting in {@link JdbcLock#acquire}, woken by releases where the database tells of them. */
    private final LocalLine waiters = new LocalLine();
    /** Listens for releases; made once the dialect is known. */
    private volatile ReleaseSignal listener;
    /** Set when no listener can be made: waiters poll. */
    private volatile boolean polls;

    ReleaseWaits(Connections connections, RetryPolicy retry, long recheckNanos, int instance, AtomicBoolean closed) {
        this.connections = connections;
        this.retry = retry;
        this.recheckNanos = recheckNanos;
        this.instance = instance;
        this.closed = closed;
    }

    /** The pauses of one acquire between its attempts; closed when the acquire ends. */
    ReleaseWait pause(String resource) {
        return new ReleaseWait(resource, waiters, this::listener, retry, recheckNanos, connections.ticker, closed::get);
    }

    /**
     * The listener for releases, once the first connection showed PostgreSQL with pgjdbc on the
     * class path, or MariaDB; null otherwise (waiters poll).
     */
    private ReleaseSignal listener() {
        ReleaseSignal current = listener;
        LockTable resolved = connections.statements();
        if (current != null || resolved == null || resolved.dialect == Dialect.H2 || closed.get() || polls) {
            return current;
        }
        synchronized (waiters) {
            if (listener == null && !polls && resolved.dialect == Dialect.MARIADB) {
                listener = new MariaDbWaker(
                        resolved.table,
                        deadline -> connections.connect(deadline, false),
                        this::kick,
                        waiters,
                        connections.ticker,
                        connections.requestTimeoutNanos,
                        Connections.daemon("quorumlock-jdbc-" + instance + "-wait"),
                        connections.database());
            } else if (listener == null && !polls) {
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
                        connections.ticker,
                        connections.requestTimeoutNanos,
                        Connections.daemon("quorumlock-jdbc-" + instance + "-listen"),
                        connections.database());
            }
            return listener;
        }
    }

    /** Ends the current statement of the MariaDB connection {@code id}, the waker's sleep. */
    private void kick(long id) {
        try (LockTable.Session session =
                connections.open(connections.ticker.nanos() + connections.requestTimeoutNanos, false)) {
            MariaDbWaker.kill(session, id);
        } catch (java.sql.SQLException e) {
            log.debug("could not wake the waiting connection {}: {}", id, SqlErrors.shortMessage(e));
        }
    }

    /** How many threads wait for {@code resource} after a refusal. */
    int waiting(String resource) {
        return waiters.waiting(resource);
    }

    /** Whether the lock listens for releases now. */
    boolean listening() {
        ReleaseSignal current = listener;
        return current instanceof PgListener pg && pg.listening() != 0;
    }

    /** Whether the lock hears the releases of {@code resource} now. */
    boolean listening(String resource) {
        ReleaseSignal current = listener;
        return current != null && current.listening(resource) != 0;
    }

    /** Stops listening, if the lock listened, and wakes the waiters; called once the lock is closed. */
    void close() {
        waiters.wakeEvery(); // their next attempt finds the lock closed
        ReleaseSignal listening = listener;
        if (listening != null) {
            listening.close();
        }
    }
}
