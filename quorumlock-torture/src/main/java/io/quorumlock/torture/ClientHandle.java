package io.quorumlock.torture;

import io.quorumlock.testkit.Processes;
import io.quorumlock.testkit.TestTime;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The harness's side of one client: a separate JVM process (the default, so that a pause is a
 * real SIGSTOP of everything the client runs, its lease's keep-alive included), or a thread of the
 * harness's JVM ({@code --threads}: faster, and a pause is a sleep of the client's thread plus the
 * expiry of its session).
 */
abstract class ClientHandle implements AutoCloseable {

    /** Client processes alive, killed (SIGKILL, which also ends a stopped one) if the harness's JVM exits first. */
    private static final Set<Process> live = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(() -> live.forEach(Process::destroyForcibly), "torture-client-killer"));
    }

    final TortureClient.Config config;

    ClientHandle(TortureClient.Config config) {
        this.config = config;
    }

    /** Waits until the client has opened its lock. */
    abstract void awaitReady(Duration timeout) throws Exception;

    /** Sends a command: {@code go}, {@code pause MILLIS DEADLINE}, {@code expire}, {@code stop}. */
    abstract void send(String command);

    /** The client's process id, empty for a thread. */
    abstract OptionalLong pid();

    /** Stops the client (after its current operation) and waits for it, at most {@code timeout}. */
    abstract void stop(Duration timeout) throws InterruptedException;

    @Override
    public abstract void close();

    /** Starts a client process with the harness's own class path and Java. */
    static ClientHandle process(TortureClient.Config config, Path log) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-XX:-UsePerfData",
                "-D" + TestTime.TIME_SCALE_PROPERTY + "=" + TestTime.scale(),
                "-cp",
                System.getProperty("java.class.path"),
                ClientProcess.class.getName()));
        command.addAll(config.toArgs());
        Process process =
                new ProcessBuilder(command).redirectError(log.toFile()).start();
        return new ProcessHandle(config, process);
    }

    /** Runs a client on a thread of this JVM. */
    static ClientHandle thread(TortureClient.Config config, History history) throws SQLException {
        return new ThreadHandle(config, history);
    }

    private static final class ProcessHandle extends ClientHandle {
        private final Process process;
        private final Writer stdin;
        private final CountDownLatch ready = new CountDownLatch(1);

        ProcessHandle(TortureClient.Config config, Process process) {
            super(config);
            this.process = process;
            this.stdin = process.outputWriter(StandardCharsets.UTF_8);
            Thread reader =
                    new Thread(this::readStdout, "torture-" + config.strategy().option() + "-" + config.id());
            reader.setDaemon(true);
            reader.start();
        }

        private void readStdout() {
            try (BufferedReader out = process.inputReader(StandardCharsets.UTF_8)) {
                for (String line; (line = out.readLine()) != null; ) {
                    if (line.equals(ClientProcess.READY)) {
                        ready.countDown();
                    }
                }
            } catch (IOException e) {
                // the process is gone; awaitReady reports it
            }
        }

        @Override
        void awaitReady(Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!ready.await(50, TimeUnit.MILLISECONDS)) {
                if (!process.isAlive()) {
                    throw new IllegalStateException(config.strategy().option() + " " + config.id()
                            + " exited with code " + process.exitValue() + " before it was ready; see its log");
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new IllegalStateException(config.strategy().option() + " " + config.id()
                            + " was not ready within " + timeout.toSeconds() + " s; see its log");
                }
            }
        }

        @Override
        synchronized void send(String command) {
            try {
                stdin.write(command + "\n");
                stdin.flush();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot send '" + command + "' to " + config.id(), e);
            }
        }

        @Override
        OptionalLong pid() {
            return OptionalLong.of(process.pid());
        }

        @Override
        void stop(Duration timeout) throws InterruptedException {
            if (Processes.isStopped(process.pid())) {
                Processes.signal(process.pid(), "CONT", false, Duration.ofSeconds(5));
            }
            try {
                send("stop");
            } catch (UncheckedIOException e) {
                // already gone
            }
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                close();
            }
        }

        @Override
        public void close() {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static final class ThreadHandle extends ClientHandle {
        private final TortureClient client;
        private final Thread thread;
        private final CountDownLatch go = new CountDownLatch(1);
        private volatile Throwable failure;

        ThreadHandle(TortureClient.Config config, History history) throws SQLException {
            super(config);
            TortureClient[] self = new TortureClient[1];
            this.client = new TortureClient(config, history, millis -> {
                // A thread cannot be frozen with the keep-alive threads of its lock: expire the
                // session, as the ensemble would during a real pause, then sleep.
                self[0].expireIfHolding();
                Thread.sleep(millis);
            });
            self[0] = client;
            client.open();
            this.thread = new Thread(this::run, "torture-" + config.strategy().option() + "-" + config.id());
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            try {
                go.await();
                if (!client.isStopped()) {
                    client.run();
                }
            } catch (Throwable e) {
                failure = e;
            }
        }

        @Override
        void awaitReady(Duration timeout) {}

        @Override
        void send(String command) {
            if (command.equals("go")) {
                go.countDown();
                return;
            }
            try {
                client.command(command);
            } catch (Exception e) {
                throw new IllegalStateException(config.id() + ": " + command + " failed", e);
            }
        }

        @Override
        OptionalLong pid() {
            return OptionalLong.empty();
        }

        @Override
        void stop(Duration timeout) throws InterruptedException {
            send("stop");
            go.countDown();
            thread.join(timeout.toMillis());
            if (failure != null) {
                throw new IllegalStateException(config.id() + " failed", failure);
            }
        }

        @Override
        public void close() {
            thread.interrupt();
        }
    }
}
