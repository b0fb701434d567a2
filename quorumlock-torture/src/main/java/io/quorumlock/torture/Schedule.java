package io.quorumlock.torture;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The faults of one run, drawn from a seed: the same seed, window, kinds and lease give the same
 * schedule. One fault at a time, Jepsen-style: a quiet gap, a fault, its healing, a quiet gap.
 * Kinds take turns in a shuffled order, so that a short run still sees every kind it can fit.
 */
public final class Schedule {

    private Schedule() {}

    /**
     * Draws the faults for a window.
     *
     * @param seed the seed
     * @param window the length of the run
     * @param kinds the kinds to draw from; empty gives no fault
     * @param lease the longest lease (TTL or session timeout) of the strategies: a pause lasts
     *     twice that plus a second, so that every lease has expired when the client wakes; a
     *     partition twice that
     */
    public static List<Fault> draw(long seed, Duration window, Set<FaultKind> kinds, Duration lease) {
        List<Fault> faults = new ArrayList<>();
        if (kinds.isEmpty()) {
            return faults;
        }
        SplittableRandom random = new SplittableRandom(seed);
        List<FaultKind> order = new ArrayList<>(kinds);
        Collections.sort(order);
        shuffle(order, random);
        long end = window.toMillis() - 500;
        long at = 500 + random.nextLong(500);
        // Kinds take turns; one that no longer fits is passed over, so shorter ones fill the end.
        for (int i = 0, misses = 0; misses < order.size(); i++) {
            FaultKind kind = order.get(i % order.size());
            long duration = duration(kind, lease.toMillis(), random);
            // A pause or an expiry waits for the client to reach a write, so it is given room.
            long room = kind == FaultKind.PAUSE || kind == FaultKind.EXPIRE ? duration + 500 : duration;
            if (at + room > end) {
                misses++;
                continue;
            }
            misses = 0;
            int pick = random.nextInt(1_000);
            faults.add(new Fault(kind, at, duration, pick, kind == FaultKind.SLOW ? latency(random) : 0));
            at += room + 500 + random.nextLong(500);
        }
        return faults;
    }

    /** How long a fault of {@code kind} lasts, for leases of {@code leaseMillis}. */
    static long duration(FaultKind kind, long leaseMillis, SplittableRandom random) {
        return switch (kind) {
            case KILL -> 1_500 + random.nextLong(1_000);
            case FREEZE -> 1_000 + random.nextLong(1_000);
            case RESTART, EXPIRE -> 0;
            case CLOCK -> 1_000 + random.nextLong(500);
            case PAUSE -> 2 * leaseMillis + 1_000;
            // Long enough for the ensemble to expire the cut-off client's session (or its keys to
            // expire on the nodes) and for another client to take the lock before the heal.
            case PARTITION -> 2 * leaseMillis;
            case SLOW -> 1_000 + random.nextLong(1_000);
            // The replica cut off for the lease and a second, then the sentinels' promotion (about
            // 2.5 s), before the old master is started again.
            case FAILOVER -> leaseMillis + 4_000;
        };
    }

    /** The round-trip latency of a {@link FaultKind#SLOW} fault: 50-300 ms. */
    static long latency(SplittableRandom random) {
        return 50 + random.nextLong(251);
    }

    private static <T> void shuffle(List<T> list, SplittableRandom random) {
        for (int i = list.size() - 1; i > 0; i--) {
            Collections.swap(list, i, random.nextInt(i + 1));
        }
    }
}
