package io.quorumlock.cli.nodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.quorumlock.testkit.Processes;
import io.quorumlock.testkit.TestTime;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;

/**
 * {@code quorumlock nodes} as a user runs it: the shaded jar in a JVM of its own (failsafe runs the
 * integration tests after {@code package}), its output read line by line, then a signal, and
 * nothing left behind.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NodesIT {

    private static final Duration START = Duration.ofSeconds(30);
    private static final Duration EXIT = Duration.ofSeconds(20);
    private static final int PROBE_MILLIS = 2_000;

    @TempDir
    Path dir;

    private Process process;
    private final List<ProcessHandle> servers = new ArrayList<>();
    private final List<Path> nodeDirs = new ArrayList<>();
    private final List<String> out = new CopyOnWriteArrayList<>();
    private Thread reader;
    private Path err;

    /** Starts {@code java -jar quorumlock.jar nodes ARGS} and returns once it has printed its --redis line. */
    private List<String> startNodes(String... args) throws IOException {
        Path jar = Path.of(System.getProperty("basedir", System.getProperty("user.dir")), "target", "quorumlock.jar");
        if (!Files.isRegularFile(jar)) {
            fail(jar + " is missing: run the integration tests after 'package' (mvn verify)");
        }
        List<String> command = new ArrayList<>();
        // Started in the background of a non-interactive shell, this JVM may have inherited SIGINT
        // ignored, and so would the child; give the child the default disposition back.
        if (defaultSignalWorks()) {
            command.addAll(List.of("env", "--default-signal=INT,TERM"));
        }
        command.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar.toString(), "nodes"));
        command.addAll(Arrays.asList(args));
        err = dir.resolve("stderr");
        process = new ProcessBuilder(command).redirectError(err.toFile()).start();
        reader = new Thread(this::readOutput, "nodes-stdout");
        reader.setDaemon(true);
        reader.start();
        TestTime.await(
                START,
                () -> out.stream().anyMatch(line -> line.startsWith("--redis ")) || !process.isAlive(),
                "the --redis line");
        String redisLine = out.stream()
                .filter(line -> line.startsWith("--redis "))
                .findFirst()
                .orElseThrow(() -> new AssertionError(
                        "no --redis line; stdout:\n" + String.join("\n", out) + "\nstderr:\n" + stderr()));
        List<String> uris = List.of(redisLine.substring("--redis ".length()).split(","));
        assertThat(out).as("each URI on a line of its own").containsSubsequence(uris);
        // Its children are the nodes (by pid: Debian's redis-server is a link to redis-check-rdb).
        process.children().forEach(servers::add);
        for (ProcessHandle server : servers) {
            Path cwd = Path.of("/proc", Long.toString(server.pid()), "cwd");
            if (Files.exists(cwd)) { // Linux: the node's own temporary directory
                nodeDirs.add(Files.readSymbolicLink(cwd));
            }
        }
        return uris;
    }

    private void readOutput() {
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                out.add(line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** After a failure: SIGTERM first, so that the command deletes the nodes' directories; SIGKILL if need be. */
    @AfterEach
    void nothingLeftRunning() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(TestTime.scaled(EXIT).toMillis(), TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor(TestTime.scaled(EXIT).toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        servers.forEach(ProcessHandle::destroyForcibly);
    }

    @ParameterizedTest
    @ValueSource(strings = {"INT", "TERM"})
    void runsTheNodesUntilASignalThenStopsThemAndExitsWith0(String signal) throws Exception {
        List<String> uris = startNodes("--count", "3");

        assertThat(uris).hasSize(3).allMatch(uri -> uri.matches("redis://127\\.0\\.0\\.1:\\d+"));
        for (String uri : uris) {
            try (Jedis jedis = jedis(uri)) {
                assertThat(jedis.ping()).isEqualTo("PONG");
            }
        }
        assertThat(servers).as("child processes, one per node").hasSize(3);
        assertThat(out).anyMatch(line -> line.contains("restart guard"));

        Processes.signal(process.pid(), signal, false, EXIT);

        assertThat(process.waitFor(TestTime.scaled(EXIT).toMillis(), TimeUnit.MILLISECONDS))
                .as("exited after SIG" + signal)
                .isTrue();
        reader.join(TestTime.scaled(EXIT).toMillis());
        assertThat(process.exitValue()).as(stderr()).isZero();
        assertThat(out).last().isEqualTo("stopped 3 nodes");
        assertThat(out).as("plain lines when piped").noneMatch(line -> line.contains("\r") || line.contains("\u001b"));
        assertThat(servers).noneMatch(ProcessHandle::isAlive);
        assertThat(nodeDirs).as("the nodes' directories").noneMatch(Files::exists);
        for (String uri : uris) {
            assertThat(refusesConnections(uri))
                    .as(uri + " no longer accepts connections")
                    .isTrue();
        }
        assertThat(stderr()).isEmpty();
    }

    @Test
    void persistentNodesWriteEveryCommandToTheirAppendOnlyFile() throws Exception {
        List<String> uris = startNodes("--count", "1", "--persistent");

        try (Jedis jedis = jedis(uris.get(0))) {
            assertThat(jedis.configGet("appendonly")).containsEntry("appendonly", "yes");
            assertThat(jedis.configGet("appendfsync")).containsEntry("appendfsync", "always");
        }
        assertThat(out.get(0)).contains("appendonly yes, appendfsync always");

        Processes.signal(process.pid(), "INT", false, EXIT);

        assertThat(process.waitFor(TestTime.scaled(EXIT).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(process.exitValue()).as(stderr()).isZero();
        assertThat(servers).hasSize(1).noneMatch(ProcessHandle::isAlive);
    }

    private static Jedis jedis(String uri) {
        URI parsed = URI.create(uri);
        return new Jedis(parsed.getHost(), parsed.getPort(), PROBE_MILLIS);
    }

    private static boolean refusesConnections(String uri) throws IOException {
        URI parsed = URI.create(uri);
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(parsed.getHost(), parsed.getPort()), PROBE_MILLIS);
            return false;
        } catch (ConnectException refused) {
            return true;
        }
    }

    private String stderr() {
        try {
            return err == null || !Files.exists(err) ? "" : Files.readString(err);
        } catch (IOException e) {
            return "(cannot read " + err + ": " + e + ")";
        }
    }

    /** Whether {@code env --default-signal} (GNU coreutils 8.31 and later) is there. */
    private static boolean defaultSignalWorks() {
        try {
            Process probe = new ProcessBuilder("env", "--default-signal=INT,TERM", "true")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            return probe.waitFor(10, TimeUnit.SECONDS) && probe.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
