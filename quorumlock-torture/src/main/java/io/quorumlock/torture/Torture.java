package io.quorumlock.torture;

import io.quorumlock.jdbc.JdbcFence;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.MariaDbServer;
import io.quorumlock.testkit.PostgresServer;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.torture.Event.Kind;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.h2.tools.Server;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A torture run: every chosen strategy at once, each on its own servers with its own clients,
 * under the same seeded fault schedule; then the histories checked and drawn.
 */
public final class Torture {

    private static final Logger log = LoggerFactory.getLogger(Torture.class);

    /** The shared record's value at the start: far more than a run can decrement. */
    static final long INITIAL = 1_000_000;

    /** How long a client may take to start, and a nemesis to heal its last fault, on an idle machine. */
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(90);

    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);

    /**
     * What to run.
     *
     * @param strategies the strategies compared
     * @param faults the kinds of fault drawn
     * @param duration how long the clients run (the window of the schedule)
     * @param clients clients per strategy
     * @param seed the seed of the schedule and of the clients' work times
     * @param out the folder for the histories, the logs and report.html
     * @param threads clients as threads of this JVM instead of processes
     * @param ttl the lease TTL (and ZooKeeper session timeout) of every lock
     */
    public record Options(
            Set<Strategy> strategies,
            Set<FaultKind> faults,
            Duration duration,
            int clients,
            long seed,
            Path out,
            boolean threads,
            Duration ttl) {

        /** Checks every setting, naming it and the remedy. */
        public Options {
            strategies = Set.copyOf(strategies);
            faults = Set.copyOf(faults);
            if (strategies.isEmpty()) {
                throw new IllegalArgumentException("--strategies: name at least one strategy");
            }
            if (duration.compareTo(Duration.ofSeconds(5)) < 0) {
                throw new IllegalArgumentException(
                        "--duration must be at least 5s (was " + duration.toMillis() + " ms): faults need room");
            }
            if (clients < 2 || clients > 20) {
                throw new IllegalArgumentException(
                        "--clients must be between 2 and 20 (was " + clients + "): a lock needs contenders");
            }
            if (ttl.compareTo(Duration.ofSeconds(1)) < 0 || ttl.compareTo(Duration.ofSeconds(30)) > 0) {
                throw new IllegalArgumentException("--ttl must be between 1s and 30s (was " + ttl.toMillis() + " ms)");
            }
        }
    }

    /**
     * Where the run reports its progress.
     *
     * @param status takes a status line that replaces the previous one
     * @param println takes a line that stays
     */
    public record Progress(Consumer<String> status, Consumer<String> println) {}

    /**
     * One strategy's result.
     *
     * @param strategy the strategy
     * @param summary its figures
     * @param verdict what the checker found
     * @param faults the starts of the faults injected, in wall-time order
     */
    public record Outcome(Strategy strategy, Report.Summary summary, Verdict verdict, List<Event> faults) {

        public Outcome {
            faults = List.copyOf(faults);
        }

        /**
         * True if the history shows a lost update, a stale write accepted, a token out of order, a
         * torn read, or an overlap: for a strategy that claims correctness (it promises the data, not one
         * holder at a time), an overlap whose writes did not run one after the other.
         */
        public boolean violated() {
            List<Verdict.Overlap> overlaps =
                    strategy.claimsCorrectness() ? verdict.conflictingOverlaps() : verdict.overlaps();
            return !overlaps.isEmpty()
                    || verdict.lostUpdates() > 0
                    || !verdict.staleAccepted().isEmpty()
                    || !verdict.tokenViolations().isEmpty()
                    || !verdict.tornReads().isEmpty();
        }
    }

    /**
     * A run's result.
     *
     * @param answers one per strategy, in the order of {@link Strategy}
     * @param schedule the faults drawn
     * @param skipped strategies left out, with the reason
     * @param report the report.html written
     */
    public record Result(List<Outcome> answers, List<Fault> schedule, Map<Strategy, String> skipped, Path report) {

        /** 0 when no strategy that claims correctness showed a violation, else 1. */
        public int exitCode() {
            return answers.stream().anyMatch(o -> o.strategy().claimsCorrectness() && o.violated()) ? 1 : 0;
        }
    }

    private Torture() {}

    /** How long the sentinels take to promote a replica after its master died, about. */
    static final Duration PROMOTION = Duration.ofMillis(2_500);

    /**
     * A line for a run whose failovers cannot show two holders: a lease shorter than the
     * sentinels' promotion has run out before a replica serves, whatever the lock.
     */
    static Optional<String> failoverNote(Options options) {
        boolean sentinels = options.strategies().stream().anyMatch(s -> s.servers() == Strategy.Servers.SENTINEL);
        if (!sentinels
                || !options.faults().contains(FaultKind.FAILOVER)
                || options.ttl().compareTo(PROMOTION) > 0) {
            return Optional.empty();
        }
        return Optional.of("failover: a lease of " + options.ttl().toMillis() / 1000.0 + " s runs out before the"
                + " sentinels promote a replica (about " + PROMOTION.toMillis() / 1000.0 + " s), so no failover can"
                + " give two holders; --ttl 5s shows what a failover does to a lease that outlasts it");
    }

    /** Runs the torture; every server and client it starts is stopped before it returns. */
    public static Result run(Options options, Progress progress) throws Exception {
        Files.createDirectories(options.out());
        Map<Strategy, String> skipped = new LinkedHashMap<>();
        List<Strategy> strategies = new ArrayList<>();
        for (Strategy strategy : Strategy.values()) {
            if (!options.strategies().contains(strategy)) {
                continue;
            }
            if (strategy.servers() == Strategy.Servers.ETCD && !EtcdCluster.available()) {
                skipped.put(strategy, EtcdCluster.unavailableReason().orElse("no etcd binary"));
                progress.println().accept(strategy.label() + ": skipped, " + skipped.get(strategy));
                continue;
            }
            if (strategy.servers() == Strategy.Servers.POSTGRES && !PostgresServer.available()) {
                skipped.put(strategy, PostgresServer.unavailableReason().orElse("no PostgreSQL"));
                progress.println().accept(strategy.label() + ": skipped, " + skipped.get(strategy));
                continue;
            }
            if (strategy.servers() == Strategy.Servers.MARIADB && !MariaDbServer.available()) {
                skipped.put(strategy, MariaDbServer.unavailableReason().orElse("no MariaDB"));
                progress.println().accept(strategy.label() + ": skipped, " + skipped.get(strategy));
                continue;
            }
            strategies.add(strategy);
        }
        if (strategies.isEmpty()) {
            throw new IllegalStateException("no strategy can run here: " + skipped);
        }
        List<Fault> schedule = Schedule.draw(options.seed(), options.duration(), options.faults(), options.ttl());
        Set<FaultKind> undrawn = EnumSet.noneOf(FaultKind.class);
        undrawn.addAll(options.faults());
        schedule.forEach(f -> undrawn.remove(f.kind()));
        if (!undrawn.isEmpty()) {
            progress.println()
                    .accept("faults: no room in " + options.duration().toSeconds() + " s for "
                            + undrawn.stream().map(FaultKind::option).collect(Collectors.joining(", "))
                            + " (one fault at a time); a longer --duration fits them");
        }
        failoverNote(options).ifPresent(progress.println());

        System.setProperty("h2.bindAddress", "127.0.0.1");
        String memUrl = "jdbc:h2:mem:torture-" + ProcessHandle.current().pid() + ";DB_CLOSE_DELAY=-1";
        List<Run> runs = new ArrayList<>();
        Server h2 = null;
        try (Connection keepAlive = DriverManager.getConnection(memUrl)) {
            h2 = Server.createTcpServer("-tcpPort", Integer.toString(freePort()))
                    .start();
            String jdbcUrl = "jdbc:h2:tcp://127.0.0.1:" + h2.getPort() + "/" + memUrl.substring("jdbc:h2:".length());
            JdbcFence.builder().build().createTable(keepAlive);
            for (Strategy strategy : strategies) {
                progress.status().accept("starting the servers of " + strategy.label());
                runs.add(new Run(strategy, options, jdbcUrl));
                for (String record : strategy.records()) {
                    SharedRecord.create(keepAlive, record, INITIAL);
                }
            }
            for (Run run : runs) {
                progress.status().accept("starting " + options.clients() + " clients of " + run.strategy.label());
                run.startClients();
            }
            for (Run run : runs) {
                for (ClientHandle client : run.clients) {
                    progress.status().accept("waiting for " + run.strategy.label() + " " + client.config.id());
                    client.awaitReady(TestTime.scaledByLoad(READY_TIMEOUT));
                }
            }
            runWindow(options, schedule, runs, progress, keepAlive);
        } finally {
            for (Run run : runs) {
                run.close();
            }
            if (h2 != null) {
                h2.stop();
            }
        }
        progress.status().accept("");

        List<Outcome> answers = new ArrayList<>();
        List<Report.Run> reportRuns = new ArrayList<>();
        for (Run run : runs) {
            List<Event> events = History.readAll(run.historyFiles());
            List<Event> faults = Checker.inWallOrder(events).stream()
                    .filter(e -> e.kind() == Kind.FAULT && e.op() == Event.Op.START)
                    .toList();
            answers.add(new Outcome(run.strategy, Report.summarize(events), Checker.check(events), faults));
            reportRuns.add(new Report.Run(run.strategy.label(), events));
        }
        Path report = options.out().resolve("report.html");
        Report.write(report, reportRuns);
        return new Result(answers, schedule, skipped, report);
    }

    private static void runWindow(
            Options options, List<Fault> schedule, List<Run> runs, Progress progress, Connection db) throws Exception {
        for (Run run : runs) {
            appendStates(run, Kind.INITIAL, db);
        }
        AtomicInteger faultsDone = new AtomicInteger();
        ExecutorService nemeses = Executors.newFixedThreadPool(runs.size(), task -> {
            Thread thread = new Thread(task, "torture-nemesis");
            thread.setDaemon(true);
            return thread;
        });
        long start = System.nanoTime();
        List<Future<?>> running = new ArrayList<>();
        try {
            for (Run run : runs) {
                run.clients.forEach(c -> c.send("go"));
            }
            for (Run run : runs) {
                running.add(nemeses.submit(() -> {
                    new Nemesis(run, start).play(schedule, faultsDone);
                    return null;
                }));
            }
            long window = options.duration().toNanos();
            while (System.nanoTime() - start < window) {
                long elapsed = (System.nanoTime() - start) / 1_000_000_000L;
                progress.status()
                        .accept(String.format(
                                "torture %d/%d s · %d strategies × %d clients · faults injected %d",
                                elapsed,
                                options.duration().toSeconds(),
                                runs.size(),
                                options.clients(),
                                faultsDone.get()));
                Thread.sleep(250);
            }
            for (int i = 0; i < runs.size(); i++) {
                progress.status()
                        .accept("waiting for the last fault on "
                                + runs.get(i).strategy.label() + " to heal");
                awaitHealed(running.get(i), runs.get(i).strategy);
            }
            progress.status().accept("stopping the clients");
        } finally {
            nemeses.shutdownNow();
            for (Run run : runs) {
                run.stopClients();
            }
        }
        for (Run run : runs) {
            appendStates(run, Kind.FINAL, db);
        }
    }

    /** The value of each record of {@code run}'s strategy, as its INITIAL or FINAL state. */
    private static void appendStates(Run run, Kind kind, Connection db) throws Exception {
        for (String record : run.strategy.records()) {
            Event state = Event.state(
                    kind, SharedRecord.read(db, record).value(), System.nanoTime(), System.currentTimeMillis());
            run.harness.append(run.strategy.permits() == 0 ? state : state.withRecord(record));
        }
    }

    /**
     * Waits for a nemesis to finish: its last heal waits for servers to start again, which takes
     * longer on a busy machine. A failure of the nemesis is passed on as it is.
     */
    private static void awaitHealed(Future<?> nemesis, Strategy strategy) throws Exception {
        Duration limit = TestTime.scaledByLoad(READY_TIMEOUT);
        try {
            nemesis.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } catch (TimeoutException e) {
            throw new IllegalStateException("the last fault on " + strategy.label() + " was not healed within "
                    + limit.toSeconds() + " s of the run's end");
        }
    }

    /** One strategy's servers, clients and files. */
    static final class Run implements AutoCloseable {
        final Strategy strategy;
        final Options options;
        final String jdbcUrl;
        final Path dir;
        final Target target;
        final History harness;
        final History nemesis;
        final List<ClientHandle> clients = new ArrayList<>();
        private final List<History> clientHistories = new ArrayList<>();

        Run(Strategy strategy, Options options, String jdbcUrl) throws Exception {
            this.strategy = strategy;
            this.options = options;
            this.jdbcUrl = jdbcUrl;
            this.dir = Files.createDirectories(options.out().resolve(strategy.option()));
            this.target = Target.start(strategy, dir, options.clients(), options.ttl());
            this.harness = History.open(dir.resolve("harness.jsonl"));
            this.nemesis = History.open(dir.resolve("nemesis.jsonl"));
        }

        void startClients() throws IOException, SQLException {
            for (int i = 1; i <= options.clients(); i++) {
                Path history = dir.resolve("client-" + i + ".jsonl");
                TortureClient.Config config = new TortureClient.Config(
                        strategy, i, target.endpoints(i), jdbcUrl, options.ttl().toMillis(), options.seed(), history);
                if (options.threads()) {
                    History shared = History.open(history);
                    clientHistories.add(shared);
                    clients.add(ClientHandle.thread(config, shared));
                } else {
                    clients.add(ClientHandle.process(config, dir.resolve("client-" + i + ".log")));
                }
            }
        }

        void stopClients() throws InterruptedException {
            for (ClientHandle client : clients) {
                try {
                    client.stop(STOP_TIMEOUT);
                } catch (RuntimeException e) {
                    log.warn("{} {} did not stop cleanly", strategy.option(), client.config.id(), e);
                }
            }
        }

        List<Path> historyFiles() throws IOException {
            try (var files = Files.list(dir)) {
                return files.filter(f -> f.toString().endsWith(".jsonl"))
                        .sorted()
                        .toList();
            }
        }

        @Override
        public void close() {
            clients.forEach(ClientHandle::close);
            clientHistories.forEach(History::close);
            harness.close();
            nemesis.close();
            target.close();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
