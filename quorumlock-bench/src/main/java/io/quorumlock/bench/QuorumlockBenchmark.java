package io.quorumlock.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumlock.Lease;
import io.quorumlock.micrometer.QuorumlockMetrics;
import io.quorumlock.redis.Redlock;
import io.quorumlock.redis.RedlockBuilder;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * quorumlock over 1 or N nodes: {@code tryAcquire} then {@code release}. The acquire step is also
 * timed on its own (with {@link System#nanoTime()}) and its percentiles written to the side file.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Thread)
public class QuorumlockBenchmark extends NodesBenchmark {

    /**
     * The lock's listener: {@code none}, or {@code micrometer} for {@code QuorumlockMetrics} bound
     * to a {@link SimpleMeterRegistry}. The bench command passes the system property {@value
     * #LISTENER_PROPERTY} of its own JVM, {@code none} by default.
     */
    @Param("none")
    public String listener;

    static final String LISTENER_PROPERTY = "quorumlock.bench.listener";

    private Redlock redlock;
    private String key;

    @Override
    protected String library() {
        return "quorumlock";
    }

    @Override
    protected void connect() {
        trial.recordAcquires();
        key = trial.key();
        RedlockBuilder builder = Clients.quorumlockBuilder(trial.uris());
        if (!tlsCa.isEmpty()) {
            builder.tlsCaBundle(java.nio.file.Path.of(tlsCa));
        }
        if ("micrometer".equals(listener)) {
            QuorumlockMetrics metrics = new QuorumlockMetrics();
            metrics.bindTo(new SimpleMeterRegistry());
            builder.listener(metrics);
        } else if (!"none".equals(listener)) {
            throw new IllegalArgumentException("listener must be none or micrometer, was " + listener);
        }
        redlock = builder.build();
    }

    @Override
    protected void disconnect() {
        redlock.close();
    }

    /** One lock cycle: acquire, release. */
    @Override
    @Benchmark
    public boolean cycle() {
        try {
            long start = System.nanoTime();
            Optional<Lease> lease = redlock.tryAcquire(key, Trial.TTL);
            trial.acquired(System.nanoTime() - start);
            if (lease.isEmpty()) {
                trial.failure();
                return false;
            }
            lease.get().release();
            return true;
        } catch (RuntimeException e) {
            trial.error(e);
            return false;
        }
    }
}
