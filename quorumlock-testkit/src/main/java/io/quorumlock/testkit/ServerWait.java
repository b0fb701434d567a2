package io.quorumlock.testkit;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * The kit's wait for a server it starts: until the server is ready, or until the kit's bound,
 * scaled for this machine, has passed. The limit is the bound times {@link TestTime#scale()} times
 * {@link TestTime#loadScale()}, the load read again as the wait goes on: a machine that gets busier
 * waits longer, and the limit never shrinks.
 *
 * <p>A program that starts servers in front of a person, such as the lab's demo and torture, can
 * {@linkplain #listen listen} and show what is awaited: a status about every second once a wait has
 * lasted a second, a line that stays once it has lasted {@link #SLOW_AFTER}, and a line at its end.
 * Tests need not listen.
 */
public final class ServerWait {

    /** What the kit's servers wait for; called on the waiting thread, so it must be quick and thread-safe. */
    public interface Listener {

        /**
         * A wait goes on.
         *
         * @param text such as {@code "waiting for etcd member member-2 at http://127.0.0.1:21824 to be healthy:
         *     3 s (at most 45 s)"}; it replaces the previous status
         */
        void status(String text);

        /**
         * A wait is slow, or a slow wait has ended.
         *
         * @param text a line that should stay
         */
        void line(String text);
    }

    /** A listener's registration; {@link #close()} ends it. */
    public interface Listening extends AutoCloseable {
        @Override
        void close();
    }

    /** How long a wait lasts before it is told as a line that stays. */
    public static final Duration SLOW_AFTER = Duration.ofSeconds(5);

    private static final long STATUS_EVERY_NANOS = Duration.ofSeconds(1).toNanos();
    private static final long LOAD_EVERY_NANOS = Duration.ofMillis(500).toNanos();
    private static final List<Listener> listeners = new CopyOnWriteArrayList<>();

    private final String server;
    private final String state;
    private final Duration bound;
    private final double scale;
    private final DoubleSupplier load;
    private final LongSupplier nanoTime;
    private final List<Listener> told;
    private final long start;
    private double loadScale;
    private long loadReadAt;
    private long statusAt;
    private boolean slow;

    ServerWait(
            String server,
            String state,
            Duration bound,
            double scale,
            DoubleSupplier load,
            LongSupplier nanoTime,
            List<Listener> told) {
        this.server = server;
        this.state = state;
        this.bound = bound;
        this.scale = scale;
        this.load = load;
        this.nanoTime = nanoTime;
        this.told = told;
        this.start = nanoTime.getAsLong();
        this.loadScale = Math.max(1.0, load.getAsDouble());
        this.loadReadAt = start;
        this.statusAt = start;
    }

    /**
     * Tells {@code listener} what the kit's servers wait for, on every thread, until the returned
     * registration is closed.
     *
     * @param listener where the waits are told
     * @return the registration, to close when the program no longer shows them
     */
    public static Listening listen(Listener listener) {
        Objects.requireNonNull(listener, "listener");
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /**
     * Starts a wait.
     *
     * @param server the server, such as {@code "etcd member member-2 at http://127.0.0.1:21824"}
     * @param state what it is awaited to be, such as {@code "healthy"} or {@code "ready"}
     * @param bound the kit's bound on an idle machine of normal speed
     */
    static ServerWait start(String server, String state, Duration bound) {
        return new ServerWait(server, state, bound, TestTime.scale(), TestTime::loadScale, System::nanoTime, listeners);
    }

    /**
     * The timeout of one look at a starting server: {@code probe} times the load factor only, at
     * most ten times {@code probe}, so that the wait looks again often enough to tell its progress.
     */
    static Duration probeTimeout(Duration probe) {
        return Duration.ofNanos(Math.round(probe.toNanos() * TestTime.loadScale()));
    }

    /** {@return the limit now: the bound times the time scale times the highest load factor seen} */
    Duration limit() {
        return Duration.ofNanos(Math.round(bound.toNanos() * scale * loadScale));
    }

    /** Whether the limit has passed; if not, tells the listeners how long the wait has lasted. */
    boolean expired() {
        long now = nanoTime.getAsLong();
        if (now - loadReadAt >= LOAD_EVERY_NANOS) {
            loadScale = Math.max(loadScale, load.getAsDouble());
            loadReadAt = now;
        }
        Duration waited = Duration.ofNanos(now - start);
        Duration limit = limit();
        if (waited.compareTo(limit) >= 0) {
            return true;
        }
        if (!slow && waited.compareTo(SLOW_AFTER) >= 0) {
            slow = true;
            tell(
                    false,
                    server + " not " + state + " after " + format(waited) + "; waiting up to " + format(limit) + " ("
                            + load() + ")");
        }
        if (now - statusAt >= STATUS_EVERY_NANOS) {
            statusAt = now;
            tell(
                    true,
                    "waiting for " + server + " to be " + state + ": " + format(waited) + " (at most " + format(limit)
                            + ")");
        }
        return false;
    }

    /** Sleeps a little before the next look at the server. */
    void pause(long millis) {
        Processes.pollPause(millis, server);
    }

    /** The server is ready; the end of a slow wait is told. */
    void done() {
        if (slow) {
            tell(false, server + " " + state + " after " + format(Duration.ofNanos(nanoTime.getAsLong() - start)));
        }
    }

    /** {@return why the wait failed: what was awaited, the limit and how it was reached, and the remedy} */
    String failure() {
        return server + " was not " + state + " within " + format(limit()) + " (the test kit's " + format(bound)
                + " × " + TestTime.TIME_SCALE_PROPERTY + " " + number(scale) + " × " + load()
                + "); on a machine this busy, set " + TestTime.TIME_SCALE_PROPERTY + " higher";
    }

    private String load() {
        return "load " + number(loadScale) + " per processor";
    }

    private void tell(boolean status, String text) {
        for (Listener listener : told) {
            if (status) {
                listener.status(text);
            } else {
                listener.line(text);
            }
        }
    }

    /** 500 ms, 2.5 s, 45 s. */
    static String format(Duration duration) {
        long millis = duration.toMillis();
        if (millis < 1_000) {
            return millis + " ms";
        }
        if (millis < 10_000) {
            return String.format(Locale.ROOT, "%.1f s", millis / 1000.0);
        }
        return Math.round(millis / 1000.0) + " s";
    }

    /** 3, 0.05, 2.46. */
    private static String number(double value) {
        return BigDecimal.valueOf(value)
                .setScale(2, RoundingMode.HALF_UP)
                .stripTrailingZeros()
                .toPlainString();
    }
}
