package io.quorumlock.bench;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * What every benchmark state shares, inside the JVM that runs it (a JMH fork, or the bench command
 * itself when forks are off): the node addresses it was given, the node to freeze, and what it
 * saw besides JMH's own timings — failed attempts, errors, and the latency of the acquire step
 * alone. These go to a small properties file (the {@code sideFile} parameter) when the trial ends,
 * for the bench command to read.
 */
final class Trial {

    /** The TTL of every lock taken in the benchmarks: long enough never to expire during a cycle. */
    static final Duration TTL = Duration.ofSeconds(10);

    /** Cycles run before a node is frozen, so that every client has its connections open. */
    static final int CYCLES_BEFORE_FREEZE = 50;

    static final String FIGURES_SUFFIX = ".properties";
    static final String ACQUIRE_SUFFIX = ".acquire";

    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final int MAX_SAMPLES = 1 << 21;

    private final List<String> uris;
    private final String freezePid;
    private final String sideFile;
    private final String key;
    private long[] acquireNanos; // allocated only for cases that record the acquire step
    private int samples;
    private boolean measuring;
    private long failures;
    private long errors;
    private String firstError = "";

    /**
     * @param nodes the node URIs, separated by spaces
     * @param nodeCount how many of them to use, from the first
     * @param freezePid the pid of the node to freeze (SIGSTOP) once the clients are set up; empty
     *     for none
     * @param sideFile where to write the trial's own figures; empty for nowhere
     * @param library a short name for the key
     */
    Trial(String nodes, int nodeCount, String freezePid, String sideFile, String library) {
        List<String> all = Arrays.stream(nodes.trim().split("\\s+"))
                .filter(s -> !s.isEmpty())
                .toList();
        if (all.size() < nodeCount) {
            throw new IllegalStateException(
                    "the benchmark needs " + nodeCount + " node URIs in its 'nodes' parameter, got '" + nodes + "'");
        }
        this.uris = all.subList(0, nodeCount);
        this.freezePid = freezePid.trim();
        this.sideFile = sideFile.trim();
        // A distinct key per benchmark thread, and per case, so that keys left behind by a frozen
        // node (applied when it resumes) never meet another case.
        this.key = "bench:" + library + ":" + nodeCount + (this.freezePid.isEmpty() ? "" : ":frozen") + ":"
                + THREADS.incrementAndGet();
    }

    /** The key of the first trial of {@code library} on {@code nodeCount} nodes in a JVM: the one a one-thread case locks. */
    static String firstKey(String library, int nodeCount) {
        return "bench:" + library + ":" + nodeCount + ":1";
    }

    List<String> uris() {
        return uris;
    }

    String key() {
        return key;
    }

    boolean freezes() {
        return !freezePid.isEmpty();
    }

    /** Keeps the latency of every acquire step of the measurement iterations. */
    void recordAcquires() {
        acquireNanos = new long[MAX_SAMPLES];
    }

    /** Freezes the chosen node (SIGSTOP), if any; the clients must be set up before. */
    void freeze() {
        if (freezes()) {
            Signals.send(freezePid, "STOP");
        }
    }

    /** Thaws the frozen node (SIGCONT), if any. */
    void thaw() {
        if (freezes()) {
            Signals.send(freezePid, "CONT");
        }
    }

    /** Called at the start of every iteration: only measurement iterations are recorded. */
    void iteration(IterationParams params) {
        measuring = params.getType() == IterationType.MEASUREMENT;
    }

    void acquired(long nanos) {
        if (measuring && acquireNanos != null && samples < acquireNanos.length) {
            acquireNanos[samples++] = nanos;
        }
    }

    void failure() {
        if (measuring) {
            failures++;
        }
    }

    void error(RuntimeException e) {
        if (measuring) {
            errors++;
        }
        if (firstError.isEmpty()) {
            firstError = e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }

    /**
     * Writes the trial's figures, if a side file was asked for: {@code SIDEFILE-PID.properties}
     * (failures, errors) and {@code SIDEFILE-PID.acquire} (the acquire latencies in nanoseconds,
     * as big-endian longs), one pair per JVM, since a case may run in several forks.
     */
    void finish() {
        if (sideFile.isEmpty()) {
            return;
        }
        String prefix = sideFile + "-" + ProcessHandle.current().pid() + "-" + key.hashCode();
        Properties figures = new Properties();
        figures.setProperty("failures", Long.toString(failures));
        figures.setProperty("errors", Long.toString(errors));
        figures.setProperty("first_error", firstError);
        try {
            if (acquireNanos != null) {
                try (DataOutputStream out = new DataOutputStream(
                        new BufferedOutputStream(Files.newOutputStream(Path.of(prefix + ACQUIRE_SUFFIX))))) {
                    for (int i = 0; i < samples; i++) {
                        out.writeLong(acquireNanos[i]);
                    }
                }
            }
            try (var out = Files.newBufferedWriter(Path.of(prefix + FIGURES_SUFFIX), StandardCharsets.UTF_8)) {
                figures.store(out, "quorumlock bench: figures of one trial");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write " + prefix, e);
        }
    }

    /** The nearest-rank percentile of sorted values. */
    static long percentile(long[] sorted, double percent) {
        int rank = (int) Math.ceil(percent / 100 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }
}
