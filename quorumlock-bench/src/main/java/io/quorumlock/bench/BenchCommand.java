package io.quorumlock.bench;

import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code quorumlock bench}: quorumlock against raw Jedis, Redisson and the article's sequential
 * Redlock, on 5 local Redis nodes that it starts and stops itself; its database lock against
 * ShedLock's and Spring Integration's on one PostgreSQL ({@link DatabaseLocks}); its ZooKeeper and
 * etcd locks against Curator's and jetcd's on servers of their own ({@link ConsensusLocks}). JMH
 * measures the one-thread cases in forked JVMs; the contention, the resource probe, the database
 * and the ZooKeeper and etcd cases run in this JVM. Prints a table and the targets, writes
 * {@code bench-results.json}, {@code bench-results.svg} and JMH's own log {@code bench-jmh.log}.
 */
@Command(
        name = "quorumlock bench",
        sortOptions = false,
        description = {
            "Measures quorumlock against raw Jedis, Redisson (RLock, RedissonRedLock) and the Redlock article's"
                    + " sequential Jedis Redlock, on 5 local Redis nodes that it starts and stops itself.",
            "",
            "Cases: one node; 5 nodes (with the raw-fanout floor); 5 nodes with one frozen (SIGSTOP); 5 nodes over TLS;"
                    + " the nodes' pipelined SET capacity; 64 callers on 64 and on 8 resources; 8 clients contending"
                    + " for one resource; the 5 nodes behind proxies adding 1 ms each way (and one node 20 ms more);"
                    + " the hand-off to a waiter already waiting on one node and on 5, beside Redisson's RLock and"
                    + " Spring Integration's RedisLockRegistry and a PING's round trip to the same nodes;"
                    + " the threads and connections of one client; on one PostgreSQL that it starts (when it can),"
                    + " quorumlock's JdbcLock beside ShedLock's JdbcTemplateLockProvider and Spring Integration's"
                    + " JdbcLockRegistry, and on a 3-server ZooKeeper ensemble and a 3-member etcd cluster that it"
                    + " starts, ZooKeeperLock beside Curator's InterProcessMutex and EtcdLock beside jetcd's Lock: a"
                    + " cycle, the hand-off to a waiter already waiting, and (quorumlock's) 1,000 threads of one"
                    + " process queued on one resource handing the lock on. Prints a table and"
                    + " the targets with their measured ratios, and writes bench-results.json, bench-results.svg and"
                    + " bench-jmh.log (JMH's own output, with error bars) into the output directory.",
            "",
            "Exit code 0 when every target passes (the PostgreSQL figures and the queued threads' are reported, with no"
                    + " bound), 1 otherwise, 2 for a usage error.",
            ""
        })
public final class BenchCommand implements Callable<Integer> {

    /** The exit code when a target failed or was not measured. */
    static final int FAILURE = 1;

    static final String JSON_FILE = "bench-results.json";
    static final String SVG_FILE = "bench-results.svg";
    static final String LOG_FILE = "bench-jmh.log";

    private static final int NODES = 5;
    private static final int CONTENDERS = 8;
    /** The threads of the many-callers case, all on one client. */
    private static final int MANY_CALLERS = 64;
    /** The resources the 64 threads share in the second many-callers case: 8 callers each. */
    private static final int SHARED_RESOURCES = 8;

    /** Set on Ctrl-C, once the shutdown hook has started to stop the nodes and forks (or the child JVMs). */
    static volatile boolean stopping;

    @Spec
    private CommandSpec spec;

    @Option(
            names = "--quick",
            order = 1,
            description = "About four minutes: shorter iterations, one JMH fork, a single cycle of RedissonRedLock"
                    + " with a frozen node, 16 hand-offs per library on Redis, PostgreSQL, ZooKeeper and etcd, 250"
                    + " queued threads instead of 1,000 (default: the full run, about 13 minutes).")
    private boolean quick;

    @Option(
            names = "--out",
            order = 2,
            paramLabel = "DIR",
            description = "Where to write the results (default: the current directory).")
    private Path out = Path.of(".");

    @Option(
            names = "--only",
            order = 3,
            paramLabel = "REGEX",
            description = "Runs only the steps whose label (such as 'five-nodes / quorumlock') matches.")
    private String only;

    @Mixin
    private BaselineOptions baseline = new BaselineOptions();

