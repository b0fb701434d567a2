package io.quorumlock.internal;

/**
 * The arithmetic of a lease's life, for every backend: pure functions of nanoseconds on the lock's
 * {@link Ticker}, compared by subtraction so that the ticker may wrap. {@link KeepAlive} waits by
 * them; nothing else in the library computes a renewal, a doubt or a loss notice.
 *
 * <p>A lease renews when two thirds of its TTL are left (every third of the TTL while the server
 * answers), counted from its end, so that a lease granted late in its TTL renews at once. It is in
 * doubt when a third of the TTL is left without a renewal, and given up as lost when no renewal can
 * end with the {@linkplain #lossNoticeNanos loss notice} still left.
 */
public final class LeaseTimes {

    private static final long DRIFT_CONSTANT_NANOS = 2_000_000L;
    private static final long MIN_BACKOFF_NANOS = 1_000_000L;

    private LeaseTimes() {}

    /** The clock drift allowance for a lease of {@code ttlNanos}: 1% of it and 2 ms. */
    public static long driftNanos(long ttlNanos) {
        return ttlNanos / 100 + DRIFT_CONSTANT_NANOS;
    }

    /** The latest end a round sent at {@code sentNanos} for {@code ttlNanos} may give: the TTL less the drift. */
    public static long endAfter(long sentNanos, long ttlNanos) {
        return sentNanos + ttlNanos - driftNanos(ttlNanos);
    }

    /** When a lease that ends at {@code endNanos} is due for renewal: when two thirds of {@code ttlNanos} are left. */
    public static long renewAt(long endNanos, long ttlNanos) {
        return endNanos - ttlNanos / 3 * 2;
    }

    /**
     * When a lease whose renewal fell due at {@code dueNanos} and has not been answered goes in
     * doubt: when a third of {@code ttlNanos} is left, but not before half the time it had left when
     * the renewal fell due has passed, so that a lease granted late in its TTL gets its first
     * renewal's answer before any doubt.
     */
    public static long doubtAt(long endNanos, long ttlNanos, long dueNanos) {
        return later(endNanos - doubtNoticeNanos(ttlNanos), dueNanos + (endNanos - dueNanos) / 2);
    }

    /**
     * How much validity a lease has left when it goes in doubt with a renewal unanswered: a third of
     * the TTL, in which the servers may end it. Work that stops at the doubt ({@code withLock} on the
     * fenced backends) has this long to stop in.
     */
    public static long doubtNoticeNanos(long ttlNanos) {
        return ttlNanos / 3;
    }

    /**
     * How much validity a lease kept alive has left when it is given up as lost: a tenth of the
     * TTL, for the work to stop in before another holder can be granted the lock.
     */
    public static long lossNoticeNanos(long ttlNanos) {
        return ttlNanos / 10;
    }

    /**
     * After {@code failures} rounds in a row failed, at {@code nowNanos}: how long to wait before
     * the next round, or -1 if no round, which may take {@code roundNanos}, could end with the loss
     * notice still left, so that the lease is to be given up now. The wait is half a round,
     * doubling with each failure up to two rounds, and never later than the last round that can
     * end in time.
     */
    public static long retryAfterNanos(long nowNanos, long endNanos, long ttlNanos, long roundNanos, int failures) {
        long latestStart = endNanos - roundNanos - lossNoticeNanos(ttlNanos) - nowNanos;
        if (latestStart < 0) {
            return -1;
        }
        long backoff = Math.max(roundNanos / 2, MIN_BACKOFF_NANOS) << Math.min(Math.max(failures - 1, 0), 2);
        return Math.min(backoff, latestStart);
    }

    /** The later of two instants on the ticker. */
    public static long later(long a, long b) {
        return a - b >= 0 ? a : b;
    }
}
