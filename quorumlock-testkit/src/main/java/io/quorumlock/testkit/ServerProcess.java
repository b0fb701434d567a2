package io.quorumlock.testkit;

import java.time.Duration;

/**
 * One server's operating-system process and the faults the kit injects into it: SIGKILL, SIGSTOP
 * and SIGCONT. Shared by the Redis and etcd launchers; each keeps its own start-up and readiness.
 */
final class ServerProcess {

    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration SIGNAL_TIMEOUT = Duration.ofSeconds(5);

    private volatile Process process;
    private volatile boolean paused;

    /** Takes charge of a process just started, running and not paused. */
    synchronized void started(Process started) {
        process = started;
        paused = false;
    }

    /** The process, or null if none was started since the last {@link #kill()}. */
    Process process() {
        return process;
    }

    /** Whether the process is alive; a paused process counts as running. */
    boolean isRunning() {
        Process running = process;
        return running != null && running.isAlive();
    }

    boolean isPaused() {
        return paused && isRunning();
    }

    /**
     * SIGKILL, and waits until the process is gone. Returns its pid, or -1 if there was none.
     *
     * @throws IllegalStateException if it is still there after the (scaled) exit timeout
     */
    synchronized long kill() {
        paused = false;
        Process running = process;
        if (running == null) {
            return -1;
        }
        Processes.kill(running, TestTime.scaled(EXIT_TIMEOUT));
        process = null;
        return running.pid();
    }

    /** SIGSTOP, unless already paused; the caller checks that it runs. */
    synchronized void pause() {
        if (!paused) {
            Processes.signal(process.pid(), "STOP", true, TestTime.scaled(SIGNAL_TIMEOUT));
            paused = true;
        }
    }

    /** SIGCONT, if paused and running. */
    synchronized void resume() {
        if (paused && isRunning()) {
            Processes.signal(process.pid(), "CONT", false, TestTime.scaled(SIGNAL_TIMEOUT));
        }
        paused = false;
    }
}
