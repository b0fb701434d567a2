package io.quorumlock.jdbc;

import io.quorumlock.FencedLease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.internal.CoreLease;
import io.quorumlock.internal.KeepAlive;
import io.quorumlock.internal.LeaseCore;
import io.quorumlock.internal.LeaseTimes;
import io.quorumlock.internal.LockEvents;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One grant of a {@link JdbcLock}: the resource's row, held with this lease's token until an
 * expiry the database sets by its own clock, renewed by the lease engine ({@link KeepAlive}) when
 * two thirds of the TTL are left.
 *
 * <p>Time: every renewal (and {@link #extend}) is counted from when its statement was sent, no
 * later than when the database ran it, less the drift allowance (1% of the TTL + 2 ms), so the
 * lease never believes it has more time than its row. A renewal whose effect is unknown (no answer
 * in time) may have set the row's expiry to its TTL: it brings the end forward to what that round
 * may have set, and every later renewal counts with the shortest such TTL. A renewal that could not
 * reach the database (no connection) changes nothing.
 *
 * <p>The lease is in doubt ({@link #inDoubt()}) once a third of its TTL is left without an answered
 * renewal, and lost when no renewal can be answered in time, or when a renewal finds the row no
 * longer holds its token.
 */
final class JdbcLease extends CoreLease implements FencedLease, KeepAlive.Driver {

    /** The rows of the lock's table, as a lease uses them. */
    interface Rows {
        /** One renewal of the row held with {@code token} to {@code ttlNanos}, answered before {@code endNanos}. */
        KeepAlive.Result renew(String resource, long token, long ttlNanos, long endNanos);

        /** Frees the row if it holds {@code token}. */
        void release(String resource, long token);

        /** The TTL in milliseconds, checked as the lock checks it. */
        long ttlMillis(Duration ttl);

        /** The lease ended: the lock no longer closes it. */
        void forget(JdbcLease lease);
    }

    private final Rows rows;
    private final long token;
    private final KeepAlive keepAlive;

    JdbcLease(
            Rows rows,
            Ticker ticker,
            LockEvents events,
            Timers timers,
            String resource,
            long token,
            long ttlNanos,
            long sentNanos,
            long roundNanos) {
        super(core(resource, ticker, events, LeaseTimes.endAfter(sentNanos, ttlNanos)));
        this.rows = rows;
        this.token = token;
        this.keepAlive = new KeepAlive(core, this, timers, ttlNanos, roundNanos);
    }

    private static LeaseCore core(String resource, Ticker ticker, LockEvents events, long end) {
        return new LeaseCore(resource, ticker, events, LeaseCore.State.VALID, end, end - ticker.nanos());
    }

    @Override
    public long fencingToken() {
        return token;
    }

    /**
     * Sets the row's expiry to {@code ttl} from now, and renews with that TTL from then on.
     *
     * @return true if the database moved the expiry and the lease is valid; false if the lease is no
     *     longer valid (nothing is changed then), the row no longer holds its token (the lease is
     *     then lost), no connection came within the request timeout (nothing is changed then), or
     *     no answer came within the request timeout (the lease then ends no later than {@code ttl}
     *     from the call)
     */
    @Override
    public boolean extend(Duration ttl) {
        long ttlNanos = TimeUnit.MILLISECONDS.toNanos(rows.ttlMillis(ttl));
        checkNotReleased();
        return keepAlive.extend(ttlNanos);
    }

    /** Frees the row if it still holds this lease's token; idempotent. */
    @Override
    public void release() {
        LeaseCore.State before = core.release();
        if (before == LeaseCore.State.RELEASED) {
            return;
        }
        keepAlive.stop();
        rows.forget(this);
        rows.release(core.resource(), token);
        core.released(before);
    }

    /** Starts the renewals. */
    void start(long ttlNanos) {
        keepAlive.start(ttlNanos);
    }

    /** Ends the lease as lost because its lock is being closed, telling it on the closing thread. */
    void loseOnClose() {
        keepAlive.lose("the JdbcLock was closed while the lease was held", true);
    }

    // ---- its rounds, for the engine --------------------------------------------------------------

    @Override
    public KeepAlive.Result renew(long ttlNanos) {
        return rows.renew(core.resource(), token, ttlNanos, core.endNanos());
    }

    @Override
    public LeaseLostException evidence(String why) {
        return new LeaseLostException(core.resource(), why + " (fencing token " + token + ")", null);
    }

    @Override
    public void onLost() {
        rows.forget(this);
    }

    @Override
    public String toString() {
        return "JdbcLease[" + core.resource() + ", token " + token + ", " + core.state() + "]";
    }
}
