package io.quorumlock.testkit;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * Time bounds for tests, scaled by one system property so that slow machines pass too.
 *
 * <p>Set {@value #TIME_SCALE_PROPERTY} to a positive factor, for example {@code
 * -Dquorumlock.test.timeScale=3} on a loaded CI machine, and every bound that goes through {@link
 * #scaled(Duration)} (including every wait inside this test kit) grows by that factor. The kit's
 * waits for a server to start also grow with the machine's load ({@link #scaledByLoad(Duration)}):
 * a member that starts slowly on a busy machine is waited for.
 */
public final class TestTime {

    /** The system property that holds the scale factor; {@code 1.0} when absent. */
    public static final String TIME_SCALE_PROPERTY = "quorumlock.test.timeScale";

    /** The most {@link #loadScale()} multiplies a bound by, so that every wait stays bounded. */
    public static final double MAX_LOAD_SCALE = 10.0;

    private static final long MAX_POLL_NANOS = Duration.ofMillis(50).toNanos();

    private TestTime() {}

    /**
     * Returns the scale factor for time bounds in tests.
     *
     * @return the value of the system property {@value #TIME_SCALE_PROPERTY}; the default is 1.0
     * @throws IllegalArgumentException if the property is not a positive finite number
     */
    public static double scale() {
        String value = System.getProperty(TIME_SCALE_PROPERTY);
        if (value == null || value.isBlank()) {
            return 1.0;
        }
        double scale;
        try {
            scale = Double.parseDouble(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    TIME_SCALE_PROPERTY + " must be a positive number, was '" + value + "'", e);
        }
        if (!(scale > 0) || Double.isInfinite(scale)) {
            throw new IllegalArgumentException(TIME_SCALE_PROPERTY + " must be a positive number, was '" + value + "'");
        }
        return scale;
    }

    /**
     * Scales a time bound by {@link #scale()}.
     *
     * @param bound the bound on a machine of normal speed
     * @return {@code bound} multiplied by the scale factor
     */
    public static Duration scaled(Duration bound) {
        Objects.requireNonNull(bound, "bound");
        double scale = scale();
        return scale == 1.0 ? bound : Duration.ofNanos(Math.round(bound.toNanos() * scale));
    }

    /**
     * How busy this machine is: the system load average of the last minute per available
     * processor, at least 1 and at most {@value #MAX_LOAD_SCALE}. It is 1 on an idle machine and
     * where the load cannot be read; 4 on two processors with eight processes that want to run.
     *
     * @return the factor by which a server's start is likely to be slower than on an idle machine
     */
    public static double loadScale() {
        return loadScale(
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                Runtime.getRuntime().availableProcessors());
    }

    static double loadScale(double loadAverage, int processors) {
        if (!(loadAverage > 0) || processors < 1) {
            return 1.0;
        }
        return Math.min(MAX_LOAD_SCALE, Math.max(1.0, loadAverage / processors));
    }

    /**
     * Scales a bound on a server's start by {@link #scale()} and by {@link #loadScale()} now.
     *
     * @param bound the bound on an idle machine of normal speed
     * @return {@code scaled(bound)} multiplied by the load factor
     */
    public static Duration scaledByLoad(Duration bound) {
        return Duration.ofNanos(Math.round(scaled(bound).toNanos() * loadScale()));
    }

    /**
     * Waits until a condition holds, polling it every few milliseconds.
     *
     * <p>Use it instead of {@code Thread.sleep} wherever the end of a wait can be observed. The
     * condition is evaluated at least once; an exception it throws is passed on unchanged.
     *
     * @param timeout how long to wait at most, before scaling: the real limit is {@code
     *     scaled(timeout)}
     * @param condition what to wait for
     * @param what a description of the condition for the failure message, such as {@code "the key
     *     to expire on node 0"}
     * @throws AssertionError if the condition does not hold within the scaled timeout, or the
     *     thread is interrupted (the interrupt flag is then set again)
     */
    public static void await(Duration timeout, BooleanSupplier condition, String what) {
        Objects.requireNonNull(condition, "condition");
        Duration limit = scaled(timeout);
        long deadline = System.nanoTime() + limit.toNanos();
        long pollNanos = Duration.ofMillis(1).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline >= 0) {
                throw new AssertionError("Timed out after " + limit.toMillis() + " ms waiting for " + what);
            }
            try {
                Thread.sleep(pollNanos / 1_000_000, (int) (pollNanos % 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("Interrupted while waiting for " + what, e);
            }
            pollNanos = Math.min(pollNanos * 2, MAX_POLL_NANOS);
        }
    }
}