    @Option(
            names = {"-h", "--help"},
            usageHelp = true,
            order = 6,
            description = "Show this help and exit.")
    private boolean help;

    @Option(
            names = "--smoke",
            hidden = true,
            description = "A few seconds, no JMH fork, two cases: checks that the command runs; measures nothing.")
    private boolean smoke;

    @Option(
            names = "--queued-threads",
            hidden = true,
            paramLabel = "N",
            description = "How many threads of one process queue on one resource of ZooKeeper and of etcd (default:"
                    + " 1,000; 250 with --quick).")
    private Integer queuedThreads;

    /** Runs the command and exits with its exit code. A leading {@code bench} (as in {@code quorumlock bench}) is skipped. */
    public static void main(String[] args) {
        String[] rest = args.length > 0 && "bench".equals(args[0]) ? Arrays.copyOfRange(args, 1, args.length) : args;
        System.exit(commandLine().execute(rest));
    }

    /** A fresh command line; for {@link #main} and for tests. */
    public static CommandLine commandLine() {
        return new CommandLine(new BenchCommand()).setExecutionExceptionHandler((failure, command, parsed) -> {
            String message = failure.getMessage() == null ? failure.toString() : failure.getMessage();
            command.getErr()
                    .println("quorumlock bench: "
                            + (stopping ? "interrupted; the processes it started were stopped" : message));
            return FAILURE;
        });
    }

    @Override
    public Integer call() throws IOException {
        System.setProperty("jmh.ignoreLock", "true"); // another JMH run on this machine must not stop ours
        Plan chosen = smoke ? Plan.smoke() : quick ? Plan.quick() : Plan.full();
        if (queuedThreads != null && queuedThreads < 1) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--queued-threads must be at least 1, was " + queuedThreads);
        }
        if (baseline.baseline != null || baseline.rounds != null) {
            return new BaselineRun(spec.commandLine(), baseline, only, smoke, queuedThreads, out).run();
        }
        Plan plan = queuedThreads == null ? chosen : chosen.withQueuedThreads(queuedThreads);
        PrintWriter console = spec.commandLine().getOut();
        Progress progress = new Progress(console, System.console() != null);
        Path dir = out.toAbsolutePath().normalize();
        Files.createDirectories(dir);
        Path scratch = Files.createTempDirectory("quorumlock-bench-");
        Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        long start = System.nanoTime();

