package io.quorumlock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** The targets of the bench, each checked on figures measured side by side in one run. */
final class Targets {

    /** The verdict of a target or a check. */
    enum Verdict {
        PASS,
        FAIL,
        /** Not measured in this run (skipped or failed case). */
        NOT_MEASURED,
        /** A figure to report, with no bound. */
        REPORTED
    }

    /**
     * One check of a target.
     *
     * @param name what is measured, such as {@code quorumlock / raw-jedis ops/s}
     * @param value the measured figure, or null if not measured
     * @param shown the figure as printed
     * @param bound the bound as printed, such as {@code >= 0.85}; empty when only reported
     * @param verdict the verdict
     * @param ratio whether the figure is a ratio of two measurements
     */
    record Check(String name, Double value, String shown, String bound, Verdict verdict, boolean ratio) {}

    /**
     * A target with its checks; its verdict is FAIL if a check fails, else NOT_MEASURED if one is
     * missing, else PASS; REPORTED if no check has a bound (figures to report, measured or not).
     *
     * @param reason the physical reason for its bounds, in one sentence; empty where it has none
     */
    record Target(int number, String title, String reason, List<Check> checks) {

        Target(int number, String title, List<Check> checks) {
            this(number, title, "", checks);
        }

        Verdict verdict() {
            if (checks.stream().allMatch(c -> c.bound().isEmpty())) {
                return Verdict.REPORTED;
            }
            if (checks.stream().anyMatch(c -> c.verdict() == Verdict.FAIL)) {
                return Verdict.FAIL;
            }
            if (checks.stream().anyMatch(c -> c.verdict() == Verdict.NOT_MEASURED)) {
                return Verdict.NOT_MEASURED;
            }
            return Verdict.PASS;
        }

        /** Whether this target does not stand in the way of the exit code: passed, or only reported. */
        boolean met() {
            Verdict verdict = verdict();
            return verdict == Verdict.PASS || verdict == Verdict.REPORTED;
        }
    }

    /**
     * The most threads a 5-node client may have: a generous bound, 8 per node (the default {@code
     * maxConnectionsPerNode}); the client starts none for I/O, and never one per request.
     */
    static final int MAX_THREADS = 5 * 8;

    /** The most bytes a single-node quorumlock cycle may allocate (JMH's gc profiler, all threads). */
    static final int MAX_ALLOC_ONE_NODE = 1_000;

    /** The most bytes a 5-node quorumlock cycle may allocate. */
    static final int MAX_ALLOC_FIVE_NODES = 1_500;

    private final List<CaseResult> results;

    private Targets(List<CaseResult> results) {
        this.results = results;
    }

    static List<Target> evaluate(List<CaseResult> results, Resources resources) {
        return new Targets(results).all(resources);
    }

