package io.quorumlock.lab;

import java.time.Duration;
import java.util.ArrayDeque;

/**
 * The rate of a growing count over the last few moments rather than since the start, so that a
 * progress line shows a slowdown when it happens. Not thread-safe: one caller samples it.
 */
public final class RecentRate {

    private record Sample(long nanos, long count) {}

    private final long windowNanos;
    private final ArrayDeque<Sample> samples = new ArrayDeque<>();

    /** A rate over about the last {@code window}. */
    public RecentRate(Duration window) {
        this.windowNanos = window.toNanos();
    }

    /**
     * Adds a sample and returns the rate per second since the oldest sample within the window; 0
     * for the first sample.
     */
    public double update(long nanos, long count) {
        samples.addLast(new Sample(nanos, count));
        while (samples.size() > 1 && nanos - samples.getFirst().nanos() > windowNanos) {
            samples.removeFirst();
        }
        Sample oldest = samples.getFirst();
        long elapsed = nanos - oldest.nanos();
        return elapsed <= 0 ? 0 : (count - oldest.count()) * 1e9 / elapsed;
    }
}
