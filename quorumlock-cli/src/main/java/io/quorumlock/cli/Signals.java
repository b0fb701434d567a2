package io.quorumlock.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * SIGINT and SIGTERM handed to the command line's own handler instead of ending the JVM: {@code
 * run} passes them to its child and releases the lock once the child has exited; {@code nodes}
 * stops its servers in order. Without this, the JVM would run its shutdown hooks at once, in no
 * order, and exit with 130 or 143.
 *
 * <p>Where the JVM keeps a signal to itself ({@code -Xrs}), nothing is installed for it and the
 * shutdown hook stops the command. {@code sun.misc.Signal} (module {@code jdk.unsupported}) is the
 * JDK's only way to handle a signal; it works on Java 17 to 25.
 */
public final class Signals implements AutoCloseable {

    private static final String[] FORWARDED = {"INT", "TERM"};

    private final Map<Signal, SignalHandler> replaced = new LinkedHashMap<>();

    private Signals() {}

    /** Hands SIGINT and SIGTERM to {@code forward} (with the signal's name, {@code INT} or {@code TERM}) until {@link #close()}. */
    public static Signals install(Consumer<String> forward) {
        Signals signals = new Signals();
        for (String name : FORWARDED) {
            Signal signal = new Signal(name);
            try {
                signals.replaced.put(signal, Signal.handle(signal, received -> forward.accept(received.getName())));
            } catch (IllegalArgumentException keptByTheJvm) {
                // -Xrs: the JVM's own handling and the shutdown hook apply.
            }
        }
        return signals;
    }

    /** Gives the signals back to the handlers they had before. */
    @Override
    public void close() {
        replaced.forEach(Signal::handle);
        replaced.clear();
    }
}
