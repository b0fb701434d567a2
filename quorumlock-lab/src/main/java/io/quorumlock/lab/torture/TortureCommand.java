package io.quorumlock.lab.torture;

import io.quorumlock.cli.DurationConverter;
import io.quorumlock.cli.Main;
import io.quorumlock.cli.Verbosity;
import io.quorumlock.lab.ProgressLine;
import io.quorumlock.testkit.ServerWait;
import io.quorumlock.torture.FaultKind;
import io.quorumlock.torture.ResultTable;
import io.quorumlock.torture.Screenshot;
import io.quorumlock.torture.Strategy;
import io.quorumlock.torture.Torture;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Help.Column;
import picocli.CommandLine.Help.TextTable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code quorumlock torture}: every lock under the same seeded fault schedule, the histories
 * checked, a table and a report.html with one timeline per strategy.
 */
@Command(
        name = "torture",
        sortOptions = false,
        description = {
            "Runs every lock at once under the same seeded schedule of faults, checks the recorded histories and"
                    + " draws them.",
            "",
            "Each strategy gets its own local servers and its own clients (separate JVM processes), which loop:"
                    + " acquire the lock, read-modify-write a shared record in a database, release. The nemesis"
                    + " kills, freezes and restarts nodes, jumps their clocks, freezes clients past their lease,"
                    + " expires sessions, cuts one client off from the servers, slows nodes down and fails a"
                    + " Sentinel master over to a replica that lacks its latest writes (each client"
                    + " reaches the servers through fault proxies of its own). The checker finds overlapping"
                    + " critical sections, lost updates and stale writes from the histories alone.",
            "",
            "Exit code 0 when no strategy that claims correctness (the fenced locks, the version column) shows a"
                    + " violation, 1 otherwise, 2 for a usage error. The Redis locks claim efficiency only: their"
                    + " violations are shown, not failed.",
            ""
        })