    private List<Target> all(Resources resources) {
        Optional<CaseResult> raw = find(Plan.SINGLE, Plan.RAW);
        Optional<CaseResult> q1 = find(Plan.SINGLE, Plan.QUORUMLOCK);
        Optional<CaseResult> redisson = find(Plan.SINGLE, Plan.REDISSON);
        Optional<CaseResult> q5 = find(Plan.FIVE, Plan.QUORUMLOCK);
        Optional<CaseResult> seq5 = find(Plan.FIVE, Plan.SEQUENTIAL);
        Optional<CaseResult> redlock5 = find(Plan.FIVE, Plan.REDLOCK);
        Optional<CaseResult> qFrozen = find(Plan.FROZEN, Plan.QUORUMLOCK);
        Optional<CaseResult> qContention = find(Plan.CONTENTION, Plan.QUORUMLOCK);
        Optional<CaseResult> seqContention = find(Plan.CONTENTION, Plan.SEQUENTIAL);

        Optional<CaseResult> fanout5 = find(Plan.FIVE, Plan.FANOUT);
        Optional<CaseResult> qMany = find(Plan.MANY, Plan.QUORUMLOCK);
        Optional<CaseResult> fanoutMany = find(Plan.MANY, Plan.FANOUT);
        Optional<CaseResult> redlockMany = find(Plan.MANY, Plan.REDLOCK);
        Optional<CaseResult> qShared = find(Plan.MANY_SHARED, Plan.QUORUMLOCK);
        Optional<CaseResult> capacity = find(Plan.CAPACITY, Plan.PIPELINED);
        Optional<CaseResult> ping = find(Plan.SLOW, Plan.PING);
        Optional<CaseResult> qSlow = find(Plan.SLOW, Plan.QUORUMLOCK);
        Optional<CaseResult> seqSlow = find(Plan.SLOW, Plan.SEQUENTIAL);
        Optional<CaseResult> redlockSlow = find(Plan.SLOW, Plan.REDLOCK);
        Optional<CaseResult> qSlowNode = find(Plan.SLOW_NODE, Plan.QUORUMLOCK);

        List<Target> targets = new ArrayList<>();
        targets.add(new Target(
                1,
                "Single node: as fast as raw Jedis",
                "A cycle is the same two requests as raw Jedis's on the same socket, so the client's own work,"
                        + " written into reused buffers, must cost no more than Jedis's strings and replies.",
                List.of(
                        atLeast("quorumlock / raw-jedis, cycles/s", ratio(ops(q1), ops(raw)), 1.0),
                        // Raw Jedis allocates about 1,450 B a cycle (its token strings, its reply
                        // objects, the harness's own); a client that writes its commands into reused
                        // buffers and shares its usual answers needs only its lease, token and rounds.
                        allocAtMost("quorumlock alloc, B/op", alloc(q1), MAX_ALLOC_ONE_NODE),
                        reported("quorumlock / redisson, cycles/s", ratio(ops(q1), ops(redisson)), Targets::ratioText),
                        // The floor's own lead: quorumlock cannot beat Redisson by more than about this.
                        reported(
                                "raw-jedis / redisson, cycles/s (the floor's lead)",
                                ratio(ops(raw), ops(redisson)),
                                Targets::ratioText))));
        targets.add(new Target(
                2,
                "5 nodes, one thread: as fast as the fan-out floor",
                "A cycle waits for the same replies as the raw fan-out, which is written to every node"
                        + " at once, so a client that sends as it does may take no longer.",
                List.of(
                        atLeast("quorumlock / raw-fanout, cycles/s", ratio(ops(q5), ops(fanout5)), 1.0),
                        atLeast("quorumlock / sequential-redlock, cycles/s", ratio(ops(q5), ops(seq5)), 3),
                        // The raw fan-out allocates about 1,900 B a cycle, most of it per node (five
                        // Jedis replies and futures each way); quorumlock's rounds allocate nothing per
                        // node, so five nodes may cost only a little more than one.
                        allocAtMost("quorumlock alloc, B/op", alloc(q5), MAX_ALLOC_FIVE_NODES),
                        reported(
                                "quorumlock / redisson-redlock, cycles/s",
                                ratio(ops(q5), ops(redlock5)),
                                Targets::ratioText),
                        reported(
                                "raw-fanout / sequential-redlock, cycles/s (the floor's lead)",
                                ratio(ops(fanout5), ops(seq5)),
                                Targets::ratioText),
                        reported(
                                "raw-fanout / redisson-redlock, cycles/s (the floor's lead)",
                                ratio(ops(fanout5), ops(redlock5)),
                                Targets::ratioText),
                        reported(
                                "server capacity / 2 requests per node and cycle / raw-fanout cycles/s",
                                ratio(capacity.map(c -> c.number("set_per_s_per_node") / 2), ops(fanout5)),
                                Targets::ratioText))));
        targets.add(new Target(
                3,
                "One of 5 nodes frozen",
                List.of(
                        below("quorumlock acquire p99, µs", qFrozen.map(r -> r.number("acquire_p99_us")), 2000),
                        atLeast("quorumlock frozen / unfrozen, cycles/s", ratio(ops(qFrozen), ops(q5)), 0.8))));
        List<Check> contention = new ArrayList<>();
        contention.add(
                atLeast("quorumlock / sequential-redlock, wins/s", ratio(ops(qContention), ops(seqContention)), 2));
        contention.add(atLeast("quorumlock fairness, min/max wins per client", number(qContention, "fairness"), 0.7));
        contention.add(equalTo("quorumlock overlaps", number(qContention, "overlaps"), 0));
        contention.add(reported(
                "quorumlock split votes, share of failed attempts",
                number(qContention, "split_vote_rate"),
                v -> String.format(Locale.ROOT, "%.1f%%", 100 * v)));
        contention.add(reported(
                "sequential-redlock overlaps, fairness",
                number(seqContention, "overlaps"),
                v -> Report.count(v.longValue()) + ", "
                        + number(seqContention, "fairness")
                                .map(f -> String.format(Locale.ROOT, "%.2f", f))
                                .orElse("-")));
        targets.add(new Target(4, "Contention: 8 clients, one resource, 5 nodes", contention));
        targets.add(new Target(
                5,
                "Many callers: 64 threads, 5 nodes",
                List.of(
                        atLeast(
                                "quorumlock (one client) / raw-fanout (own sockets), 64 threads, cycles/s",
                                ratio(ops(qMany), ops(fanoutMany)),
                                1.0),
                        atLeast(
                                "quorumlock / redisson-redlock, 64 threads, cycles/s",
                                ratio(ops(qMany), ops(redlockMany)),
                                10),
                        reported(
                                "raw-fanout / redisson-redlock, 64 threads, cycles/s (the floor's lead)",
                                ratio(ops(fanoutMany), ops(redlockMany)),
                                Targets::ratioText),
                        bounded(
                                "quorumlock connections per node",
                                number(qMany, "connections_per_node"),
                                "<= 8",
                                v -> v <= 8,
                                v -> Report.count(v.longValue()),
                                false),
                        equalTo("cycles not acquired (free locks refused)", number(qMany, "failures"), 0),
                        reported(
                                "quorumlock 64 threads / 1 thread, cycles/s",
                                ratio(ops(qMany), ops(q5)),
                                Targets::ratioText),
                        reported(
                                "quorumlock 64 threads on 8 resources, acquired cycles/s",
                                ops(qShared),
                                Report::rate))));
        targets.add(new Target(
                6,
                "Slow network: 1 ms each way",
                List.of(
                        atMost("quorumlock cycle p50 / round trip p50", ratio(p50(qSlow), p50(ping)), 2.3),
                        reported(
                                "sequential-redlock cycle p50 / round trip p50 (about 10)",
                                ratio(p50(seqSlow), p50(ping)),
                                Targets::ratioText),
                        reported(
                                "redisson-redlock cycle p50 / round trip p50",
                                ratio(p50(redlockSlow), p50(ping)),
                                Targets::ratioText),
                        atMost(
                                "quorumlock p50, one node +20 ms / all at 1 ms",
                                ratio(p50(qSlowNode), p50(qSlow)),
                                1.1))));
        targets.add(resources(resources, q5, q1));
        Optional<CaseResult> qDb = find(Plan.DB_CYCLE, Plan.QUORUMLOCK);
        targets.add(new Target(
                8,
                "Database lock on PostgreSQL, one thread: 1.2x ShedLock's cycles",
                "A JdbcLock cycle is two statements in auto-commit, two round trips, where ShedLock's is two"
                        + " transactions of an UPDATE and a COMMIT, four round trips, on the same server.",
                List.of(
                        atLeast(
                                "quorumlock JdbcLock / " + Plan.SHEDLOCK + ", cycles/s",
                                ratio(ops(qDb), ops(find(Plan.DB_CYCLE, Plan.SHEDLOCK))),
                                1.2),
                        reported(
                                "quorumlock JdbcLock / " + Plan.SPRING_INTEGRATION + ", cycles/s",
                                ratio(ops(qDb), ops(find(Plan.DB_CYCLE, Plan.SPRING_INTEGRATION))),
                                Targets::ratioText))));
        Optional<CaseResult> qZkHandOff = find(Plan.ZK_HAND_OFF, Plan.QUORUMLOCK);
        Optional<CaseResult> curatorHandOff = find(Plan.ZK_HAND_OFF, Plan.CURATOR);
        Optional<CaseResult> qEtcdHandOff = find(Plan.ETCD_HAND_OFF, Plan.QUORUMLOCK);
        Optional<CaseResult> jetcdHandOff = find(Plan.ETCD_HAND_OFF, Plan.JETCD);
        targets.add(new Target(
                9,
                "ZooKeeper and etcd hand-off at most 1.2x their own clients'",
                "ZooKeeperLock runs on Curator and EtcdLock on jetcd, and a hand-off waits for the same"
                        + " server events as theirs, so they may add only their own bookkeeping.",
                List.of(
                        atMost(
                                "ZooKeeperLock / " + Plan.CURATOR + ", hand-off p50",
                                ratio(p50(qZkHandOff), p50(curatorHandOff)),
                                1.2),
                        atMost(
                                "EtcdLock / " + Plan.JETCD + ", hand-off p50",
                                ratio(p50(qEtcdHandOff), p50(jetcdHandOff)),
                                1.2),
                        reported(
                                "ZooKeeperLock / " + Plan.CURATOR + ", hand-off p99",
                                ratio(p99(qZkHandOff), p99(curatorHandOff)),
                                Targets::ratioText),
                        reported(
                                "EtcdLock / " + Plan.JETCD + ", hand-off p99",
                                ratio(p99(qEtcdHandOff), p99(jetcdHandOff)),
                                Targets::ratioText))));
        targets.add(new Target(
                10,
                "ZooKeeperLock and EtcdLock cycles at least 0.9x their own clients'",
                "A cycle makes the same writes through the same client as Curator's or jetcd's own recipe,"
                        + " each a consensus round on the ensemble, so only the lease's bookkeeping is added.",
                List.of(
                        atLeast(
                                "ZooKeeperLock / " + Plan.CURATOR + ", cycles/s",
                                ratio(
                                        ops(find(Plan.ZK_CYCLE, Plan.QUORUMLOCK)),
                                        ops(find(Plan.ZK_CYCLE, Plan.CURATOR))),
                                0.9),
                        atLeast(
                                "EtcdLock / " + Plan.JETCD + ", cycles/s",
                                ratio(
                                        ops(find(Plan.ETCD_CYCLE, Plan.QUORUMLOCK)),
                                        ops(find(Plan.ETCD_CYCLE, Plan.JETCD))),
                                0.9))));
        targets.add(redisHandOff());
        targets.add(queues());
        targets.add(waitingContention(qContention));
        return targets;
    }

