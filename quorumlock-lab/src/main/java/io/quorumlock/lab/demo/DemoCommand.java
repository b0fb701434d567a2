package io.quorumlock.lab.demo;

import io.quorumlock.cli.DurationConverter;
import io.quorumlock.cli.Formats;
import io.quorumlock.cli.Main;
import io.quorumlock.cli.Verbosity;
import io.quorumlock.lab.ProgressLine;
import io.quorumlock.testkit.ServerWait;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code quorumlock demo}: the inventory reservation of the Redlock article, on five local Redis
 * nodes it starts and stops itself, with one node frozen and another killed halfway through.
 * Needs nothing running. Exits with 0 when the stock adds up, 1 otherwise.
 */
@Command(
        name = "demo",
        sortOptions = false,
        description = {
            "Runs the inventory reservation of the Redlock article on 5 local Redis nodes that it starts and stops itself.",
            "",
            "Concurrent clients, each with its own Redlock, reserve 1-3 units of one SKU whose stock is kept in an"
                    + " in-memory H2 database (read, then write: only the lock prevents overselling). Halfway through,"
                    + " one node is frozen and another killed; the run goes on with the quorum of 3.",
            "",
            "At the end a table shows what happened and whether any unit was oversold. Then the process pause of"
                    + " the Redlock debate, a leader's pause, and the failover the article opens with: a master behind"
                    + " Sentinel dies before its replica has a held lock's key, and a second client locks on the"
                    + " promoted replica. Exit code 0 when the stock adds up and each part plays as described, 1"
                    + " otherwise.",
            ""
        })
public final class DemoCommand implements Callable<Integer> {

    private static final int MAX_CLIENTS = 64;

    @Spec
    private CommandSpec spec;

    @Mixin
    private Verbosity verbosity;

    private int clients;
    private int stock;
    private Duration duration;

    @Option(
            names = "--seed",
            paramLabel = "N",
            order = 4,
            description = "Seed for the quantities and for which nodes fail (default: random, printed at the start).")
    private Long seed;

    private DemoResult result;
    private List<io.quorumlock.examples.PauseTimeline.Result> pause;
    private io.quorumlock.examples.LeaderPauseTimeline.Result leader;
    private FailoverDemo.Result failover;

    @Option(
            names = "--clients",
            paramLabel = "N",
            defaultValue = "8",
            order = 1,
            description = "Concurrent clients, each with its own Redlock (default: ${DEFAULT-VALUE}, at most "
                    + MAX_CLIENTS + ").")
    void setClients(int clients) {
        require(
                clients >= 1 && clients <= MAX_CLIENTS,
                "--clients must be between 1 and " + MAX_CLIENTS + ", was " + clients);
        this.clients = clients;
    }

    @Option(
            names = "--stock",
            paramLabel = "N",
            defaultValue = "2000",
            order = 2,
            description = "Units of the SKU in stock at the start (default: ${DEFAULT-VALUE}).")
    void setStock(int stock) {
        require(stock >= 1, "--stock must be at least 1, was " + stock);
        this.stock = stock;
    }

    @Option(
            names = "--duration",
            paramLabel = "TIME",
            defaultValue = "10s",
            order = 3,
            converter = DurationConverter.class,
            description =
                    "Longest run, such as 10s or 500ms; it ends earlier when the stock is gone (default: ${DEFAULT-VALUE}).")
    void setDuration(Duration duration) {
        require(
                !duration.isNegative() && !duration.isZero(),
                "--duration must be positive, was " + Formats.duration(duration));
        this.duration = duration;
    }

    @Override
    public Integer call() throws Exception {
        long runSeed = seed != null ? seed : ThreadLocalRandom.current().nextLong();
        PrintWriter out = spec.commandLine().getOut();
        ProgressLine progress = ProgressLine.forConsole(out);
        try (ServerWait.Listening waits = ServerWait.listen(progress)) {
            return play(out, progress, runSeed);
        }
    }

    /** The parts, one after the other; the exit code. */
    private int play(PrintWriter out, ProgressLine progress, long runSeed) throws Exception {
        result = new DemoRun(clients, stock, duration, runSeed, progress).run();
        out.println();
        result.table().printTo(out);
        out.println();
        out.println(result.verdict());
        out.println();
        out.println(
                "The pause of the Redlock debate, " + PauseDemo.ROUNDS + " rounds each: A locks and reads the stock,"
                        + " pauses until its lease is gone; B locks, sells one unit, writes; A wakes up and writes.");
        out.flush();
        pause = PauseDemo.run(progress);
        progress.clear();
        PauseDemo.table(pause).forEach(out::println);
        boolean fenceHeld = pause.get(1).lostUpdates() == 0 && pause.get(1).staleWritesRejected() == PauseDemo.ROUNDS;
        out.println();
        out.println(
                fenceHeld
                        ? "A TTL lock cannot stop a paused client's late write; the fencing token and the fence did."
                        : "FAILED: the fence let a stale write through.");
        out.println();
        out.println("A leader's pause: A and B elect a leader on ZooKeeper; A, the leader, reads the stock and"
                + " pauses until its session is gone; B is elected and sells; A wakes and writes.");
        out.flush();
        leader = PauseDemo.leader();
        progress.clear();
        leader.timeline().forEach(out::println);
        boolean termFenced = leader.staleWriteRefused() && leader.tokenB() > leader.tokenA();
        out.println(
                termFenced
                        ? "The old leader's term ended with its session; its token is older than the new leader's,"
                                + " and the fence refused its write."
                        : "FAILED: the fence let the old leader's write through.");
        out.println();
        out.println("The article's failover: A locks on a Redis master behind Sentinel; the master dies before"
                + " the key reaches its replica; the replica is promoted; B locks on it.");
        out.flush();
        failover = FailoverDemo.run(progress);
        progress.clear();
        failover.timeline().forEach(out::println);
        boolean failoverShown = failover.bothHeld() && failover.refusedWithWait();
        out.println(
                failoverShown
                        ? "Replication is asynchronous: a failover can hand a held lock to a second client. WAIT"
                                + " narrows the window; a fenced lock closes it."
                        : "FAILED: the failover did not play as described.");
        out.flush();
        return result.passed() && fenceHeld && termFenced && failoverShown ? 0 : Main.FAILURE;
    }

    /** The failover of the last run; null before the first. */
    FailoverDemo.Result failover() {
        return failover;
    }

    /** The leader's pause of the last run; null before the first. */
    io.quorumlock.examples.LeaderPauseTimeline.Result leader() {
        return leader;
    }

    /** The pause timeline's results of the last run; null before the first. */
    List<io.quorumlock.examples.PauseTimeline.Result> pause() {
        return pause;
    }

    /** The result of the last run; null before the first. */
    DemoResult result() {
        return result;
    }

    private void require(boolean valid, String message) {
        if (!valid) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }
}
