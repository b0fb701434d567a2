package io.quorumlock.torture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.MariaDbServer;
import io.quorumlock.testkit.PostgresServer;
import io.quorumlock.testkit.Processes;
import io.quorumlock.testkit.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A 25-second torture of every strategy, client processes and all fault kinds, as the command runs
 * it. 25 s is the shortest window that fits one fault of each kind with a 2 s lease (a pause takes
 * 5 s, a partition 4 s, the eight kinds with their quiet gaps about 23 s on average).
 */
class TortureIT {

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void fencedLocksAndTheVersionColumnStayCorrectUnderEveryFault(@TempDir Path out) throws Exception {
        List<String> progress = new ArrayList<>();
        Torture.Result result = Torture.run(
                new Torture.Options(
                        // The database locks, the leader elections, the semaphores and the read-write
                        // locks have runs of their own below: all at once were too much for a 2-core
                        // machine beside two CPU burners.
                        EnumSet.complementOf(EnumSet.of(
                                Strategy.POSTGRES,
                                Strategy.POSTGRES_UNFENCED,
                                Strategy.MARIADB,
                                Strategy.ZOOKEEPER_LEADER,
                                Strategy.ETCD_LEADER,
                                Strategy.POSTGRES_LEADER,
                                Strategy.MARIADB_LEADER,
                                Strategy.SENTINEL_LEADER,
                                Strategy.SENTINEL_WAIT_LEADER,
                                Strategy.REDLOCK_LEADER,
                                Strategy.ZOOKEEPER_SEMAPHORE,
                                Strategy.POSTGRES_SEMAPHORE,
                                Strategy.ETCD_SEMAPHORE,
                                Strategy.MARIADB_SEMAPHORE,
                                Strategy.REDIS_SEMAPHORE,
                                Strategy.ZOOKEEPER_READ_WRITE,
                                Strategy.POSTGRES_READ_WRITE,
                                Strategy.ETCD_READ_WRITE,
                                Strategy.MARIADB_READ_WRITE,
                                Strategy.REDIS_READ_WRITE)),
                        EnumSet.complementOf(EnumSet.of(FaultKind.FAILOVER)),
                        Duration.ofSeconds(25),
                        3,
                        20261130L,
                        out,
                        false,
                        Duration.ofSeconds(2)),
                new Torture.Progress(progress::add, progress::add));
        List<String> table = ResultTable.lines(result);
        String shown = String.join("\n", table);

        if (System.getenv("QUORUMLOCK_ETCD_BIN") != null || EtcdCluster.available()) {
            assertThat(result.skipped()).as(shown).isEmpty();
        }
        assertThat(progress).anyMatch(line -> line.startsWith("torture "));
        for (Torture.Outcome outcome : result.answers()) {
            Map<String, Integer> faults = outcome.summary().faultsByKind();
            assertThat(outcome.summary().operations())
                    .as(outcome.strategy() + "\n" + shown)
                    .isPositive();
            assertThat(outcome.verdict().writesAcknowledged())
                    .as(outcome.strategy() + "\n" + shown)
                    .isPositive();
            if (outcome.strategy().claimsCorrectness()) {
                assertThat(outcome.violated())
                        .as(outcome.strategy() + "\n" + shown)
                        .isFalse();
            }
            if (outcome.strategy().servers() == Strategy.Servers.REDIS) {
                assertThat(faults).as(outcome.strategy() + "\n" + shown).containsKeys("kill", "freeze", "restart");
                if (RedisServer.clockControlAvailable()) {
                    assertThat(faults).as(shown).containsKey("clock");
                }
            }
            if (outcome.strategy().servers() == Strategy.Servers.NONE) {
                assertThat(faults).as(shown).doesNotContainKeys("partition", "slow");
            } else {
                assertThat(faults).as(outcome.strategy() + "\n" + shown).containsKeys("partition", "slow");
                partitionsCutOffOneClientOnly(out.resolve(outcome.strategy().option()), result.schedule(), shown);
            }
            if (faults.containsKey("pause")) {
                // The paused client wakes believing it holds the lock and writes what it read
                // before the pause: a TTL lock lets the write through, a fence refuses it.
                if (outcome.strategy().fenced() || outcome.strategy() == Strategy.OPTIMISTIC) {
                    assertThat(outcome.verdict().staleRejected())
                            .as(outcome.strategy() + "\n" + shown)
                            .isPositive();
                } else {
                    assertThat(outcome.verdict().overlaps())
                            .as(outcome.strategy() + "\n" + shown)
                            .isNotEmpty();
                    assertThat(outcome.verdict().lostUpdates())
                            .as(outcome.strategy() + "\n" + shown)
                            .isPositive();
                }
            }
        }
        // A pause strikes a client that reaches a write within 1.5 s of its time (the first fault,
        // 0.6 s into the run; the clients are connected before it starts). On a busy machine a
        // strategy's clients can all be elsewhere then; it must strike somewhere.
        assertThat(result.answers())
                .as(shown)
                .anyMatch(o -> o.summary().faultsByKind().containsKey("pause"));
        // An expiry strikes a client that holds the lock within 1.5 s of its time; after a kill and
        // a slow member, etcd can keep every client out that long (a leader change renews the
        // lease of an attempt given up). It must strike somewhere.
        assertThat(result.answers().stream()
                        .filter(o -> o.strategy().fenced())
                        .mapToInt(o -> o.summary().faultsByKind().getOrDefault("expire", 0)))
                .as(shown)
                .anyMatch(n -> n > 0);
        assertThat(result.exitCode()).as(shown).isZero();

        String html = Files.readString(result.report());
        for (Torture.Outcome outcome : result.answers()) {
            assertThat(html).contains(outcome.strategy().label().replace("+", "+"));
        }
        try (var dirs = Files.list(out)) {
            assertThat(dirs.filter(Files::isDirectory).count())
                    .isEqualTo(result.answers().size());
        }
        assertThat(ProcessHandle.current().descendants().filter(Processes::isRunning))
                .as("client processes and servers left behind")
                .isEmpty();
        assertThat(Thread.getAllStackTraces().keySet())
                .extracting(Thread::getName)
                .as("fault proxies left behind")
                .noneMatch(name -> name.startsWith("quorumlock-fault-proxy-"));
    }

