package io.quorumlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Signals, waits and the safety net that kills every node when the JVM exits. */
public final class Processes {

    private static final Logger log = LoggerFactory.getLogger(Processes.class);

    /** Live processes, killed at exit. */
    private static final Set<Process> live = ConcurrentHashMap.newKeySet();
    /** Node directories not yet deleted, deleted at exit: also those of nodes stopped but not closed. */
    private static final Set<Path> dirs = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(Processes::killAll, "quorumlock-server-killer"));
    }

    private Processes() {}

    /** Registers a process to be killed (SIGKILL) when the JVM exits, and its directory to be deleted then. */
    static void register(Process process, Path dir) {
        live.add(process);
        dirs.add(dir);
    }

    private static void killAll() {
        live.forEach(Process::destroyForcibly);
        live.forEach(process -> {
            try {
                process.waitFor(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        dirs.forEach(Processes::deleteTree);
    }

    /**
     * Deletes a file or a directory with everything in it, such as the data directory of servers
     * started in this JVM; logs a failure rather than throwing it.
     *
     * @param root what to delete; nothing happens if it does not exist
     */
    public static void deleteTree(Path root) {
        dirs.remove(root);
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException | UncheckedIOException e) {
            log.warn("Cannot delete {}: {}", root, e.toString());
        }
    }

    /** Sends SIGKILL, waits for the process to be gone and forgets it. */
    static void kill(Process process, Duration timeout) {
        process.destroyForcibly();
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(
                        "Process " + process.pid() + " still runs " + timeout.toMillis() + " ms after SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for process " + process.pid() + " to exit", e);
        }
        live.remove(process);
    }

    /**
     * Sends a signal such as {@code STOP} or {@code CONT} with the shell's {@code kill}, then waits
     * (on Linux) until the process is in the expected state, stopped or not.
     */
    public static void signal(long pid, String signal, boolean expectStopped, Duration timeout) {
        try {
            Process kill = new ProcessBuilder("/bin/sh", "-c", "kill -s " + signal + " " + pid)
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) || kill.exitValue() != 0) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -s " + signal + " " + pid + " failed: "
                        + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim());
            }
            awaitState(pid, expectStopped, timeout);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run kill -s " + signal + " " + pid, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while sending " + signal + " to " + pid, e);
        }
    }

    private static void awaitState(long pid, boolean stopped, Duration timeout) throws InterruptedException {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        if (!Files.exists(stat)) {
            return; // not Linux: the signal was sent, trust it
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (isStopped(stat) != stopped) {
            if (System.nanoTime() - deadline >= 0) {
                throw new IllegalStateException("Process " + pid + " did not become "
                        + (stopped ? "stopped" : "running") + " within " + timeout.toMillis() + " ms");
            }
            Thread.sleep(1);
        }
    }

    /**
     * True if the process runs: alive and not a zombie. A killed process whose parent died is
     * reaped late by init; as a zombie it holds nothing but its pid.
     */
    public static boolean isRunning(ProcessHandle process) {
        if (!process.isAlive()) {
            return false;
        }
        try {
            String stat =
                    Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"), StandardCharsets.US_ASCII);
            return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
        } catch (IOException | RuntimeException gone) {
            return process.isAlive(); // not Linux, or gone meanwhile
        }
    }

    /** True if process {@code pid} is stopped (SIGSTOP) now; false if it runs, is gone, or this is not Linux. */
    public static boolean isStopped(long pid) {
        return isStopped(Path.of("/proc", Long.toString(pid), "stat"));
    }

    /** Reads the state letter of {@code /proc/PID/stat}: "PID (name) STATE ...", T or t when stopped. */
    private static boolean isStopped(Path stat) {
        try {
            String text = Files.readString(stat, StandardCharsets.US_ASCII);
            char state = text.charAt(text.lastIndexOf(')') + 2);
            return state == 'T' || state == 't';
        } catch (IOException e) {
            return false; // the process is gone
        }
    }

    /** The size of a file, 0 if it does not exist yet. */
    static long size(Path file) {
        try {
            return Files.exists(file) ? Files.size(file) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    /** The last lines of what was appended to a text file after its first {@code from} bytes. */
    static String tail(Path file, long from, int lines) {
        try {
            byte[] bytes = Files.exists(file) ? Files.readAllBytes(file) : new byte[0];
            int start = (int) Math.min(from, bytes.length);
            List<String> all = new String(bytes, start, bytes.length - start, StandardCharsets.UTF_8)
                    .lines()
                    .toList();
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }

    /**
     * Whether {@code port} of {@code host} can be bound now, as a server would bind it (with
     * SO_REUSEADDR, so that a port whose last connections linger in TIME_WAIT counts as free).
     */
    public static boolean portFree(String host, int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(host, port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Ports handed out by {@link #freePort} in this JVM: never handed out twice. */
    private static final Set<Integer> handedOut = ConcurrentHashMap.newKeySet();

    /**
     * A port that is free on {@code host} now, for a server (one that races for it fails to bind
     * and starts over). It lies outside the range the kernel takes outgoing connections' ports
     * from ({@code /proc/sys/net/ipv4/ip_local_port_range}), so that a server stopped and started
     * again on its port cannot find it taken by a client's socket, as a port the kernel picks
     * ({@code bind(0)}) can; and it is never handed out twice in one JVM.
     */
    static int freePort(String host) {
        int[] outgoing = outgoingPortRange();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1_000; attempt++) {
            int port = 10_000 + random.nextInt(65_535 - 10_000);
            if ((port >= outgoing[0] && port <= outgoing[1]) || !handedOut.add(port)) {
                continue;
            }
            try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getByName(host))) {
                return socket.getLocalPort();
            } catch (IOException e) {
                // taken: try another
            }
        }
        throw new IllegalStateException("Cannot find a free port on " + host + " outside the range " + outgoing[0] + "-"
                + outgoing[1] + " of outgoing connections after 1,000 tries");
    }

    /** The kernel's range for outgoing ports; Linux's default where it cannot be read. */
    private static int[] outgoingPortRange() {
        try {
            // Line by line: Files.readString reads only the first bytes of some /proc files.
            String[] bounds = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                    .get(0)
                    .trim()
                    .split("\\s+");
            return new int[] {Integer.parseInt(bounds[0]), Integer.parseInt(bounds[1])};
        } catch (IOException | RuntimeException e) {
            return new int[] {32_768, 60_999};
        }
    }

    /** Sleeps between two polls of a server; an interrupt ends the wait with an exception naming it. */
    static void pollPause(long millis, String waitingFor) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for " + waitingFor, e);
        }
    }
}
