package io.quorumlock.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import picocli.CommandLine;

/**
 * {@code quorumlock bench --baseline REV_OR_JAR}: the chosen rows measured with this build and with
 * an earlier one, round after round, each build's bench in a JVM of its own (new, old, new, old...,
 * so that the machine's drift hits both); then each row's medians side by side, with the ratio of
 * the two and its spread over the rounds.
 */
final class BaselineRun {

    /** The rows when {@code --only} is not given: one node and 5 nodes, each library. */
    static final String DEFAULT_ONLY = "^(single-node|five-nodes) /";

    static final String JSON_FILE = "bench-baseline.json";
    /** Each child's output, in turn. */
    static final String LOG_FILE = "bench-baseline.log";

    /** The time a child's progress lines start with: those are shown on the status line. */
    private static final Pattern ELAPSED = Pattern.compile("^\\d+:\\d\\d {2}");

    /** The most of a child's progress line shown on the status line. */
    private static final int MAX_STATUS = 72;

    /**
     * One build: the name the table gives it, what the output calls it, its jar, and the command
     * that starts its bench.
     */
    private record Side(String name, String label, Path jar, List<String> command) {}

    private final CommandLine commandLine;
    private final BaselineOptions options;
    private final String only;
    private final boolean smoke;
    private final Integer queuedThreads;
    private final Path out;

    /**
     * @param only the rows, or null for {@link #DEFAULT_ONLY}
     * @param smoke children run {@code --smoke} rather than {@code --quick} (for the tests: seconds, no JMH fork)
     * @param queuedThreads passed on to the children, or null
     */
    BaselineRun(
            CommandLine commandLine,
            BaselineOptions options,
            String only,
            boolean smoke,
            Integer queuedThreads,
            Path out) {
        this.commandLine = commandLine;
        this.options = options;
        this.only = only == null ? DEFAULT_ONLY : only;
        this.smoke = smoke;
        this.queuedThreads = queuedThreads;
        this.out = out;
    }

    int run() throws IOException {
        if (options.baseline == null) {
            throw usage("--rounds applies to --baseline only: add --baseline REV_OR_JAR, or leave --rounds out");
        }
        int rounds = options.rounds == null ? BaselineOptions.ROUNDS : options.rounds;
        if (rounds < 1) {
            throw usage("--rounds must be at least 1, was " + rounds);
        }
        Duration timeout = Duration.ofSeconds(
                options.childTimeoutSeconds == null
                        ? BaselineOptions.CHILD_TIMEOUT_SECONDS
                        : options.childTimeoutSeconds);
        if (timeout.isNegative() || timeout.isZero()) {
            throw usage("--child-timeout must be at least 1 second");
        }
        try {
            Pattern.compile(only);
        } catch (PatternSyntaxException e) {
            throw usage("--only " + only + ": not a regular expression (" + e.getDescription() + ")");
        }
        PrintWriter console = commandLine.getOut();
        Progress progress = new Progress(console, System.console() != null);
        Path dir = out.toAbsolutePath().normalize();
        Files.createDirectories(dir);
        Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        long start = System.nanoTime();

        Side current = current();
        BaselineJar.Baseline baseline;
        try {
            baseline = BaselineJar.resolve(
                    options.baseline,
                    Stream.of(
                                    Files.isDirectory(current.jar())
                                            ? current.jar()
                                            : current.jar().getParent(),
                                    here())
                            .distinct()
                            .toList(),
                    BaselineJar::maven,
                    progress);
        } catch (BaselineJar.Unusable e) {
            throw usage(e.getMessage());
        }
        Side old = new Side(
                "old",
                baseline.label(),
                baseline.jar(),
                List.of(java(), "-jar", baseline.jar().toString()));

        BaselineReport report = new BaselineReport(rounds);
        Path scratch = Files.createTempDirectory("quorumlock-bench-baseline-");
        Thread onCtrlC = new Thread(
                () -> {
                    BenchCommand.stopping = true;
                    BenchCommand.killChildren();
                    BenchCommand.deleteTree(scratch);
                },
                "quorumlock-bench-baseline-killer");
        Runtime.getRuntime().addShutdownHook(onCtrlC);
        try (PrintWriter log =
                new PrintWriter(Files.newBufferedWriter(dir.resolve(LOG_FILE), StandardCharsets.UTF_8), true)) {
            for (int round = 1; round <= rounds; round++) {
                for (Side side : List.of(current, old)) {
                    List<BaselineReport.Measured> measured =
                            measure(side, round, rounds, timeout, scratch, log, progress);
                    if (measured.isEmpty() && side == current) {
                        throw usage("--only " + only + " matched no row; rows are named 'case / library', such as"
                                + " 'five-nodes / quorumlock' (the bench's table lists them)");
                    }
                    report.add(round, side == current, measured);
                }
            }
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(onCtrlC);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the hook is running already
            }
            BenchCommand.deleteTree(scratch);
        }
        progress.clear();