    /**
     * The database lock on PostgreSQL and on MariaDB, with its fence, under every fault that applies
     * to it: no overlap of accepted writes, no lost update, no stale write accepted. The PostgreSQL
     * lock without the fence runs beside them, on a server of its own: its violations show, they do
     * not fail the run.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void theDatabaseLocksStayCorrectUnderEveryFault(@TempDir Path out) throws Exception {
        assumeTrue(
                PostgresServer.available(), PostgresServer.unavailableReason().orElse(""));
        assumeTrue(MariaDbServer.available(), MariaDbServer.unavailableReason().orElse(""));
        Torture.Result result = databaseRun(
                EnumSet.of(Strategy.POSTGRES, Strategy.MARIADB, Strategy.POSTGRES_UNFENCED), 20261202L, out);
        String shown = String.join("\n", ResultTable.lines(result));
        assertThat(result.answers())
                .extracting(Torture.Outcome::strategy)
                .as(shown)
                .containsExactly(Strategy.POSTGRES, Strategy.MARIADB, Strategy.POSTGRES_UNFENCED);
        staysCorrect(result.answers().get(0), out, result.schedule(), shown);
        staysCorrect(result.answers().get(1), out, result.schedule(), shown);

        Torture.Outcome unfenced = result.answers().get(2);
        assertThat(unfenced.verdict().writesAcknowledged()).as(shown).isPositive();
        assertThat(unfenced.summary().faultsByKind())
                .as(shown)
                .containsKeys("kill", "restart", "freeze", "partition", "slow");
        if (unfenced.summary().faultsByKind().containsKey("pause")) {
            // The paused client wakes and writes what it read before the pause, unchecked: the
            // updates of whoever held the lock meanwhile are lost. (Not a stale write in the
            // checker's sound sense: that write's call began, with its read, before the others.)
            assertThat(unfenced.verdict().lostUpdates()).as(shown).isPositive();
            assertThat(shown).contains("violated (no fence)");
        }
        partitionsCutOffOneClientOnly(out.resolve(Strategy.POSTGRES_UNFENCED.option()), result.schedule(), shown);
        assertThat(result.exitCode()).as(shown).isZero();
    }

    /**
     * Semaphores of 2 permits and read-write locks, on ZooKeeper and on PostgreSQL, 3 clients each,
     * under every fault. A semaphore's holder writes its permit's record with its permit's token
     * behind the fence: no two holders of one permit write at once, so never more than 2 writers, no
     * lost update, no stale write accepted, and both permits are used. A read-write lock's client
     * reads (the record twice under a read lease) or writes (behind the fence with the writer's
     * token) as it draws: no torn read (no write beside a reader), no lost update, no stale write
     * accepted, and reads are made.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void theFencedSemaphoresAndReadWriteLocksStayCorrectUnderEveryFault(@TempDir Path out) throws Exception {
        assumeTrue(
                PostgresServer.available(), PostgresServer.unavailableReason().orElse(""));
        Set<Strategy> semaphores = EnumSet.of(Strategy.ZOOKEEPER_SEMAPHORE, Strategy.POSTGRES_SEMAPHORE);
        Set<Strategy> readWrite = EnumSet.of(Strategy.ZOOKEEPER_READ_WRITE, Strategy.POSTGRES_READ_WRITE);
        Set<Strategy> both = EnumSet.copyOf(semaphores);
        both.addAll(readWrite);
        Torture.Result result = databaseRun(both, 20261207L, out);
        String shown = String.join("\n", ResultTable.lines(result));
        assertThat(result.answers())
                .extracting(Torture.Outcome::strategy)
                .as(shown)
                .containsExactlyInAnyOrderElementsOf(both);
        for (Torture.Outcome outcome : result.answers()) {
            List<Event> events = heldUnderTheServersFaults(outcome, out, result.schedule(), shown);
            if (semaphores.contains(outcome.strategy())) {
                assertThat(events.stream()
                                .filter(e -> e.op() == Event.Op.WRITE && e.kind() == Event.Kind.OK)
                                .filter(e -> e.accepted().orElse(false))
                                .map(Event::record)
                                .distinct())
                        .as("the records written, " + outcome.strategy() + "\n" + shown)
                        .containsExactlyInAnyOrderElementsOf(outcome.strategy().records());
            } else {
                assertThat(events.stream()
                                .filter(e -> e.op() == Event.Op.READ && e.kind() == Event.Kind.OK)
                                .filter(e -> e.accepted().orElse(false)))
                        .as("reads under a valid read lease, " + outcome.strategy() + "\n" + shown)
                        .isNotEmpty();
            }
        }
        assertThat(result.exitCode()).as(shown).isZero();
    }

    /**
     * Leader election on PostgreSQL, its leader writing with its term's token: the paused leader
     * and the leader whose row expired hand the role over, and the fence refuses what they write
     * after their term ended.
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aFencedLeaderHandsOverAndItsStaleWritesAreRefused(@TempDir Path out) throws Exception {
        assumeTrue(
                PostgresServer.available(), PostgresServer.unavailableReason().orElse(""));
        Torture.Result result = Torture.run(
                new Torture.Options(
                        EnumSet.of(Strategy.POSTGRES_LEADER),
                        EnumSet.of(FaultKind.PAUSE, FaultKind.EXPIRE),
                        Duration.ofSeconds(10),
                        3,
                        20261204L,
                        out,
                        false,
                        Duration.ofSeconds(2)),
                new Torture.Progress(line -> {}, line -> {}));
        String shown = String.join("\n", ResultTable.lines(result));
        Torture.Outcome leader = result.answers().get(0);
        assertThat(leader.verdict().writesAcknowledged()).as(shown).isPositive();
        assertThat(leader.verdict().staleAccepted()).as(shown).isEmpty();
        assertThat(leader.violated()).as(shown).isFalse();

        List<Event> events;
        try (var files = Files.list(out.resolve(Strategy.POSTGRES_LEADER.option()))) {
            events = History.readAll(
                    files.filter(f -> f.toString().endsWith(".jsonl")).sorted().toList());
        }
        List<String> leaders = Checker.inWallOrder(events).stream()
                .filter(e -> e.op() == Event.Op.ACQUIRE && e.kind() == Event.Kind.OK)
                .map(Event::client)
                .toList();
        long handOvers = java.util.stream.IntStream.range(1, leaders.size())
                .filter(i -> !leaders.get(i).equals(leaders.get(i - 1)))
                .count();
        assertThat(handOvers)
                .as("hand-overs among the terms " + leaders + "\n" + shown)
                .isPositive();
        if (leader.summary().faultsByKind().containsKey("pause")) {
            // Only the leader writes, so the pause strikes the leader: it wakes after its term
            // ended and writes what it read before, with its old token.
            assertThat(leader.verdict().staleRejected()).as(shown).isPositive();
        }
        assertThat(result.exitCode()).as(shown).isZero();
    }

    /**
     * The failover of the Redis article, twice: the leader on a master that Sentinel manages
     * keeps writing on the old master while its replica is cut off, and a candidate is granted the
     * lock on the promoted replica, which never had the leader's renewals: two leaders. With {@code
     * WAIT 1} the leader's renewals stop counting once the replica is cut off, and its lease ends
     * before the replica's copy of the key does; Redlock loses one node's key of five.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aFailoverGivesTwoLeadersWithoutWaitAndNoneWithWaitOrRedlock(@TempDir Path out) throws Exception {
        Torture.Result result = Torture.run(
                new Torture.Options(
                        EnumSet.of(Strategy.SENTINEL_LEADER, Strategy.SENTINEL_WAIT_LEADER, Strategy.REDLOCK_LEADER),
                        EnumSet.of(FaultKind.FAILOVER),
                        Duration.ofSeconds(21), // two failovers of 9 s with their gaps
                        3,
                        20261206L,
                        out,
                        true, // no client pause here: threads start faster than processes
                        // Longer than the sentinels take to promote the replica (about 2.5 s): the
                        // leader still believes it leads when a candidate is granted the lock.
                        Duration.ofSeconds(5)),
                new Torture.Progress(line -> {}, line -> {}));
        String shown = String.join("\n", ResultTable.lines(result));

        assertThat(result.answers()).hasSize(3);
        for (Torture.Outcome outcome : result.answers()) {
            assertThat(outcome.summary().faultsByKind())
                    .as(outcome.strategy() + "\n" + shown)
                    .containsEntry("failover", 2);
            assertThat(outcome.verdict().writesAcknowledged())
                    .as(outcome.strategy() + "\n" + shown)
                    .isPositive();
            if (outcome.strategy() == Strategy.SENTINEL_LEADER) {
                assertThat(outcome.verdict().overlaps())
                        .as("two leaders after a failover\n" + shown)
                        .isNotEmpty();
            } else {
                assertThat(outcome.verdict().overlaps())
                        .as(outcome.strategy() + "\n" + shown)
                        .isEmpty();
                assertThat(outcome.verdict().lostUpdates())
                        .as(outcome.strategy() + "\n" + shown)
                        .isZero();
            }
        }
        assertThat(ProcessHandle.current().descendants().filter(Processes::isRunning))
                .as("servers left behind")
                .isEmpty();
    }

    /** 25 s of every fault kind on the database strategies, 3 client processes each. */
    private static Torture.Result databaseRun(Set<Strategy> strategies, long seed, Path out) throws Exception {
        return Torture.run(
                new Torture.Options(
                        strategies,
                        EnumSet.complementOf(EnumSet.of(FaultKind.FAILOVER)),
                        Duration.ofSeconds(25),
                        3,
                        seed,
                        out,
                        false,
                        Duration.ofSeconds(2)),
                new Torture.Progress(line -> {}, line -> {}));
    }