    /**
     * Target 13: 8 clients that wait with the library's own acquire, woken by releases: fair, no
     * waiter passed over long, and about as many wins as the same clients retrying without a pause.
     */
    private Target waitingContention(Optional<CaseResult> retrying) {
        Optional<CaseResult> waiting = find(Plan.CONTENTION, Plan.QUORUMLOCK_WAITING);
        return new Target(
                13,
                "Contention, waiting clients: 8 clients, one resource, 5 nodes, acquire woken by releases",
                "Served in the order they came, 8 waiters wait about 7 hand-offs each, and a woken waiter's win"
                        + " costs a wake-up that the row that retries without waiting does not pay, on the same CPUs.",
                List.of(
                        atLeast(
                                Plan.QUORUMLOCK_WAITING + " fairness, min/max wins per client",
                                number(waiting, "fairness"),
                                0.9),
                        atMost(
                                Plan.QUORUMLOCK_WAITING + " wait p99, in hand-offs",
                                number(waiting, "wait_p99_hand_offs"),
                                12),
                        atLeast(
                                Plan.QUORUMLOCK_WAITING + " wins/s / " + Plan.QUORUMLOCK + " (never waits) wins/s",
                                ratio(ops(waiting), ops(retrying)),
                                0.8),
                        equalTo(Plan.QUORUMLOCK_WAITING + " overlaps", number(waiting, "overlaps"), 0)));
    }

