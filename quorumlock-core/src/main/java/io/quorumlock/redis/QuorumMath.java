package io.quorumlock.redis;

import io.quorumlock.redis.client.NodeStart;
import java.time.Duration;

/**
 * The arithmetic of the algorithm, free of I/O and of waiting: quorum size, the validity of a
 * grant, when the outcome of a vote is certain, and when the restart guard
 * lets a node vote. Every time is in nanoseconds.
 */
final class QuorumMath {

    /** The fixed part of the drift allowance, as in the Redlock description: 2 ms. */
    static final long DRIFT_CONSTANT_NANOS = 2_000_000L;

    /** The smallest TTL, in node timeouts, that leaves room for an attempt and an extension. */
    static final int MIN_TTL_IN_NODE_TIMEOUTS = 3;

    /** The state of a vote that is being counted. */
    enum Tally {
        /** Not decided yet: enough nodes are still to answer to change the outcome. */
        OPEN,
        /** A majority voted yes. */
        QUORUM,
        /** Too few nodes are left to reach a majority. */
        NO_QUORUM
    }

    private QuorumMath() {}

    /** A majority of {@code nodes}: N/2 + 1. */
    static int quorum(int nodes) {
        return nodes / 2 + 1;
    }

    /**
     * How long until the keys of a resource are gone from a quorum of nodes, from each node's
     * {@code PTTL} in milliseconds ({@code -2}: no key, so free now; {@code -1}: a key without a
     * TTL, or no answer: {@code Long.MAX_VALUE}, never by itself).
     */
    static long quorumFreeInNanos(long[] pttlMillis) {
        long[] free = new long[pttlMillis.length];
        for (int i = 0; i < free.length; i++) {
            long ttl = pttlMillis[i];
            free[i] = ttl == -2 ? 0 : ttl < 0 ? Long.MAX_VALUE : ttl * 1_000_000;
        }
        java.util.Arrays.sort(free);
        return free[quorum(free.length) - 1];
    }

    /**
     * How long a client refused in a contest (some nodes said yes, the others were held: clients
     * that split the vote) sleeps before its next attempt: a random part of twice the attempt's
     * time (at least 0.1 ms, at most {@code baseNanos}: an attempt slowed by a busy machine is no
     * measure), doubled for each contest in a row up to 16 times that, and at most {@code
     * maxNanos}. The client that happens to sleep least wins the next round whole, and the others
     * meet a holder.
     */
    static long contestBackoffNanos(long attemptNanos, int contestsInARow, long baseNanos, long maxNanos) {
        long base = Math.min(baseNanos, Math.max(100_000, 2 * attemptNanos));
        long ceiling = Math.min(maxNanos, base << Math.min(Math.max(contestsInARow - 1, 0), 4));
        return java.util.concurrent.ThreadLocalRandom.current().nextLong(ceiling + 1);
    }

    /**
     * How long a waiter woken by a release waits before its attempt, so that the waiters of the
     * {@code listeners} clients the release woke try about in the order they came: one attempt's
     * time (0.1 to 2 ms) for each of the others less the releases this one already waited
     * through ({@code wakes}). The releaser is counted among the listeners when it still listens,
     * and yields: so the oldest of n - 1 waiters, which waited through n - 2 releases, tries at
     * once, and a lone waiter always does.
     */
    static long turnDelayNanos(int listeners, int wakes, long attemptNanos) {
        long step = Math.min(2_000_000, Math.max(100_000, attemptNanos));
        return step * Math.max(0, listeners - 2 - wakes);
    }

    /**
     * How long a client that released a resource to waiters of other clients leaves it to them
     * before trying to take it again: four times its release round, and at least 5 ms, the time a
     * woken waiter on a busy machine needs to hear the release and ask the nodes. It costs nothing
     * when a waiter takes the lock, which is then busy anyway.
     */
    static long yieldNanos(long releaseRoundNanos) {
        return Math.max(5_000_000, 4 * releaseRoundNanos);
    }

    /** The clock drift allowance for a TTL: ttl x driftFactor + 2 ms. */
    static long driftNanos(long ttlNanos, double driftFactor) {
        return (long) (ttlNanos * driftFactor) + DRIFT_CONSTANT_NANOS;
    }

    /** validity = ttl - elapsed - drift; zero or negative means the grant is worthless. */
    static long validityNanos(long ttlNanos, long elapsedNanos, double driftFactor) {
        return ttlNanos - elapsedNanos - driftNanos(ttlNanos, driftFactor);
    }

    /** The lock is held iff a quorum voted yes and validity is left. */
    static boolean isHeld(int yes, int nodes, long validityNanos) {
        return yes >= quorum(nodes) && validityNanos > 0;
    }