    /**
     * A fenced strategy's outcome on ZooKeeper or PostgreSQL: writes acknowledged, the servers'
     * faults struck (ZooKeeper's servers run in this JVM: killed and restarted, not frozen), no
     * violation, partitions that cut off one client only; and its history.
     */
    private static List<Event> heldUnderTheServersFaults(
            Torture.Outcome outcome, Path out, List<Fault> schedule, String shown) throws Exception {
        assertThat(outcome.verdict().writesAcknowledged()).as(shown).isPositive();
        assertThat(outcome.summary().faultsByKind()).as(shown).containsKeys("kill", "restart", "partition", "slow");
        assertThat(outcome.violated()).as(shown).isFalse();
        Path dir = out.resolve(outcome.strategy().option());
        partitionsCutOffOneClientOnly(dir, schedule, shown);
        try (var files = Files.list(dir)) {
            return History.readAll(
                    files.filter(f -> f.toString().endsWith(".jsonl")).sorted().toList());
        }
    }

    /** A fenced database lock's outcome: every server fault struck, and no violation. */
    private static void staysCorrect(Torture.Outcome outcome, Path out, List<Fault> schedule, String shown)
            throws Exception {
        assertThat(outcome.strategy().fenced()).isTrue();
        assertThat(outcome.verdict().writesAcknowledged()).as(shown).isPositive();
        assertThat(outcome.summary().faultsByKind())
                .as(shown)
                .containsKeys("kill", "restart", "freeze", "partition", "slow");
        assertThat(outcome.violated()).as(shown).isFalse();
        partitionsCutOffOneClientOnly(out.resolve(outcome.strategy().option()), schedule, shown);
    }

