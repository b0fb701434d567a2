package io.quorumlock.cli.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * The command that {@code run} runs: started with run's stdin, stdout and stderr, signalled, and
 * stopped together with the processes it started.
 */
final class Child {

    private final Process process;
    /** The command and its descendants as they were when {@link #terminate()} signalled them. */
    private volatile List<ProcessHandle> terminated = List.of();

    private Child(Process process) {
        this.process = process;
    }

    /**
     * Starts {@code command} with run's environment, changed by {@code environment}: a null value
     * removes the variable.
     *
     * @throws IOException if it cannot be started (not found, not executable)
     */
    static Child start(List<String> command, Map<String, String> environment) throws IOException {
        return new Child(builder(command, environment).start());
    }

    /** A start of {@code command} with run's stdin, stdout and stderr, and environment changed as {@link #start} says. */
    static ProcessBuilder builder(List<String> command, Map<String, String> environment) {
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        Map<String, String> env = builder.environment();
        environment.forEach((name, value) -> {
            if (value == null) {
                env.remove(name);
            } else {
                env.put(name, value);
            }
        });
        return builder;
    }

    /** The command already started as {@code process}. */
    static Child of(Process process) {
        return new Child(process);
    }

    /** Waits for the command to exit: its exit code, or 128 + N if signal N ended it (as shells report it). */
    int awaitExit() throws InterruptedException {
        return process.waitFor();
    }

    /**
     * Passes a signal that run received on to the command: SIGTERM always; SIGINT unless the
     * command has it already, because it came from the terminal (Ctrl-C) to the foreground
     * process group, which the command shares with run.
     */
    void forward(String signal) {
        if (!process.isAlive()) {
            return;
        }
        if (signal.equals("TERM")) {
            process.destroy(); // SIGTERM
        } else if (!inTerminalForeground(process.pid())) {
            try {
                Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .start();
                kill.waitFor(1, TimeUnit.SECONDS);
            } catch (IOException e) {
                process.destroy(); // no kill(1) to send it: SIGTERM stops the command as well
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** SIGTERM to the command and to every process it started. */
    void terminate() {
        List<ProcessHandle> tree = new ArrayList<>();
        tree.add(process.toHandle());
        process.descendants().forEach(tree::add);
        terminated = List.copyOf(tree);
        tree.forEach(ProcessHandle::destroy);
    }

    /**
     * Waits until the processes {@link #terminate()} signalled have exited, or until {@code
     * deadlineNanos} ({@link System#nanoTime()}), then sends SIGKILL to those still alive and to the
     * command's descendants now.
     */
    void awaitTerminatedOrKill(long deadlineNanos) throws InterruptedException {
        for (ProcessHandle handle : terminated) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                handle.onExit().get(left, TimeUnit.NANOSECONDS);
            } catch (TimeoutException | ExecutionException e) {
                break;
            }
        }
        kill();
    }

    /** SIGKILL to the command, its descendants and whatever {@link #terminate()} reached, if alive. */
    void kill() {
        Stream.concat(Stream.concat(Stream.of(process.toHandle()), process.descendants()), terminated.stream())
                .filter(ProcessHandle::isAlive)
                .forEach(ProcessHandle::destroyForcibly);
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Whether the process is in the foreground process group of run's controlling terminal, so
     * that a Ctrl-C there reached it directly. Reads {@code /proc}; false where there is none.
     */
    private static boolean inTerminalForeground(long pid) {
        long[] self = stat(Path.of("/proc/self/stat"));
        long[] child = stat(Path.of("/proc", Long.toString(pid), "stat"));
        // Fields after the command name: state ppid pgrp session tty_nr tpgid.
        return self != null && child != null && self[3] != 0 && self[4] == child[1];
    }

    /** ppid, pgrp, session, tty_nr and tpgid from a {@code /proc/PID/stat}, or null if unreadable. */
    private static long[] stat(Path file) {
        try {
            String text = Files.readString(file, StandardCharsets.US_ASCII);
            String[] fields = text.substring(text.lastIndexOf(')') + 2).split(" ");
            long[] values = new long[5];
            for (int i = 0; i < values.length; i++) {
                values[i] = Long.parseLong(fields[i + 1]);
            }
            return values;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
