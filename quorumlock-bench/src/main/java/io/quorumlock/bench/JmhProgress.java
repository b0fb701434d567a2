package io.quorumlock.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.util.Collection;
import java.util.Locale;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.IterationType;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * JMH's output, split in two: everything JMH prints (and what the forked JVMs print) goes to a log
 * file in JMH's usual format; the iterations also update the bench's progress line.
 */
final class JmhProgress implements OutputFormat {

    private final OutputFormat log;
    private final Progress progress;

    JmhProgress(PrintStream logFile, Progress progress) {
        this.log = OutputFormatFactory.createFormatInstance(logFile, VerboseMode.NORMAL);
        this.progress = progress;
    }

    @Override
    public void iteration(BenchmarkParams benchmark, IterationParams params, int iteration) {
        log.iteration(benchmark, params, iteration);
        progress.status(phase(params, iteration));
    }

    @Override
    public void iterationResult(
            BenchmarkParams benchmark, IterationParams params, int iteration, IterationResult data) {
        log.iterationResult(benchmark, params, iteration, data);
        double micros = data.getPrimaryResult().getScore();
        if (micros > 0) {
            progress.status(
                    phase(params, iteration) + String.format(Locale.ROOT, ", %s cycles/s", Report.rate(1e6 / micros)));
        }
    }

    private static String phase(IterationParams params, int iteration) {
        return (params.getType() == IterationType.WARMUP ? "warm-up " : "measurement ") + iteration + "/"
                + params.getCount();
    }

    @Override
    public void startBenchmark(BenchmarkParams benchmarkParams) {
        log.startBenchmark(benchmarkParams);
    }

    @Override
    public void endBenchmark(BenchmarkResult result) {
        log.endBenchmark(result);
    }

    @Override
    public void startRun() {
        log.startRun();
    }

    @Override
    public void endRun(Collection<RunResult> result) {
        log.endRun(result);
    }

    @Override
    public void print(String s) {
        log.print(s);
    }

    @Override
    public void println(String s) {
        log.println(s);
    }

    @Override
    public void flush() {
        log.flush();
    }

    @Override
    public void close() {
        log.flush(); // the log file is closed by its owner, after the last case
    }

    @Override
    public void verbosePrintln(String s) {
        log.verbosePrintln(s);
    }

    @Override
    public void write(int b) {
        log.write(b);
    }

    @Override
    public void write(byte[] b) throws IOException {
        log.write(b);
    }
}
