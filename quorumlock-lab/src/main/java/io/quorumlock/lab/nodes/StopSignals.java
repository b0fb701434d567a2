package io.quorumlock.lab.nodes;

import io.quorumlock.cli.Signals;
import java.util.concurrent.CountDownLatch;

/**
 * Ctrl-C (SIGINT) and SIGTERM as a request to stop, rather than the end of the JVM: a foreground
 * command waits for one with {@link #await()}, stops what it started in order, prints its last line
 * and exits with 0. By default the JVM would run its shutdown hooks all at once, in no order, and
 * exit with 130 or 143.
 *
 * <p>A second signal while the command is stopping ends the JVM the usual way, so an impatient
 * Ctrl-C always works; the shutdown hooks (the test kit's kills every server) still run. Where the
 * JVM keeps the signals to itself ({@code -Xrs}), nothing is installed and the shutdown hooks do
 * the stopping.
 */
final class StopSignals implements AutoCloseable {

    private final CountDownLatch received = new CountDownLatch(1);
    private final Signals signals;
    private volatile String name;

    private StopSignals() {
        this.signals = Signals.install(this::received);
    }

    /** Takes over SIGINT and SIGTERM until {@link #close()}. */
    static StopSignals install() {
        return new StopSignals();
    }

    private void received(String signal) {
        if (received.getCount() == 0) {
            // The second one: no more waiting for the orderly stop.
            System.exit(128 + (signal.equals("INT") ? 2 : 15));
        }
        name = "SIG" + signal;
        received.countDown();
    }

    /**
     * Waits for SIGINT or SIGTERM.
     *
     * @return its name, such as {@code SIGINT}
     * @throws InterruptedException if the waiting thread is interrupted
     */
    String await() throws InterruptedException {
        received.await();
        return name;
    }

    /** Gives the signals back to the JVM's own handling. */
    @Override
    public void close() {
        signals.close();
    }
}
