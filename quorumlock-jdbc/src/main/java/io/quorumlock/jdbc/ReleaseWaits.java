package io.quorumlock.jdbc;

import io.quorumlock.RetryPolicy;
import io.quorumlock.internal.LocalLine;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What wakes the threads waiting in a {@link JdbcLock}'s {@code acquire}: their queue per resource,
 * each acquire's pause ({@link ReleaseWait}), and on PostgreSQL the {@link PgListener} that hears
 * the releases, made once the first connection showed the dialect. Where no listener can be made,
 * waiters poll with the lock's backoff.
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
    /** Listens for releases on PostgreSQL; made once the dialect is known. */
    private volatile PgListener listener;
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
    ReleaseWait pause() {
        return new ReleaseWait(waiters, this::listener, retry, recheckNanos, connections.ticker);
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
                        connections.ticker,
                        connections.requestTimeoutNanos,
                        Connections.daemon("quorumlock-jdbc-" + instance + "-listen"),
                        connections.database());
            }
            return listener;
        }
    }

    /** How many threads wait for {@code resource} after a refusal. */
    int waiting(String resource) {
        return waiters.waiting(resource);
    }

    /** Whether the lock listens for releases now. */
    boolean listening() {
        PgListener current = listener;
        return current != null && current.listening() != 0;
    }

    /** Stops listening, if the lock listened; called once the lock is closed. */
    void close() {
        PgListener listening = listener;
        if (listening != null) {
            listening.close();
        }
    }
}
