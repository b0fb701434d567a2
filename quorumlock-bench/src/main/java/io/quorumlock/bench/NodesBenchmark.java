package io.quorumlock.bench;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.IterationParams;

/**
 * What the lock benchmarks over 1 or N nodes share: their parameters, the trial around them, and
 * the freeze of a node once the client is set up and has run a few cycles.
 */
@State(Scope.Thread)
public abstract class NodesBenchmark {

    /** The node URIs, separated by spaces. */
    @Param("")
    public String nodes;

    /** How many of the nodes to use, from the first. */
    @Param("5")
    public int nodeCount;

    /** The pid of a node to freeze once the client is set up; empty for none. */
    @Param("")
    public String freezePid;

    /** Where to write the trial's own figures; empty for nowhere. */
    @Param("")
    public String sideFile;

    /** The PEM CA bundle that signed the nodes' certificates, for {@code rediss://} nodes; empty for plain ones. */
    @Param("")
    public String tlsCa;

    protected Trial trial;

    /** The library's name in the side file. */
    protected abstract String library();

    /** Builds the client over {@code trial.uris()}. */
    protected abstract void connect();

    /** Closes the client. */
    protected abstract void disconnect();

    /** One lock cycle; the subclass marks it {@code @Benchmark}. */
    public abstract boolean cycle();

    @Setup(Level.Trial)
    public void setUp() {
        trial = new Trial(nodes, nodeCount, freezePid, sideFile, library());
        connect();
        if (trial.freezes()) {
            for (int i = 0; i < Trial.CYCLES_BEFORE_FREEZE; i++) {
                cycle();
            }
            trial.freeze();
        }
    }

    @Setup(Level.Iteration)
    public void iteration(IterationParams params) {
        trial.iteration(params);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        trial.thaw();
        disconnect();
        trial.finish();
    }
}
