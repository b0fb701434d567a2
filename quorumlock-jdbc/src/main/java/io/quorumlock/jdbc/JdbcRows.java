package io.quorumlock.jdbc;

import io.quorumlock.internal.KeepAlive;
import io.quorumlock.internal.Ticker;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The rows of a {@link JdbcLock}'s table as its leases use them: their renewals, their release, their end. */
final class JdbcRows implements JdbcLease.Rows {

    private static final Logger log = LoggerFactory.getLogger(JdbcLock.class);

    private final Connections connections;
    private final Ticker ticker;
    private final long requestTimeoutNanos;
    /** The lock's check of a TTL, for {@link JdbcLease#extend}. */
    private final ToLongFunction<Duration> ttlMillis;
    /** The leases the lock holds, which {@link JdbcLock#close()} ends. */
    final Set<JdbcLease> leases = ConcurrentHashMap.newKeySet();

    JdbcRows(Connections connections, ToLongFunction<Duration> ttlMillis) {
        this.connections = connections;
        this.ticker = connections.ticker;
        this.requestTimeoutNanos = connections.requestTimeoutNanos;
        this.ttlMillis = ttlMillis;
    }

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
            session = connections.open(deadline - endNanos < 0 ? deadline : endNanos, true);
        } catch (SQLException e) {
            return KeepAlive.Result.notSent(
                    "no connection to " + connections.database() + ": " + SqlErrors.shortMessage(e));
        }
        try (session) {
            return connections.statements().renew(session, resource, token, TimeUnit.NANOSECONDS.toMillis(ttlNanos))
                    ? KeepAlive.Result.RENEWED
                    : KeepAlive.Result.gone("the lock's row no longer holds this lease's token: it expired and was"
                            + " taken by another holder, or was freed by hand; storage that has seen a newer token"
                            + " refuses this one");
        } catch (SQLException e) {
            log.debug("could not renew '{}' on {}: {}", resource, connections.database(), SqlErrors.shortMessage(e));
            return KeepAlive.Result.unknown(
                    "no answer to the renewal from " + connections.database() + ": " + SqlErrors.shortMessage(e));
        }
    }

    @Override
    public void release(String resource, long token) {
        releaseRow(resource, token);
    }

    @Override
    public long ttlMillis(Duration ttl) {
        return ttlMillis.applyAsLong(ttl);
    }

    @Override
    public void forget(JdbcLease lease) {
        leases.remove(lease);
    }

    /**
     * Frees the row if it holds {@code token}, within the request timeout, also on an interrupted
     * thread; a failure is logged.
     *
     * @return true if it freed the row
     */
    boolean releaseRow(String resource, long token) {
        try (LockTable.Session session = connections.open(ticker.nanos() + requestTimeoutNanos, true, true)) {
            boolean freed = connections.statements().release(session, resource, token);
            session.keep();
            if (freed) {
                return true;
            }
            log.debug("the row of '{}' did not hold token {} at the release", resource, token);
        } catch (SQLException e) {
            log.warn(
                    "could not free the row of '{}' (token {}) on {}; it expires by its TTL: {}",
                    resource,
                    token,
                    connections.database(),
                    SqlErrors.shortMessage(e));
        }
        return false;
    }
}
