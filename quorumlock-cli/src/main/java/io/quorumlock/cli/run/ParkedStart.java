package io.quorumlock.cli.run;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The command's start, prepared while run waits for the lock: a {@code sh} already started with
 * run's stdin, stdout, stderr and the command's environment, parked on reading a named pipe that
 * only run writes to. Once the lock is granted, run writes the lease's values to the pipe and the
 * shell execs the command, in the same process: the JVM's process spawn, the slow part of a start,
 * is then behind the waiter.
 *
 * <p>The command cannot run before the grant: the shell execs it only after reading every value,
 * and run writes them only when it holds the lease. If run ends without writing (the lock not
 * acquired, an error, a signal, even SIGKILL), its end of the pipe closes; the shell reads the end
 * of the file and exits with {@value #ABANDONED} without running the command. Where there is no
 * {@code /bin/sh} or {@code mkfifo}, or the command is not an executable run can find, nothing is
 * parked and the command starts as usual, with run's own report of a command that cannot run.
 */
final class ParkedStart implements AutoCloseable {

    /** The parked shell's exit code when run ended without telling it to start the command. */
    static final int ABANDONED = 125;

    private static final Path SH = Path.of("/bin/sh");

    private final Process shell;
    private final FileChannel pipe;
    private final Path directory;
    private boolean started;

    private ParkedStart(Process shell, FileChannel pipe, Path directory) {
        this.shell = shell;
        this.pipe = pipe;
        this.directory = directory;
    }

    /**
     * Parks {@code command}; empty where it cannot be parked (see the class). Takes a few
     * milliseconds (two processes are started): call it off the waiting thread.
     *
     * @param environment what the command's environment gets and loses (null values), apart from
     *     the lease's values
     * @param leaseVariables the variables that get the values of {@link #start}, in order, each
     *     unset where its value is empty
     */
    static Optional<ParkedStart> park(
            List<String> command, Map<String, String> environment, List<String> leaseVariables) {
        Path directory = null;
        FileChannel pipe = null;
        try {
            if (!Files.isExecutable(SH) || !executable(command.get(0))) {
                return Optional.empty();
            }
            directory = Files.createTempDirectory("quorumlock-run-"); // rwx for its owner only
            Path fifo = directory.resolve("start");
            Process mkfifo = new ProcessBuilder("mkfifo", "-m", "600", fifo.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!mkfifo.waitFor(10, TimeUnit.SECONDS) || mkfifo.exitValue() != 0) {
                mkfifo.destroyForcibly();
                throw new IOException("mkfifo failed");
            }
            // Read and write, so that the open does not wait for the shell: Linux allows it on a
            // FIFO. Run's descriptor is the only writer, so the shell sees the end of the file
            // when run closes it or dies.
            pipe = FileChannel.open(fifo, StandardOpenOption.READ, StandardOpenOption.WRITE);
            // The values are read into the variables themselves, which the shell's environment
            // lacks: nothing of the user's environment changes but them.
            StringBuilder script = new StringBuilder("exec 3<\"$0\" || exit " + ABANDONED + "\n");
            for (String variable : leaseVariables) {
                script.append("IFS= read -r ")
                        .append(variable)
                        .append(" <&3 || exit ")
                        .append(ABANDONED)
                        .append('\n');
            }
            script.append("exec 3<&-\n");
            for (String variable : leaseVariables) {
                script.append("if [ -n \"$")
                        .append(variable)
                        .append("\" ]; then export ")
                        .append(variable)
                        .append("; else unset ")
                        .append(variable)
                        .append("; fi\n");
            }
            script.append("exec \"$@\"");
            List<String> argv = new ArrayList<>(List.of(SH.toString(), "-c", script.toString(), fifo.toString()));
            argv.addAll(command);
            ProcessBuilder builder = Child.builder(argv, environment);
            Map<String, String> env = builder.environment();
            leaseVariables.forEach(env::remove);
            return Optional.of(new ParkedStart(builder.start(), pipe, directory));
        } catch (IOException | RuntimeException e) {
            closeQuietly(pipe);
            delete(directory);
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeQuietly(pipe);
            delete(directory);
            return Optional.empty();
        }
    }

    /**
     * Starts the parked command with these values of the lease, one per variable parked, in order
     * (empty for none): the command, or empty if the parked shell is gone (a signal ended it), for
     * run to start the command as usual.
     */
    synchronized Optional<Child> start(List<String> leaseValues) {
        if (started || !shell.isAlive()) {
            return Optional.empty();
        }
        StringBuilder lines = new StringBuilder();
        leaseValues.forEach(value -> lines.append(value).append('\n'));
        ByteBuffer values = ByteBuffer.wrap(lines.toString().getBytes(StandardCharsets.US_ASCII));
        try {
            while (values.hasRemaining()) {
                pipe.write(values);
            }
        } catch (IOException e) {
            shell.destroyForcibly();
            return Optional.empty();
        }
        started = true;
        return Optional.of(Child.of(shell));
    }

    /**
     * Ends the parked shell unless its command was started, and removes the pipe. The pipe's
     * descriptor is kept until here: the values written to it are not lost if the shell has not
     * opened it yet.
     */
    @Override
    public synchronized void close() {
        if (!started) {
            shell.destroyForcibly();
        }
        closeQuietly(pipe);
        delete(directory);
    }

    /** Whether {@code name} is a file run may execute: a path, or found on PATH as a shell finds it. */
    private static boolean executable(String name) {
        if (name.contains("/")) {
            Path path = Path.of(name);
            return Files.isRegularFile(path) && Files.isExecutable(path);
        }
        String path = System.getenv("PATH");
        if (path == null || name.isEmpty()) {
            return false;
        }
        for (String entry : path.split(File.pathSeparator)) {
            Path candidate = Path.of(entry.isEmpty() ? "." : entry, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return true;
            }
        }
        return false;
    }

    private static void closeQuietly(FileChannel pipe) {
        if (pipe == null) {
            return;
        }
        try {
            pipe.close();
        } catch (IOException e) {
            // nothing held by it is left: the descriptor is gone either way
        }
    }

    private static void delete(Path directory) {
        if (directory == null) {
            return;
        }
        try {
            Files.deleteIfExists(directory.resolve("start"));
            Files.deleteIfExists(directory);
        } catch (IOException e) {
            // a leftover empty directory in the temporary folder
        }
    }
}
