package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.fail;

import io.quorumlock.testkit.TestTime;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * {@code java -jar target/quorumlock.jar run ARGS} as a user runs it, in a JVM of its own (failsafe
 * runs the integration tests after {@code package}). Its stdout and stderr go to files, not pipes:
 * a process the command left behind cannot hold the test up. Closing it kills it and whatever it
 * started, if still running.
 */
final class RunProcess implements AutoCloseable {

    private static final AtomicInteger runs = new AtomicInteger();

    private final Process process;
    private final Path out;
    private final Path err;

    private RunProcess(Process process, Path out, Path err) {
        this.process = process;
        this.out = out;
        this.err = err;
    }

    /** Starts {@code quorumlock run ARGS} with output files in {@code dir} and {@code env} added to its environment. */
    static RunProcess start(Path dir, Map<String, String> env, String... args) {
        return command(dir, env, "run", args);
    }

    /** Starts {@code quorumlock SUBCOMMAND ARGS}, as {@link #start(Path, Map, String...)} starts run. */
    static RunProcess command(Path dir, Map<String, String> env, String subcommand, String... args) {
        Path jar = Path.of(System.getProperty("basedir", System.getProperty("user.dir")), "target", "quorumlock.jar");
        if (!Files.isRegularFile(jar)) {
            fail(jar + " is missing: run the integration tests after 'package' (mvn verify)");
        }
        List<String> command = new ArrayList<>();
        // Started in the background of a non-interactive shell, this JVM may have inherited SIGINT
        // ignored, and so would run and its command: give them the default disposition back.
        if (Files.isExecutable(Path.of("/usr/bin/env"))) {
            command.addAll(List.of("/usr/bin/env", "--default-signal=INT,TERM"));
        }
        command.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1",
                "-jar",
                jar.toString(),
                subcommand));
        command.addAll(Arrays.asList(args));
        int n = runs.incrementAndGet();
        Path out = dir.resolve("run-" + n + ".out");
        Path err = dir.resolve("run-" + n + ".err");
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectOutput(out.toFile())
                .redirectError(err.toFile());
        builder.environment().remove("QUORUMLOCK_REDIS_PASSWORD");
        builder.environment().putAll(env);
        try {
            return new RunProcess(builder.start(), out, err);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static RunProcess start(Path dir, String... args) {
        return start(dir, Map.of(), args);
    }

    /** Waits for run to exit (scaled bound) and returns its exit code. */
    int exitCode(Duration timeout) throws InterruptedException {
        Duration limit = TestTime.scaled(timeout);
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("run still runs after " + limit.toMillis() + " ms; stderr: " + err());
        }
        return process.exitValue();
    }

    int exitCode() throws InterruptedException {
        return exitCode(Duration.ofSeconds(30));
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Sends SIGKILL to run itself, which cannot clean up after it. */
    void kill() {
        process.destroyForcibly();
    }

    /** The processes run started, and theirs. */
    Stream<ProcessHandle> descendants() {
        return process.descendants();
    }

    /** The shell a waiting run parked its command's start in (see ParkedStart), once it is there. */
    ProcessHandle parkedShell() {
        AtomicReference<ProcessHandle> found = new AtomicReference<>();
        try {
            TestTime.await(
                    Duration.ofSeconds(20),
                    () -> {
                        process.descendants()
                                .filter(p -> pipe(p).isPresent())
                                .findFirst()
                                .ifPresent(found::set);
                        return found.get() != null || !process.isAlive();
                    },
                    "the parked shell");
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; run's stderr: " + err(), e);
        }
        if (found.get() == null) {
            throw new AssertionError("run exited with " + process.exitValue() + " before it parked: " + err());
        }
        return found.get();
    }

    /** The named pipe a parked shell waits on (read while it runs). */
    static Path pipeOf(ProcessHandle shell) {
        return pipe(shell).orElseThrow(() -> new AssertionError(shell.pid() + " is no parked shell"));
    }

    private static Optional<Path> pipe(ProcessHandle process) {
        // sh -c SCRIPT PIPE COMMAND...; not the mkfifo that made the pipe
        return process.info().arguments().stream()
                .filter(args -> args.length > 2 && args[0].equals("-c"))
                .map(args -> args[2])
                .filter(arg -> arg.contains("/quorumlock-run-"))
                .map(Path::of)
                .findFirst();
    }

    /** Not running: exited, or a zombie that its new parent has not reaped yet. */
    static boolean isGone(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) == 'Z';
        } catch (IOException e) {
            return true;
        }
    }

    /** Sends SIGTERM to run itself. */
    void terminate() {
        process.destroy();
    }

    String out() {
        return read(out);
    }

    String err() {
        return read(err);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }
}