        List<CaseResult> results = new ArrayList<>();
        Resources resources = null;
        String redisVersion;
        Thread killer = new Thread(
                () -> {
                    stopping = true;
                    killChildren();
                    deleteTree(scratch);
                },
                "quorumlock-bench-killer");
        Runtime.getRuntime().addShutdownHook(killer);
        try {
            progress.step("starting " + NODES + " Redis nodes");
            try (RedisServers servers = RedisServers.start(NODES);
                    PrintStream jmhLog = new PrintStream(
                            Files.newOutputStream(dir.resolve(LOG_FILE)), true, StandardCharsets.UTF_8)) {
                redisVersion = servers.get(0).version();
                progress.println(String.format(
                        Locale.ROOT,
                        "quorumlock bench (%s): %d Redis nodes (redis-server %s) on 127.0.0.1, ports %s; %d cores, Java %s",
                        plan.mode(),
                        NODES,
                        redisVersion,
                        servers.servers().stream()
                                .map(s -> Integer.toString(s.port()))
                                .collect(Collectors.joining(", ")),
                        Runtime.getRuntime().availableProcessors(),
                        System.getProperty("java.version")));
                List<Runnable> steps = new ArrayList<>();
                List<String> labels = new ArrayList<>();
                Consumer<CaseResult> shown = r -> {
                    results.add(r);
                    progress.step(r.caseId() + " / " + r.library() + ": " + summary(r));
                };
                JmhCases jmh = new JmhCases(plan, servers, new JmhProgress(jmhLog, progress), scratch);
                for (Plan.JmhCase c : plan.jmhCases()) {
                    labels.add(c.label());
                    steps.add(() -> results.add(jmh.run(c)));
                }
                Resources[] probe = new Resources[1];
                labels.add("resources of one 5-node client");
                steps.add(() -> probe[0] = Resources.measure(servers, plan.resourceCycles()));
                labels.add(Plan.CAPACITY + " / " + Plan.PIPELINED);
                steps.add(() -> results.add(
                        ServerCapacity.run(servers.servers(), plan.contentionWarmup(), plan.contentionWarmup())));
                for (String library : List.of(Plan.QUORUMLOCK, Plan.FANOUT, Plan.REDLOCK)) {
                    labels.add(Plan.MANY + " / " + library);
                    steps.add(() -> results.add(many(Plan.MANY, library, MANY_CALLERS, servers, plan)));
                }
                labels.add(Plan.MANY_SHARED + " / " + Plan.QUORUMLOCK);
                steps.add(() -> results.add(many(Plan.MANY_SHARED, Plan.QUORUMLOCK, SHARED_RESOURCES, servers, plan)));
                labels.add(Plan.SLOW + " / "
                        + String.join(", ", Plan.PING, Plan.QUORUMLOCK, Plan.SEQUENTIAL, Plan.REDLOCK));
                steps.add(() -> SlowNetwork.run(servers, plan.contentionWarmup(), plan.contentionTime(), r -> {
                    results.add(r);
                    progress.step(Plan.SLOW + ": " + r.caseId() + " / " + r.library() + ": " + summary(r));
                }));
                if (plan.redisHandOffs() > 0) {
                    labels.add(RedisLocks.label());
                    steps.add(() ->
                            RedisLocks.run(servers, plan.redisHandOffs(), plan.contentionWarmup(), progress, shown));
                }
                for (String library : plan.contentionLibraries()) {
                    labels.add(Plan.CONTENTION + " / " + library);
                    steps.add(() -> results.add(contention(library, servers, plan, progress)));
                }
                labels.add(DatabaseLocks.label());
                steps.add(() -> DatabaseLocks.run(plan, progress, shown));
                labels.add(ConsensusLocks.zooKeeperLabel());
                steps.add(() -> ConsensusLocks.runZooKeeper(plan, progress, shown));
                labels.add(ConsensusLocks.etcdLabel());
                steps.add(() -> ConsensusLocks.runEtcd(plan, progress, shown));
                labels.add(Semaphores.label());
                steps.add(() -> Semaphores.run(servers, plan, progress, shown));
                Pattern filter = only == null ? null : Pattern.compile(only);
                int total = (int) labels.stream()
                        .filter(l -> filter == null || filter.matcher(l).find())
                        .count();
                int done = 0;
                for (int i = 0; i < steps.size(); i++) {
                    if (filter != null && !filter.matcher(labels.get(i)).find()) {
                        continue;
                    }
                    progress.step("[" + ++done + "/" + total + "] " + labels.get(i));
                    int before = results.size();
                    steps.get(i).run();
                    if (results.size() > before) {
                        CaseResult r = results.get(results.size() - 1);
                        progress.step("[" + done + "/" + total + "] " + labels.get(i) + ": " + summary(r));
                    }
                }
                resources = probe[0];
            }
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(killer);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the hook is running already
            }
            deleteTree(scratch);
        }
        progress.clear();

        List<Targets.Target> targets = Targets.evaluate(results, resources);
        double seconds = (System.nanoTime() - start) / 1e9;
        console.println();
        Report.table(results).forEach(console::println);
        console.println();
        console.println("ops/s: 1 / mean cycle time (lock + release; JMH SampleTime, one thread); contention: wins/s.");
        console.println("alloc: bytes allocated per cycle by all threads of the JVM (JMH -prof gc).");
        console.println("*-hand-off: p50/p99 from the holder's release call to the waiting waiter's grant (no ops/s);"
                + " round-trip-ping beside them: a PING to the same nodes (to all at once), requests/s.");
        console.println("*-hand-off-queue: threads of one process queued on one resource; p50/p99 from each holder's"
                + " release call to the next one's grant.");
        console.println(
                "iterations ±: spread (coefficient of variation) of the iteration means. Compare within one run.");
        console.println();
        if (resources != null) {
            console.println(resourcesLine(resources));
            console.println();
        }
        Report.targets(targets).forEach(console::println);
        console.println();

        String subtitle = String.format(
                Locale.ROOT,
                "%s run, %s; %d local Redis %s nodes, %d cores, Java %s; one thread per client except contention",
                plan.mode(),
                started,
                NODES,
                redisVersion,
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"));
        Files.writeString(
                dir.resolve(JSON_FILE),
                Json.write(json(plan, started, seconds, redisVersion, results, resources, targets)),
                StandardCharsets.UTF_8);
        Files.writeString(dir.resolve(SVG_FILE), Chart.svg(results, subtitle), StandardCharsets.UTF_8);
        boolean allPass = targets.stream().allMatch(Targets.Target::met);
        boolean noErrors =
                results.stream().allMatch(r -> r.error() == null) && (resources == null || resources.error() == null);
        console.println(String.format(
                Locale.ROOT,
                "%s. Took %s. Wrote %s, %s and %s in %s",
                smoke
                        ? (noErrors ? "Smoke run complete" : "Smoke run with errors")
                        : allPass ? "Every target met" : "Not every target met",
                progress.elapsed(),
                JSON_FILE,
                SVG_FILE,
                LOG_FILE,
                dir));
        console.flush();
        return (smoke ? noErrors : allPass && noErrors) ? 0 : FAILURE;
    }

    private static CaseResult contention(String library, RedisServers servers, Plan plan, Progress progress) {
        List<String> uris = servers.uris();
        CaseResult result = Contention.run(
                library,
                i -> switch (library) {
                    case Plan.QUORUMLOCK -> Contention.quorumlock(uris);
                    case Plan.QUORUMLOCK_WAITING -> Contention.waiting(uris);
                    default -> Contention.sequential(uris);
                },
                NODES,
                CONTENDERS,
                plan.contentionWarmup(),
                plan.contentionTime(),
                progress,
                library.equals(Plan.QUORUMLOCK));
        for (RedisServer server : servers) {
            server.flushAll();
        }
        return result;
    }

    private static CaseResult many(String caseId, String library, int resources, RedisServers servers, Plan plan) {
        CaseResult result = ManyCallers.run(
                caseId,
                library,
                servers.uris(),
                servers.servers(),
                MANY_CALLERS,
                resources,
                plan.contentionWarmup(),
                plan.contentionTime());
        for (RedisServer server : servers) {
            server.flushAll();
        }
        return result;
    }

    private static String summary(CaseResult r) {
        if (r.skipped() != null) {
            return "skipped";
        }
        if (r.error() != null) {
            return "ERROR: " + r.error();
        }
        if (r.opsPerSecond() == null) {
            return "p50 " + (r.p50Micros() == null ? "-" : Report.micros(r.p50Micros())) + " µs, p99 "
                    + (r.p99Micros() == null ? "-" : Report.micros(r.p99Micros())) + " µs";
        }
        String unit = r.caseId().equals(Plan.CONTENTION)
                ? " wins/s"
                : r.caseId().equals(Plan.CAPACITY) || r.library().equals(Plan.PING) ? " requests/s" : " cycles/s";
        return Report.rate(r.opsPerSecond())
                + unit
                + (r.p50Micros() == null ? "" : ", p50 " + Report.micros(r.p50Micros()) + " µs");
    }

    private static String resourcesLine(Resources r) {
        if (r.error() != null) {
            return "resources: ERROR: " + r.error();
        }
        return String.format(
                Locale.ROOT,
                "resources of one 5-node quorumlock client: %d threads%s, %d connection(s) per node with 1 caller,"
                        + " %d with %d callers; %d thread(s) left after close()",
                r.threadsAfterCycles(),
                r.threadNames().isEmpty()
                        ? ""
                        : r.threadNames().entrySet().stream()
                                .map(e -> e.getKey() + (e.getValue() > 1 ? " x" + e.getValue() : ""))
                                .collect(Collectors.joining(", ", " (", ")")),
                r.connectionsPerNode(),
                r.connectionsPerNodeWithCallers(),
                r.callers(),
                r.threadsAfterClose());
    }

    private static Map<String, Object> json(
            Plan plan,
            Instant started,
            double seconds,
            String redisVersion,
            List<CaseResult> results,
            Resources resources,
            List<Targets.Target> targets) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("tool", "quorumlock bench");
        root.put("mode", plan.mode());
        root.put("started", started.toString());
        root.put("duration_s", JmhCases.round(seconds, 1));
        Map<String, Object> machine = new LinkedHashMap<>();
        machine.put("cores", Runtime.getRuntime().availableProcessors());
        machine.put("java", System.getProperty("java.version"));
        machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        machine.put("redis", redisVersion);
        root.put("machine", machine);
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("jmh_mode", "SampleTime, 1 thread; ops_per_s = 1 / mean cycle time");
        settings.put("forks", plan.forks());
        settings.put(
                "warmup", plan.warmupIterations() + " x " + plan.warmupTime().toMillis() + " ms");
        settings.put(
                "measurement",
                plan.measurementIterations() + " x " + plan.measurementTime().toMillis() + " ms");
        settings.put("ttl_ms", Trial.TTL.toMillis());
        settings.put("node_timeout_ms", Clients.NODE_TIMEOUT_MILLIS);
        settings.put("contention_clients", CONTENDERS);
        settings.put(
                "contention",
                plan.contentionWarmup().toMillis() + " ms warm-up, "
                        + plan.contentionTime().toMillis() + " ms counted");
        settings.put("contention_backoff", Contention.backoffText());
        settings.put("postgresql", DatabaseLocks.settings());
        settings.put("consensus", ConsensusLocks.settings());
        settings.put("redis_hand_off", RedisLocks.settings());
        root.put("settings", settings);
        List<Object> cases = new ArrayList<>();
        for (CaseResult r : results) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("case", r.caseId());
            c.put("library", r.library());
            c.put("nodes", r.nodes());
            c.put("threads", r.threads());
            c.put("ops_per_s", r.opsPerSecond());
            c.put("p50_us", r.p50Micros());
            c.put("p99_us", r.p99Micros());
            c.put("alloc_bytes_per_op", r.allocBytesPerOp());
            c.putAll(r.extra());
            if (r.skipped() != null) {
                c.put("skipped", r.skipped());
            }
            if (r.error() != null) {
                c.put("error", r.error());
            }
            cases.add(c);
        }
        root.put("cases", cases);
        if (resources != null) {
            Map<String, Object> res = new LinkedHashMap<>();
            res.put("client_nodes", NODES);
            res.put("threads_after_build", resources.threadsAfterBuild());
            res.put("threads_after_100_cycles", resources.threadsAfterFewCycles());
            res.put("threads_after_cycles", resources.threadsAfterCycles());
            res.put("cycles", resources.cycles());
            res.put("threads_with_callers", resources.threadsWithCallers());
            res.put("callers", resources.callers());
            res.put("threads_after_close", resources.threadsAfterClose());
            res.put("thread_names", new LinkedHashMap<String, Object>(resources.threadNames()));
            res.put("connections_per_node", resources.connectionsPerNode());
            res.put("connections_per_node_with_callers", resources.connectionsPerNodeWithCallers());
            if (resources.error() != null) {
                res.put("error", resources.error());
            }
            root.put("resources", res);
        }
        List<Object> ts = new ArrayList<>();
        for (Targets.Target t : targets) {
            Map<String, Object> target = new LinkedHashMap<>();
            target.put("target", t.number());
            target.put("title", t.title());
            target.put("reason", t.reason());
            target.put("verdict", Report.verdict(t.verdict()));
            target.put("pass", t.verdict() == Targets.Verdict.REPORTED ? null : t.verdict() == Targets.Verdict.PASS);
            List<Object> checks = new ArrayList<>();
            for (Targets.Check check : t.checks()) {
                Map<String, Object> c = new LinkedHashMap<>();
                c.put("name", check.name());
                if (check.ratio()) {
                    c.put("ratio", check.value());
                } else {
                    c.put("value", check.value());
                }
                c.put("shown", check.shown());
                c.put("bound", check.bound());
                c.put("verdict", Report.verdict(check.verdict()));
                c.put(
                        "pass",
                        check.verdict() == Targets.Verdict.PASS
                                ? Boolean.TRUE
                                : check.verdict() == Targets.Verdict.FAIL ? Boolean.FALSE : null);
                checks.add(c);
            }
            target.put("checks", checks);
            ts.add(target);
        }
        root.put("targets", ts);
        root.put("all_targets_pass", targets.stream().allMatch(Targets.Target::met));
        return root;
    }

    /**
     * Ctrl-C: ends what this JVM started and what those started: the JMH forks and the Redis nodes
     * (frozen ones too: SIGKILL), or the benches and the build of {@code --baseline}.
     */
    static void killChildren() {
        ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
    }

    static void deleteTree(Path root) {
        try (var paths = Files.walk(root)) {
            paths.sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind is not worth failing the run
        }
    }
}
