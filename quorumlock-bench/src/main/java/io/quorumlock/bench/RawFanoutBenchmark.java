package io.quorumlock.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/** The 5-node floor ({@link RawFanout}): SET NX PX to all nodes, read all, compare-and-delete to all, read all. */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Thread)
public class RawFanoutBenchmark extends NodesBenchmark {

    private RawFanout fanout;
    private String key;

    @Override
    protected String library() {
        return Plan.FANOUT;
    }

    @Override
    protected void connect() {
        key = trial.key();
        fanout = new RawFanout(trial.uris());
    }

    @Override
    protected void disconnect() {
        fanout.close();
    }

    /** One lock cycle over all nodes; true if a quorum granted the SET. */
    @Override
    @Benchmark
    public boolean cycle() {
        String token = RawFanout.token();
        try {
            if (fanout.cycle(key, token) < fanout.quorum()) {
                trial.failure();
                return false;
            }
            return true;
        } catch (RuntimeException e) {
            trial.error(e);
            return false;
        }
    }
}
