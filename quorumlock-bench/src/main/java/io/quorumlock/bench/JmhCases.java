package io.quorumlock.bench;

import io.quorumlock.testkit.RedisCluster;
import io.quorumlock.testkit.RedisSentinels;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.TlsMaterial;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/** Runs one JMH case against the bench command's nodes and turns JMH's result into a {@link CaseResult}. */
final class JmhCases {

    /** The node that the frozen cases freeze. */
    static final int FROZEN_NODE = 0;

    private final Plan plan;
    private final RedisServers servers;
    private final OutputFormat output;
    private final Path scratch;
    private int runs;

    JmhCases(Plan plan, RedisServers servers, OutputFormat output, Path scratch) {
        this.plan = plan;
        this.servers = servers;
        this.output = output;
        this.scratch = scratch;
    }

    CaseResult run(Plan.JmhCase c) {
        if (c.skipped() != null) {
            return CaseResult.skipped(c.caseId(), c.library(), c.nodes(), 1, c.skipped());
        }
        if (c.caseId().equals(Plan.SENTINEL)) {
            try (RedisSentinels group = RedisSentinels.start()) {
                return run(
                        c, List.of(c.library().equals(Plan.RAW) ? group.master().uri() : group.uri()), "");
            } catch (RuntimeException e) {
                return CaseResult.failed(c.caseId(), c.library(), c.nodes(), 1, "Sentinel: " + e.getMessage());
            }
        }
        if (c.caseId().equals(Plan.CLUSTER)) {
            try (RedisCluster cluster = RedisCluster.start(3, 1)) {
                RedisServer seed = cluster.masters().get(0);
                return run(
                        c,
                        List.of(
                                c.library().equals(Plan.RAW)
                                        ? cluster.masterOf(Trial.firstKey(Plan.RAW, 1))
                                                .uri()
                                        : "redis-cluster://" + seed.host() + ":" + seed.port()),
                        "");
            } catch (RuntimeException e) {
                return CaseResult.failed(c.caseId(), c.library(), c.nodes(), 1, "Cluster: " + e.getMessage());
            }
        }
        if (!c.caseId().equals(Plan.TLS)) {
            return run(c, servers.uris(), "");
        }
        // Nodes of their own that speak TLS only, with a throwaway CA: the same machine, the same run.
        List<RedisServer> tls = new ArrayList<>();
        try (TlsMaterial material = TlsMaterial.generate("127.0.0.1")) {
            for (int i = 0; i < c.nodes(); i++) {
                tls.add(RedisServer.startTls(material, false));
            }
            return run(
                    c,
                    tls.stream().map(RedisServer::uri).toList(),
                    material.caCertificate().toString());
        } catch (RuntimeException e) {
            return CaseResult.failed(c.caseId(), c.library(), c.nodes(), 1, "TLS nodes: " + e.getMessage());
        } finally {
            tls.forEach(RedisServer::close);
        }
    }

    private CaseResult run(Plan.JmhCase c, List<String> uris, String tlsCa) {
        RedisServer frozen = servers.get(FROZEN_NODE);
        try {
            Path sideFile = scratch.resolve("case-" + ++runs);
            ChainedOptionsBuilder options = new OptionsBuilder()
                    .include("^" + Pattern.quote(c.benchmark().getName()) + "\\.cycle$")
                    .mode(Mode.SampleTime)
                    .timeUnit(TimeUnit.MICROSECONDS)
                    .threads(1)
                    .forks(plan.forks())
                    .shouldFailOnError(true)
                    .jvmArgs("-Xms1g", "-Xmx1g", "-Djmh.ignoreLock=true")
                    .addProfiler(GCProfiler.class)
                    .param("nodes", String.join(" ", uris))
                    .param("sideFile", sideFile.toString());
            if (c.slow()) {
                // Every iteration runs at least one cycle: a 1 ms iteration is exactly one slow cycle.
                options.warmupIterations(0)
                        .measurementIterations(plan.slowMeasurementIterations())
                        .measurementTime(TimeValue.milliseconds(1))
                        .forks(Math.min(plan.forks(), 1));
            } else {
                options.warmupIterations(plan.warmupIterations())
                        .warmupTime(TimeValue.milliseconds(plan.warmupTime().toMillis()))
                        .measurementIterations(plan.measurementIterations())
                        .measurementTime(
                                TimeValue.milliseconds(plan.measurementTime().toMillis()));
            }
            if (hasParam(c.benchmark(), "listener")) {
                options.param("listener", System.getProperty(QuorumlockBenchmark.LISTENER_PROPERTY, "none"));
            }
            if (hasParam(c.benchmark(), "tlsCa")) {
                options.param("tlsCa", tlsCa);
            }
            if (hasParam(c.benchmark(), "nodeCount")) {
                options.param("nodeCount", Integer.toString(c.nodes()));
            }
            if (hasParam(c.benchmark(), "freezePid")) {
                options.param("freezePid", c.frozen() ? Long.toString(frozen.pid()) : "");
            }
            Collection<RunResult> results = new Runner(options.build(), output).run();
            if (results.isEmpty()) {
                return CaseResult.failed(c.caseId(), c.library(), c.nodes(), 1, "JMH returned no result");
            }
            return toCase(c, results.iterator().next(), SideFigures.read(sideFile));
        } catch (RunnerException | RuntimeException | IOException e) {
            String message = e.getMessage() == null ? e.toString() : e.getMessage();
            return CaseResult.failed(c.caseId(), c.library(), c.nodes(), 1, firstLine(message));
        } finally {
            if (c.frozen()) {
                // The fork thaws the node when it ends; make sure of it, also when the fork died.
                frozen.pause();
                frozen.resume();
            }
            flushAll();
        }
    }

