package io.quorumlock.cli;

import java.time.Duration;
import java.util.Locale;

/** How the commands write numbers and durations for people: {@code 2,000}, {@code 4.82 s}, {@code 1.3 ms}. */
public final class Formats {

    private Formats() {}

    /** A count with thousands separators: {@code 12,345}. */
    public static String count(long count) {
        return String.format(Locale.ROOT, "%,d", count);
    }

    /** A rate per second, rounded to a whole number: {@code 1,234 /s}. */
    public static String perSecond(double rate) {
        return String.format(Locale.ROOT, "%,.0f /s", rate);
    }

    /** A duration in seconds ({@code 4.82 s}) from one second on, else in milliseconds ({@code 48 ms}, {@code 1.3 ms}). */
    public static String duration(Duration duration) {
        double millis = duration.toNanos() / 1e6;
        if (Math.abs(millis) >= 1000) {
            return String.format(Locale.ROOT, "%.2f s", millis / 1000);
        }
        return String.format(Locale.ROOT, Math.abs(millis) >= 10 ? "%.0f ms" : "%.1f ms", millis);
    }
}