public final class TortureCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Mixin
    private Verbosity verbosity;

    @Option(
            names = "--duration",
            paramLabel = "TIME",
            defaultValue = "60s",
            converter = DurationConverter.class,
            description = "How long the clients run, at least 5s (default: ${DEFAULT-VALUE}).")
    private Duration duration;

    @Option(
            names = "--faults",
            paramLabel = "KINDS",
            defaultValue = "all",
            description = "Fault kinds, comma-separated: all, or some of kill, freeze, restart, clock, pause, expire,"
                    + " partition, slow, failover (default: ${DEFAULT-VALUE}); see Fault kinds below.")
    private String faults;

    @Option(
            names = "--strategies",
            paramLabel = "NAMES",
            defaultValue = "all",
            description = "Strategies, comma-separated: all, or some of redis, redlock, redlock-guarded, zookeeper,"
                    + " etcd, postgres, mariadb, zookeeper-leader, etcd-leader, postgres-leader, mariadb-leader,"
                    + " postgres-unfenced, sentinel-leader, sentinel-wait-leader, redlock-leader, zookeeper-semaphore,"
                    + " postgres-semaphore, etcd-semaphore, mariadb-semaphore, redis-semaphore, zookeeper-rw,"
                    + " postgres-rw, etcd-rw, mariadb-rw, redis-rw, optimistic"
                    + " (default: ${DEFAULT-VALUE}).")
    private String strategies;

    @Option(
            names = "--clients",
            paramLabel = "N",
            defaultValue = "5",
            description = "Clients per strategy, 2 to 20 (default: ${DEFAULT-VALUE}).")
    private int clients;

    @Option(
            names = "--seed",
            paramLabel = "N",
            description = "Seed of the fault schedule (default: random, printed at the start).")
    private Long seed;

    @Option(
            names = "--ttl",
            paramLabel = "TIME",
            defaultValue = "2s",
            converter = DurationConverter.class,
            description = "Lease TTL and ZooKeeper session timeout, 1s to 30s (default: ${DEFAULT-VALUE}).")
    private Duration ttl;

    @Option(
            names = "--out",
            paramLabel = "DIR",
            description = "Folder for the histories, the client logs and report.html (default: a new"
                    + " torture-DATE-TIME folder in the current one).")
    private Path out;

    @Option(
            names = "--threads",
            description = "Run the clients as threads of one JVM: faster to start; a client pause is then a sleep of"
                    + " its thread plus the expiry of its session, not a SIGSTOP of its process.")
    private boolean threads;

    @Option(names = "--png", description = "Also render report.png with headless Chromium (Debian package chromium).")
    private boolean png;

    private Torture.Result result;

    /**
     * Adds the fault kinds, each with what it does, to {@code torture}'s help after its options,
     * wrapped in a column of their own.
     */
    public static void describeFaultKinds(CommandLine torture) {
        String key = "faultKinds";
        int name = Arrays.stream(FaultKind.values())
                        .mapToInt(k -> k.option().length())
                        .max()
                        .orElse(0)
                + 4;
        torture.getHelpSectionMap().put(key, help -> {
            int width = help.commandSpec().usageMessage().width();
            TextTable table = TextTable.forColumns(
                    help.colorScheme(),
                    new Column(name, 2, Column.Overflow.SPAN),
                    new Column(width - name, 1, Column.Overflow.WRAP));
            for (FaultKind kind : FaultKind.values()) {
                table.addRowValues(kind.option(), kind.description());
            }
            return String.format("%nFault kinds:%n") + table;
        });
        List<String> sections = new ArrayList<>(torture.getHelpSectionKeys());
        sections.add(sections.indexOf(CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST) + 1, key);
        torture.setHelpSectionKeys(sections);
    }

    @Override
    public Integer call() throws Exception {
        Torture.Options options;
        long runSeed = seed != null ? seed : ThreadLocalRandom.current().nextLong();
        Path folder = out != null
                ? out
                : Path.of("torture-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        try {
            options = new Torture.Options(
                    Strategy.parse(strategies),
                    FaultKind.parse(faults),
                    duration,
                    clients,
                    runSeed,
                    folder,
                    threads,
                    ttl);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        // The libraries' warnings are the faults at work: they go to a file beside the histories, set
        // before anything logs (the simple logger reads its settings once).
        java.nio.file.Files.createDirectories(folder);
        System.setProperty(
                "org.slf4j.simpleLogger.logFile", folder.resolve("torture.log").toString());
        if (png && Screenshot.chromium().isEmpty()) {
            throw new ParameterException(spec.commandLine(), "--png: " + Screenshot.INSTALL_HINT);
        }
        PrintWriter console = spec.commandLine().getOut();
        console.printf(
                "Torture of %d strategies, %d %s each, for %d s (seed %d); histories and report in %s%n",
                options.strategies().size(),
                clients,
                threads ? "client threads" : "client processes",
                duration.toSeconds(),
                runSeed,
                folder);
        console.flush();
        ProgressLine progress = ProgressLine.forConsole(console);
        try (ServerWait.Listening waits = ServerWait.listen(progress)) {
            result = Torture.run(options, new Torture.Progress(progress::status, progress::println));
        }
        progress.clear();
        console.println();
        ResultTable.lines(result).forEach(console::println);
        console.println();
        if (png) {
            Path image = result.report().resolveSibling("report.png");
            Screenshot.png(result.report(), image, 1400, Duration.ofSeconds(60));
            console.println("Wrote " + result.report() + " and " + image);
        } else {
            console.println("Wrote " + result.report());
        }
        console.println(
                result.exitCode() == 0
                        ? "OK: no lock that claims correctness lost an update, let a stale write through or tore a read."
                        : "FAILED: a lock that claims correctness showed a violation (see above).");
        console.flush();
        return result.exitCode() == 0 ? 0 : Main.FAILURE;
    }

    /** The result of the last run; null before the first. */
    Torture.Result result() {
        return result;
    }
}
