package io.quorumlock.lab.demo;

import java.time.Duration;
import java.util.Arrays;

/**
 * The median and the 99th percentile of a set of call durations.
 *
 * @param samples how many durations there were; the percentiles are zero when there were none
 */
record Latency(int samples, Duration p50, Duration p99) {

    static Latency of(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return new Latency(sorted.length, percentile(sorted, 50), percentile(sorted, 99));
    }

    /** Nearest rank: the smallest sample that at least {@code percent}% of the samples do not exceed. */
    private static Duration percentile(long[] sorted, int percent) {
        if (sorted.length == 0) {
            return Duration.ZERO;
        }
        int rank = (int) Math.ceil(percent / 100.0 * sorted.length);
        return Duration.ofNanos(sorted[Math.max(rank, 1) - 1]);
    }
}