    @SuppressWarnings("rawtypes") // JMH's secondary results are a map of raw Result
    private CaseResult toCase(Plan.JmhCase c, RunResult run, SideFigures side) {
        Result<?> primary = run.getPrimaryResult();
        double meanMicros = primary.getStatistics().getMean();
        Double alloc = null;
        for (var secondary : run.getSecondaryResults().entrySet()) {
            if (secondary.getKey().endsWith("gc.alloc.rate.norm")) {
                alloc = secondary.getValue().getScore();
            }
        }
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("samples", primary.getStatistics().getN());
        double error = primary.getScoreError();
        if (!Double.isNaN(error) && meanMicros > 0) {
            // JMH's 99.9% confidence half-width of the mean, over all samples: optimistic, since
            // samples of one iteration are not independent; the spread between iterations says more.
            extra.put("jmh_error_pct", round(100 * error / meanMicros, 1));
        }
        double[] iterations = run.getBenchmarkResults().stream()
                .flatMap(b -> b.getIterationResults().stream())
                .mapToDouble(i -> i.getPrimaryResult().getScore())
                .toArray();
        if (iterations.length > 1) {
            double mean = java.util.Arrays.stream(iterations).average().orElse(0);
            double variance = java.util.Arrays.stream(iterations)
                            .map(v -> (v - mean) * (v - mean))
                            .sum()
                    / (iterations.length - 1);
            extra.put("iterations", iterations.length);
            extra.put("iteration_cv_pct", round(100 * Math.sqrt(variance) / mean, 1));
        }
        long[] acquires = side.acquireNanos();
        if (acquires.length > 0) {
            extra.put("acquire_samples", acquires.length);
            extra.put("acquire_p50_us", round(Trial.percentile(acquires, 50) / 1e3, 1));
            extra.put("acquire_p99_us", round(Trial.percentile(acquires, 99) / 1e3, 1));
            extra.put("acquire_max_us", round(acquires[acquires.length - 1] / 1e3, 1));
        }
        extra.put("failures", side.failures());
        extra.put("errors", side.errors());
        if (!side.firstError().isEmpty()) {
            extra.put("first_error", side.firstError());
        }
        if (c.frozen()) {
            extra.put("frozen_node", FROZEN_NODE + 1);
        }
        return new CaseResult(
                c.caseId(),
                c.library(),
                c.nodes(),
                1,
                1e6 / meanMicros,
                primary.getStatistics().getPercentile(50),
                primary.getStatistics().getPercentile(99),
                alloc,
                extra,
                null,
                null);
    }

    private void flushAll() {
        for (RedisServer server : servers) {
            try {
                server.flushAll();
            } catch (RuntimeException e) {
                // the next case sees the leftover keys under other names; nothing to stop for
            }
        }
    }

    private static boolean hasParam(Class<?> benchmark, String name) {
        try {
            benchmark.getField(name);
            return true;
        } catch (NoSuchFieldException e) {
            return false;
        }
    }

    static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }

    private static String firstLine(String text) {
        int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }
}
