package io.quorumlock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Sends SIGSTOP or SIGCONT to a Redis node from the JVM that runs the benchmark, which has no
 * handle on the process (the bench command started it). The bench command thaws the node again
 * after the case in any event, and its shutdown hook kills it, frozen or not.
 */
final class Signals {

    private static final long TIMEOUT_MILLIS = 5_000;

    private Signals() {}

    /** Sends {@code signal} ("STOP" or "CONT") and waits until the process shows the new state. */
    static void send(String pid, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, pid)
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed: "
                        + new String(kill.getInputStream().readAllBytes()).trim());
            }
            boolean stop = "STOP".equals(signal);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS);
            while (isStopped(pid) != stop) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("process " + pid + " did not " + (stop ? "stop" : "continue"));
                }
                Thread.sleep(1);
            }
        } catch (IOException e) {
            throw new IllegalStateException("Cannot run kill -" + signal + " " + pid, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending SIG" + signal + " to " + pid, e);
        }
    }

    /** Whether the process is stopped: state T in {@code /proc/PID/stat}; a missing process counts as not stopped. */
    static boolean isStopped(String pid) throws IOException {
        Path stat = Path.of("/proc", pid, "stat");
        if (!Files.exists(stat)) {
            return false;
        }
        String text = Files.readString(stat);
        int end = text.lastIndexOf(')'); // the command name may contain spaces
        return end > 0 && text.length() > end + 2 && text.charAt(end + 2) == 'T';
    }
}