        double seconds = (System.nanoTime() - start) / 1e9;
        String setting = rounds + " round" + (rounds == 1 ? "" : "s") + " of "
                + childArgs().stream()
                        .map(a -> a.matches("[\\w./=-]+") ? a : "'" + a + "'")
                        .collect(Collectors.joining(" "))
                + ", the new build and the old in turn; Java " + System.getProperty("java.version") + ", "
                + Runtime.getRuntime().availableProcessors() + " cores";
        console.println();
        console.println("quorumlock bench --baseline: new " + current.label() + " (" + BaselineJar.shown(current.jar())
                + "), old " + old.label() + " (" + BaselineJar.shown(old.jar()) + ")");
        console.println(setting);
        console.println();
        report.table().forEach(console::println);
        console.println();
        console.println("ops/s: medians of the rounds (1 / mean cycle time; JMH SampleTime, one thread); new/old:"
                + " the median of the rounds' ratios, min-max their spread.");
        console.println("B/op: bytes allocated per cycle by all threads of the JVM (JMH -prof gc), medians; new/old:"
                + " their ratio. Figures of one machine at one time: compare within one run.");
        console.println();
        Files.writeString(
                dir.resolve(JSON_FILE),
                Json.write(json(current, old, baseline, rounds, started, seconds, report)),
                StandardCharsets.UTF_8);
        console.println(String.format(
                Locale.ROOT,
                "%s. Took %s. Wrote %s and %s in %s",
                report.complete() ? "Every row measured" : "Not every row measured (see the notes)",
                progress.elapsed(),
                JSON_FILE,
                LOG_FILE,
                dir));
        console.flush();
        return report.complete() ? 0 : BenchCommand.FAILURE;
    }

    /** One build's run of one round: its rows, read from the results it wrote. */
    private List<BaselineReport.Measured> measure(
            Side side, int round, int rounds, Duration timeout, Path scratch, PrintWriter log, Progress progress)
            throws IOException {
        Path results = scratch.resolve(side.name() + "-" + round);
        Files.createDirectories(results);
        List<String> command = new ArrayList<>(side.command());
        command.addAll(childArgs());
        command.addAll(List.of("--out", results.toString()));
        String step = "round " + round + "/" + rounds + ": " + side.name() + " (" + side.label() + ")";
        progress.step(step);
        log.println("== " + step + ": " + String.join(" ", command));
        ChildProcess.Result result = ChildProcess.run(command, here(), timeout, line -> {
            log.println(line);
            Matcher progressLine = ELAPSED.matcher(line);
            if (progressLine.find()) {
                String detail = line.substring(progressLine.end());
                progress.status(detail.length() <= MAX_STATUS ? detail : detail.substring(0, MAX_STATUS) + "...");
            }
        });
        Path file = results.resolve(BenchCommand.JSON_FILE);
        OptionalInt exit = result.exit();
        // 1 is also the exit code of a run whose targets were not all met, as with --only
        if (exit.isEmpty() || exit.getAsInt() > 1 || !Files.isRegularFile(file)) {
            throw new IllegalStateException("the " + side.name() + " build (" + side.label() + ") failed in round "
                    + round + " of " + rounds + ": " + (exit.isPresent() ? "no " + BenchCommand.JSON_FILE + ", " : "")
                    + result.told(timeout));
        }
        List<BaselineReport.Measured> measured =
                BaselineReport.read(file, "the " + side.name() + " build's, round " + round);
        progress.step(step + ": " + measured.size() + " row" + (measured.size() == 1 ? "" : "s"));
        return measured;
    }

    private List<String> childArgs() {
        List<String> args = new ArrayList<>(List.of(smoke ? "--smoke" : "--quick", "--only", only));
        if (queuedThreads != null) {
            args.addAll(List.of("--queued-threads", queuedThreads.toString()));
        }
        return args;
    }

    /** This build: the class path this JVM runs from (the bench jar, or the module's classes in its tests). */
    private static Side current() {
        Path jar;
        try {
            jar = Path.of(BenchCommand.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
        } catch (java.net.URISyntaxException | RuntimeException e) {
            jar = here();
        }
        String label = BaselineJar.describe(Files.isDirectory(jar) ? jar : jar.getParent())
                .orElse("this build");
        return new Side(
                "new",
                label,
                jar,
                List.of(java(), "-cp", System.getProperty("java.class.path"), BenchCommand.class.getName()));
    }

    private Map<String, Object> json(
            Side current,
            Side old,
            BaselineJar.Baseline baseline,
            int rounds,
            Instant started,
            double seconds,
            BaselineReport report) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("tool", "quorumlock bench --baseline");
        root.put("started", started.toString());
        root.put("duration_s", JmhCases.round(seconds, 1));
        root.put("rounds", rounds);
        root.put("child_args", childArgs());
        Map<String, Object> newSide = new LinkedHashMap<>();
        newSide.put("label", current.label());
        newSide.put("jar", current.jar().toString());
        root.put("new", newSide);
        Map<String, Object> oldSide = new LinkedHashMap<>();
        oldSide.put("label", old.label());
        oldSide.put("jar", old.jar().toString());
        oldSide.put("revision", baseline.revision().orElse(null));
        root.put("old", oldSide);
        Map<String, Object> machine = new LinkedHashMap<>();
        machine.put("cores", Runtime.getRuntime().availableProcessors());
        machine.put("java", System.getProperty("java.version"));
        machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        root.put("machine", machine);
        root.put("rows", report.json());
        root.put("complete", report.complete());
        return root;
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(commandLine, message);
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static Path here() {
        return Path.of("").toAbsolutePath();
    }
}
