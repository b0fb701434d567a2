package io.quorumlock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * A process this JVM starts ({@code git}, {@code mvn}, a bench of another build): its output and
 * errors read as lines, each handed to a listener, the last {@link #KEPT_LINES} kept to tell why it
 * failed. Closing it ends it and whatever it started.
 */
final class ChildProcess implements AutoCloseable {

    /** The lines kept for the message of a failure. */
    static final int KEPT_LINES = 15;

    /** How long to wait for the last lines once the process has ended. */
    private static final long DRAIN_MILLIS = 5_000;

    /** The colour codes Maven prints even in batch mode. */
    private static final Pattern COLOURS = Pattern.compile("\u001B\\[[0-9;]*m");

    private final Process process;
    private final Thread reader;
    private final Deque<String> last = new ArrayDeque<>();

    private ChildProcess(Process process, Consumer<String> lines) {
        this.process = process;
        this.reader = new Thread(
                () -> {
                    try (BufferedReader in = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String read = in.readLine(); read != null; read = in.readLine()) {
                            String line = COLOURS.matcher(read).replaceAll("");
                            synchronized (last) {
                                if (!line.isBlank()) {
                                    last.addLast(line);
                                }
                                if (last.size() > KEPT_LINES) {
                                    last.removeFirst();
                                }
                            }
                            lines.accept(line);
                        }
                    } catch (IOException closed) {
                        // the process was ended: what was read is kept
                    }
                },
                "quorumlock-bench-child-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code command} in {@code dir}, its errors merged with its output, each line to {@code lines}. */
    static ChildProcess start(List<String> command, Path dir, Consumer<String> lines) throws IOException {
        Process process = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.PIPE)
                .start();
        process.getOutputStream().close();
        return new ChildProcess(process, lines);
    }

    /**
     * Runs {@code command} in {@code dir} to its end: its exit code, or empty when it took longer than
     * {@code timeout} (it is ended then).
     */
    static Result run(List<String> command, Path dir, Duration timeout, Consumer<String> lines) {
        try (ChildProcess child = start(command, dir, lines)) {
            OptionalInt exit = child.waitFor(timeout);
            return new Result(exit, child.lastLines());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command.get(0) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while " + command.get(0) + " ran", e);
        }
    }

    /** How a process ended: its exit code (empty when it timed out) and its last lines. */
    record Result(OptionalInt exit, List<String> lastLines) {

        boolean succeeded() {
            return exit.isPresent() && exit.getAsInt() == 0;
        }

        /** The first line of the output, or an empty string. */
        String firstLine() {
            return lastLines.isEmpty() ? "" : lastLines.get(0).trim();
        }

        /** How it ended and its last lines, for a message. */
        String told(Duration timeout) {
            return (exit.isPresent()
                            ? "exit code " + exit.getAsInt()
                            : "no end after " + timeout.toSeconds() + " s (ended)")
                    + (lastLines.isEmpty() ? "; no output" : "; its last lines:\n  " + String.join("\n  ", lastLines));
        }
    }

    /**
     * Waits for the end of the process, up to {@code timeout}, then for its last lines: its exit
     * code, or empty when it did not end in time (it is ended then, with what it started).
     */
    OptionalInt waitFor(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            close();
            reader.join(DRAIN_MILLIS);
            return OptionalInt.empty();
        }
        reader.join(DRAIN_MILLIS);
        return OptionalInt.of(process.exitValue());
    }

    /** The last lines of its output, oldest first. */
    List<String> lastLines() {
        synchronized (last) {
            return List.copyOf(last);
        }
    }

    /** Ends the process and what it started (SIGKILL: frozen nodes too). */
    @Override
    public void close() {
        List<ProcessHandle> started = process.descendants().toList();
        process.destroyForcibly();
        started.forEach(ProcessHandle::destroyForcibly);
        try {
            process.waitFor(DRAIN_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