    /** Target 11: the Redis hand-off in round trips of a PING to the same nodes, measured in the same run. */
    private Target redisHandOff() {
        Optional<CaseResult> ping1 = find(Plan.REDIS_HAND_OFF, Plan.PING);
        Optional<CaseResult> q1 = find(Plan.REDIS_HAND_OFF, Plan.QUORUMLOCK);
        Optional<CaseResult> redisson = find(Plan.REDIS_HAND_OFF, Plan.REDISSON);
        Optional<CaseResult> springIntegration = find(Plan.REDIS_HAND_OFF, Plan.SPRING_INTEGRATION_REDIS);
        Optional<CaseResult> idle1 = find(Plan.REDIS_HAND_OFF, Plan.IDLE_PING);
        Optional<CaseResult> q5 = find(Plan.REDIS5_HAND_OFF, Plan.QUORUMLOCK);
        Optional<CaseResult> idle5 = find(Plan.REDIS5_HAND_OFF, Plan.IDLE_PING);
        return new Target(
                11,
                "Redis hand-off p50 at most 3 round trips of a PING after idle to the same nodes",
                "A hand-off is a release that wakes an idle server, a message that wakes the waiter and the"
                        + " waiter's own SET: three trips that each start from idle, as a PING sent after the same"
                        + " pause does.",
                List.of(
                        atMost("quorumlock hand-off p50 / PING-after-idle p50, 1 node", ratio(p50(q1), p50(idle1)), 3),
                        atMost(
                                "quorumlock hand-off p50 / fan-out PING-after-idle p50, 5 nodes",
                                ratio(p50(q5), p50(idle5)),
                                3),
                        reported(
                                "quorumlock / " + Plan.REDISSON + ", hand-off p50, 1 node",
                                ratio(p50(q1), p50(redisson)),
                                Targets::ratioText),
                        reported(
                                "quorumlock / " + Plan.SPRING_INTEGRATION_REDIS + ", hand-off p50, 1 node",
                                ratio(p50(q1), p50(springIntegration)),
                                Targets::ratioText),
                        reported(
                                Plan.REDISSON + " hand-off p50 / PING-after-idle p50, 1 node",
                                ratio(p50(redisson), p50(idle1)),
                                Targets::ratioText),
                        reported(
                                "quorumlock hand-off p50 / PING p50 in a loop, 1 node",
                                ratio(p50(q1), p50(ping1)),
                                Targets::ratioText)));
    }

