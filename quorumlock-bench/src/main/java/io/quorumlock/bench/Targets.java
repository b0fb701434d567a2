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

    /** A target with its checks; its verdict is FAIL if a check fails, else NOT_MEASURED if one is missing, else PASS. */
    record Target(int number, String title, List<Check> checks) {
        Verdict verdict() {
            if (checks.stream().anyMatch(c -> c.verdict() == Verdict.FAIL)) {
                return Verdict.FAIL;
            }
            if (checks.stream().anyMatch(c -> c.verdict() == Verdict.NOT_MEASURED)) {
                return Verdict.NOT_MEASURED;
            }
            return Verdict.PASS;
        }
    }

    /**
     * The most threads a 5-node client may have: a generous bound, 8 per node (the default {@code
     * maxConnectionsPerNode}); the client starts none for I/O, and never one per request.
     */
    static final int MAX_THREADS = 5 * 8;

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

        List<Target> targets = new ArrayList<>();
        targets.add(new Target(
                1,
                "Single node: close to raw Jedis, far ahead of Redisson",
                List.of(
                        atLeast("quorumlock / raw-jedis, cycles/s", ratio(ops(q1), ops(raw)), 0.85),
                        atLeast("quorumlock / redisson, cycles/s", ratio(ops(q1), ops(redisson)), 5),
                        // The floor's own lead: quorumlock cannot beat Redisson by more than about this.
                        reported(
                                "raw-jedis / redisson, cycles/s (the floor's lead)",
                                ratio(ops(raw), ops(redisson)),
                                v -> String.format(Locale.ROOT, "%.2f", v)))));
        targets.add(new Target(
                2,
                "5 nodes, one thread",
                List.of(
                        atLeast("quorumlock / sequential-redlock, cycles/s", ratio(ops(q5), ops(seq5)), 3),
                        atLeast("quorumlock / redisson-redlock, cycles/s", ratio(ops(q5), ops(redlock5)), 15),
                        atMost(
                                "quorumlock 5-node p50 / raw-jedis 1-node p50",
                                ratio(q5.map(CaseResult::p50Micros), raw.map(CaseResult::p50Micros)),
                                2.5))));
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
        targets.add(resources(resources, q5, q1));
        Optional<CaseResult> qTls = find(Plan.TLS, Plan.QUORUMLOCK);
        targets.add(new Target(
                6,
                "5 nodes over TLS: a handshake per connection, not per cycle",
                List.of(atLeast("quorumlock TLS / plain, 5 nodes, cycles/s", ratio(ops(qTls), ops(q5)), 0.7))));
        Optional<CaseResult> qMany = find(Plan.MANY, Plan.QUORUMLOCK);
        targets.add(new Target(
                7,
                "Many callers: 64 threads on one client, 5 nodes",
                List.of(
                        equalTo("cycles not acquired (free locks refused)", number(qMany, "failures"), 0),
                        atMost("connections per node", number(qMany, "connections_per_node"), 8),
                        reported(
                                "quorumlock 64 threads / 1 thread, cycles/s",
                                ratio(ops(qMany), ops(q5)),
                                v -> String.format(Locale.ROOT, "%.2f", v)))));
        return targets;
    }

    private Target resources(Resources r, Optional<CaseResult> q5, Optional<CaseResult> q1) {
        List<Check> checks = new ArrayList<>();
        boolean measured = r != null && r.error() == null;
        checks.add(reported(
                "allocation per cycle, 5 nodes, B",
                q5.map(CaseResult::allocBytesPerOp),
                v -> Report.count(Math.round(v))));
        checks.add(reported(
                "allocation per cycle, 1 node, B",
                q1.map(CaseResult::allocBytesPerOp),
                v -> Report.count(Math.round(v))));
        if (!measured) {
            checks.add(new Check(
                    "threads and connections of one client",
                    null,
                    r == null ? "not measured" : "error: " + r.error(),
                    "",
                    Verdict.NOT_MEASURED,
                    false));
            return new Target(5, "Resources of one 5-node client", checks);
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
        return new Target(5, "Resources of one 5-node client", checks);
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

    private static String ratioText(double v) {
        return String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
    }

    private static String plain(double bound) {
        return bound == Math.rint(bound) ? Long.toString((long) bound) : Double.toString(bound);
    }
}