    /**
     * While a partition lasts (from its start to its end as the history records them, the heal's
     * beginning: a nemesis that fell behind on a busy machine starts a fault late and still heals
     * it on schedule), the
     * client it cuts off is granted nothing it asked for during the partition, and some other
     * client is granted the lock by a partition's length after it ends: the servers stayed up for
     * them.
     */
    private static void partitionsCutOffOneClientOnly(Path dir, List<Fault> schedule, String shown) throws Exception {
        List<Event> events;
        try (var files = Files.list(dir)) {
            events = History.readAll(
                    files.filter(f -> f.toString().endsWith(".jsonl")).sorted().toList());
        }
        List<Event> faults = events.stream()
                .filter(e -> e.kind() == Event.Kind.FAULT)
                .filter(e -> e.faultKind().equals("partition"))
                .toList();
        long duration = schedule.stream()
                .filter(f -> f.kind() == FaultKind.PARTITION)
                .findFirst()
                .orElseThrow()
                .durationMillis();
        List<Checker.Call> grants = Checker.calls(Checker.inWallOrder(events), Event.Op.ACQUIRE).stream()
                .filter(c -> c.completion().kind() == Event.Kind.OK && c.invoke() != null)
                .toList();
        for (int i = 0; i < faults.size(); i++) {
            Event partition = faults.get(i);
            if (partition.op() != Event.Op.START) {
                continue;
            }
            Matcher cut = CUT_OFF.matcher(partition.label());
            assertThat(cut.find()).as(partition.label()).isTrue();
            String client = cut.group(1);
            long from = partition.wallMillis();
            long to = faults.stream()
                    .skip(i + 1)
                    .filter(e -> e.op() == Event.Op.END && e.label().equals(partition.label()))
                    .findFirst()
                    .map(Event::wallMillis)
                    .orElseThrow(() -> new AssertionError("no end of " + partition.label() + " in " + dir));
            assertThat(grants)
                    .as(dir.getFileName() + ": " + partition.label() + "\n" + shown)
                    .noneMatch(c -> c.completion().client().equals(client) && c.start() > from && c.end() < to);
            // The others are granted the lock once what the client cut off held has run out (its
            // lease or session: it may hold the lock, or be next in the queue, when it is cut off;
            // an etcd leader change on a loaded machine renews every lease for another TTL): by the
            // end of the partition, or a partition's length after it.
            assertThat(grants)
                    .as(dir.getFileName() + ": " + partition.label() + "\n" + shown)
                    .anyMatch(
                            c -> !c.completion().client().equals(client) && c.end() > from && c.end() < to + duration);
        }
    }

    private static final Pattern CUT_OFF = Pattern.compile("^partition (client-\\d+) from ");
}