    /**
     * Target 12, reported: the hand-off among many threads of one process queued on one resource,
     * over the single waiter's of the same run (the product's expectation: within 2x).
     */
    private Target queues() {
        return new Target(
                12,
                "Threads of one process queued on one resource, hand-off (reported, no bound)",
                List.of(
                        queue("ZooKeeperLock", Plan.ZK_QUEUE, Plan.ZK_HAND_OFF),
                        queue("EtcdLock", Plan.ETCD_QUEUE, Plan.ETCD_HAND_OFF)));
    }

    private Check queue(String lock, String queueCase, String handOffCase) {
        Optional<CaseResult> queue = find(queueCase, Plan.QUORUMLOCK);
        String threads = queue.map(r -> Report.count(r.threads()) + " threads").orElse("queued threads");
        return reported(
                lock + ", " + threads + " / 1 waiter, hand-off p50 (expected <= 2)",
                ratio(p50(queue), p50(find(handOffCase, Plan.QUORUMLOCK))),
                Targets::ratioText);
    }

    private static Optional<Double> p50(Optional<CaseResult> result) {
        return result.map(CaseResult::p50Micros);
    }

    private static Optional<Double> p99(Optional<CaseResult> result) {
        return result.map(CaseResult::p99Micros);
    }

    private Target resources(Resources r, Optional<CaseResult> q5, Optional<CaseResult> q1) {
        List<Check> checks = new ArrayList<>();
        // TLS: a handshake per connection, not per cycle.
        checks.add(atLeast(
                "quorumlock TLS / plain, 5 nodes, cycles/s",
                ratio(ops(find(Plan.TLS, Plan.QUORUMLOCK)), ops(q5)),
                0.7));
        boolean measured = r != null && r.error() == null;
        checks.add(reported("allocation per cycle, 5 nodes, B", alloc(q5), Targets::bytesText));
        checks.add(reported("allocation per cycle, 1 node, B", alloc(q1), Targets::bytesText));
        if (!measured) {
            checks.add(new Check(
                    "threads and connections of one client",
                    null,
                    r == null ? "not measured" : "error: " + r.error(),
                    "",
                    Verdict.NOT_MEASURED,
                    false));
            return new Target(7, "Resources of one 5-node client", checks);
        }
        int bound = MAX_THREADS;
        checks.add(new Check(
                "threads per client: after build / 100 / " + Report.count(r.cycles()) + " cycles",
                (double) r.threadsAfterCycles(),
                r.threadsAfterBuild() + " / " + r.threadsAfterFewCycles() + " / " + r.threadsAfterCycles(),
                "no growth, <= " + bound,
                r.threadsAfterCycles() <= r.threadsAfterFewCycles() && r.threadsAfterCycles() <= bound
                        ? Verdict.PASS
                        : Verdict.FAIL,
                false));
        checks.add(new Check(
                "threads with " + r.callers() + " concurrent callers",
                (double) r.threadsWithCallers(),
                Integer.toString(r.threadsWithCallers()),
                "<= " + bound,
                r.threadsWithCallers() <= bound ? Verdict.PASS : Verdict.FAIL,
                false));
        checks.add(new Check(
                "threads left after close()",
                (double) r.threadsAfterClose(),
                Integer.toString(r.threadsAfterClose()),
                "",
                Verdict.REPORTED,
                false));
        checks.add(new Check(
                "connections per node, 1 caller",
                (double) r.connectionsPerNode(),
                Integer.toString(r.connectionsPerNode()),
                "<= 1",
                r.connectionsPerNode() <= 1 ? Verdict.PASS : Verdict.FAIL,
                false));
        checks.add(new Check(
                "connections per node, " + r.callers() + " callers",
                (double) r.connectionsPerNodeWithCallers(),
                Integer.toString(r.connectionsPerNodeWithCallers()),
                "<= " + r.callers(),
                r.connectionsPerNodeWithCallers() <= r.callers() ? Verdict.PASS : Verdict.FAIL,
                false));
        return new Target(7, "Resources of one 5-node client", checks);
    }