    /** Whether the outcome is certain after {@code yes} and {@code no} answers out of {@code nodes}. */
    static Tally tally(int yes, int no, int nodes) {
        int quorum = quorum(nodes);
        if (yes >= quorum) {
            return Tally.QUORUM;
        }
        int open = nodes - yes - no;
        return yes + open < quorum ? Tally.NO_QUORUM : Tally.OPEN;
    }

    /** What every TTL must be longer than with this node timeout. */
    static Duration ttlFloor(Duration nodeTimeout) {
        return nodeTimeout.multipliedBy(MIN_TTL_IN_NODE_TIMEOUTS);
    }

    /** Null when the TTL is usable with this node timeout, else the message that says why not. */
    static String ttlProblem(Duration ttl, Duration nodeTimeout) {
        return ttlProblemOver(ttl, ttlFloor(nodeTimeout));
    }

    /**
     * As {@link #ttlProblem}, with the {@link #ttlFloor} of the node timeout worked out once: a
     * lock checks every TTL it is given, and {@link Duration#multipliedBy} costs a few hundred bytes.
     */
    static String ttlProblemOver(Duration ttl, Duration min) {
        if (ttl == null) {
            return "ttl must not be null";
        }
        if (ttl.isZero() || ttl.isNegative()) {
            return "ttl must be positive, was " + ttl.toMillis() + " ms";
        }
        if (ttl.compareTo(min) <= 0) {
            return "ttl must be longer than " + MIN_TTL_IN_NODE_TIMEOUTS + " x nodeTimeout (" + min.toMillis()
                    + " ms), was " + ttl.toMillis() + " ms: raise the ttl or lower nodeTimeout";
        }
        return null;
    }

    // ---- the restart guard ----------------------------------------------------------------------

    /*
     * A node that restarted without fsync'd persistence has lost keys that may still be valid on
     * other nodes, so its yes could grant a lock that another client holds. It can only be sure to
     * have lost nothing still valid once it has been up for the longest TTL that anyone was
     * granted: until then its yes does not count. A node's start is the latest at which it may
     * have started, on the client's ticker.
     */

    /** How long after {@code nowNanos} a node that started at {@code startNanos} may vote: zero if it may now. */
    static long restartWaitNanos(long startNanos, long nowNanos, long longestTtlNanos) {
        return Math.max(0, longestTtlNanos - (nowNanos - startNanos));
    }

    /**
     * How long after {@code nowNanos} the node may vote: zero at once if its server fsyncs every
     * write and the client saw no change of its run_id (a change may be a failover to a server
     * that never had the keys, fsync or not), else the rest of the longest TTL from its start.
     */
    static long restartWaitNanos(NodeStart start, long nowNanos, long longestTtlNanos) {
        return start.fsyncs() && !start.runIdChanged() ? 0 : restartWaitNanos(start.nanos(), nowNanos, longestTtlNanos);
    }

    /**
     * Null when the node may vote at {@code nowNanos}, else why not, such as {@code restart guard:
     * up 3 s, votes in 27 s}.
     */
    static String restartExclusion(long startNanos, long nowNanos, long longestTtlNanos) {
        return restartExclusion(NodeStart.at(startNanos), nowNanos, longestTtlNanos);
    }

    /**
     * Null when the node may vote at {@code nowNanos}, else why not, such as {@code restart guard:
     * up 3 s, votes in 27 s} or {@code restart guard: run_id changed 3 s ago (a restart or a
     * failover), votes in 27 s}.
     */
    static String restartExclusion(NodeStart start, long nowNanos, long longestTtlNanos) {
        long wait = restartWaitNanos(start, nowNanos, longestTtlNanos);
        if (wait == 0) {
            return null;
        }
        long up = Math.max(0, nowNanos - start.nanos());
        return start.runIdChanged()
                ? RESTART_GUARD + "run_id changed " + seconds(up, false) + " ago (a restart or a failover), votes in "
                        + seconds(wait, true)
                : RESTART_GUARD + "up " + seconds(up, false) + ", votes in " + seconds(wait, true);
    }

    /** How the evidence of a vote the restart guard kept out begins. */
    static final String RESTART_GUARD = "restart guard: ";

    /** Whole seconds from 10 s on, else tenths; rounded up or down. */
    static String seconds(long nanos, boolean roundUp) {
        long tenths = nanos / 100_000_000 + (roundUp && nanos % 100_000_000 != 0 ? 1 : 0);
        if (tenths < 100) {
            return tenths / 10 + (tenths % 10 == 0 ? "" : "." + tenths % 10) + " s";
        }
        return (roundUp ? (tenths + 9) / 10 : tenths / 10) + " s";
    }
}
