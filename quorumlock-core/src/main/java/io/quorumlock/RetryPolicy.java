package io.quorumlock;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * How long to wait between two attempts to acquire a held lock: exponential backoff with full
 * jitter, so that competing clients spread out instead of splitting the votes again and again.
 * The delay before attempt {@code n + 1} is drawn uniformly from {@code [minDelay, min(maxDelay,
 * minDelay * 2^n)]}.
 */
public final class RetryPolicy {

    /** The default: between 10 ms and 200 ms. */
    public static final RetryPolicy DEFAULT = jitteredBackoff(Duration.ofMillis(10), Duration.ofMillis(200));

    private final Duration minDelay;
    private final Duration maxDelay;

    private RetryPolicy(Duration minDelay, Duration maxDelay) {
        this.minDelay = minDelay;
        this.maxDelay = maxDelay;
    }

    /**
     * Exponential backoff with full jitter between {@code minDelay} and {@code maxDelay}.
     *
     * @throws IllegalArgumentException if {@code minDelay} is negative or {@code maxDelay} is
     *     shorter than {@code minDelay}
     */
    public static RetryPolicy jitteredBackoff(Duration minDelay, Duration maxDelay) {
        Objects.requireNonNull(minDelay, "minDelay");
        Objects.requireNonNull(maxDelay, "maxDelay");
        if (minDelay.isNegative()) {
            throw new IllegalArgumentException(
                    "retry minDelay must not be negative, was " + minDelay.toMillis() + " ms");
        }
        if (maxDelay.compareTo(minDelay) < 0) {
            throw new IllegalArgumentException("retry maxDelay (" + maxDelay.toMillis()
                    + " ms) must not be shorter than minDelay (" + minDelay.toMillis() + " ms)");
        }
        return new RetryPolicy(minDelay, maxDelay);
    }

    /** The shortest delay between two attempts. */
    public Duration minDelay() {
        return minDelay;
    }

    /** The longest delay between two attempts. */
    public Duration maxDelay() {
        return maxDelay;
    }

    /**
     * Sleeps before the next attempt, after {@code failedAttempts} failed ones, if the delay fits in
     * the {@code nanosLeft} of the caller's wait; returns false, without sleeping, if it does not.
     *
     * @throws QuorumlockException if the thread is interrupted while sleeping (the flag stays set)
     */
    public boolean pauseBeforeNextAttempt(int failedAttempts, long nanosLeft, String resource) {
        long delay = delayAfter(failedAttempts).toNanos();
        if (delay > nanosLeft) {
            return false;
        }
        try {
            TimeUnit.NANOSECONDS.sleep(delay);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new QuorumlockException("interrupted while waiting to acquire '" + resource + "'", e);
        }
    }

    /** The delay before the next attempt, after {@code failedAttempts} failed ones (1 or more). */
    public Duration delayAfter(int failedAttempts) {
        long min = minDelay.toNanos();
        long max = maxDelay.toNanos();
        int doublings = Math.min(Math.max(failedAttempts - 1, 0), 30);
        long ceiling = min == 0 ? max : Math.min(max, min << Math.min(doublings, Long.numberOfLeadingZeros(min) - 1));
        ceiling = Math.max(ceiling, min);
        return Duration.ofNanos(
                ceiling == min ? min : ThreadLocalRandom.current().nextLong(min, ceiling + 1));
    }
}