    private Optional<CaseResult> find(String caseId, String library) {
        return results.stream()
                .filter(r -> r.is(caseId, library))
                .filter(r -> r.skipped() == null && r.error() == null)
                .findFirst();
    }

    private static Optional<Double> ops(Optional<CaseResult> result) {
        return result.map(CaseResult::opsPerSecond);
    }

    /** Bytes allocated per cycle; empty also where JMH's gc profiler gave none. */
    private static Optional<Double> alloc(Optional<CaseResult> result) {
        return result.map(CaseResult::allocBytesPerOp);
    }

    private static Optional<Double> number(Optional<CaseResult> result, String name) {
        return result.map(r -> r.number(name));
    }

    private static Optional<Double> ratio(Optional<Double> a, Optional<Double> b) {
        if (a.isEmpty() || b.isEmpty() || b.get() == 0) {
            return Optional.empty();
        }
        return Optional.of(a.get() / b.get());
    }

    private static Check atLeast(String name, Optional<Double> value, double bound) {
        return bounded(name, value, ">= " + plain(bound), v -> v >= bound, Targets::ratioText, true);
    }

    private static Check atMost(String name, Optional<Double> value, double bound) {
        return bounded(name, value, "<= " + plain(bound), v -> v <= bound, Targets::ratioText, true);
    }

    private static Check below(String name, Optional<Double> value, double bound) {
        return bounded(name, value, "< " + Report.count((long) bound), v -> v < bound, v -> Report.micros(v), false);
    }

    private static Check allocAtMost(String name, Optional<Double> value, long bound) {
        return bounded(name, value, "<= " + Report.count(bound), v -> v <= bound, Targets::bytesText, false);
    }

    private static Check equalTo(String name, Optional<Double> value, long bound) {
        return bounded(name, value, "== " + bound, v -> v == bound, v -> Report.count(v.longValue()), false);
    }

    private static Check bounded(
            String name,
            Optional<Double> value,
            String bound,
            java.util.function.DoublePredicate pass,
            java.util.function.Function<Double, String> show,
            boolean ratio) {
        if (value.isEmpty()) {
            return new Check(name, null, "not measured", bound, Verdict.NOT_MEASURED, ratio);
        }
        double v = value.get();
        return new Check(name, v, show.apply(v), bound, pass.test(v) ? Verdict.PASS : Verdict.FAIL, ratio);
    }

    private static Check reported(
            String name, Optional<Double> value, java.util.function.Function<Double, String> show) {
        if (value.isEmpty()) {
            return new Check(name, null, "not measured", "", Verdict.NOT_MEASURED, false);
        }
        return new Check(name, value.get(), show.apply(value.get()), "", Verdict.REPORTED, false);
    }

    private static String bytesText(double v) {
        return Report.count(Math.round(v));
    }

    private static String ratioText(double v) {
        return String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
    }

    private static String plain(double bound) {
        return bound == Math.rint(bound) ? Long.toString((long) bound) : Double.toString(bound);
    }
}
