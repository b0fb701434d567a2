package io.quorumlock.testkit;

import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a server launch ended, and the skeleton the launchers share: start on a free port, again on
 * another when a racing process took the port first, and never leave a server behind that did
 * not come up.
 */
enum Launch {
    /** The server is up and ours. */
    READY,
    /** The port was taken before the server could bind it; the server has exited or was stopped. */
    PORT_IN_USE;

    private static final Logger log = LoggerFactory.getLogger(Launch.class);

    /** How many free ports a launch tries before it gives up. */
    static final int PORT_ATTEMPTS = 5;

    /**
     * Waits for a server just started; stops it unless it is ready, also when waiting throws.
     *
     * @param awaitReady waits and tells how the launch ended
     * @param stop stops the server
     */
    static Launch settle(Supplier<Launch> awaitReady, Runnable stop) {
        try {
            Launch result = awaitReady.get();
            if (result != READY) {
                stop.run();
            }
            return result;
        } catch (RuntimeException e) {
            stop.run();
            throw e;
        }
    }

    /**
     * Launches a server on a free port of {@code host}, on another when the port was taken.
     *
     * @param server what is launched, for messages, such as "the Redis node"
     * @param launchAt launches on the given port and waits for the outcome
     * @param output the end of the server's output, for the message when every attempt failed
     * @return the port the server is ready on
     */
    static int onFreePort(String host, String server, IntFunction<Launch> launchAt, Supplier<String> output) {
        for (int attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
            int port = Processes.freePort(host);
            if (launchAt.apply(port) == READY) {
                return port;
            }
            log.debug("Port {} was taken before {} could bind it; trying another", port, server);
        }
        throw new IllegalStateException(
                server + " could not bind a free port in " + PORT_ATTEMPTS + " attempts\n" + output.get());
    }
}
