package io.quorumlock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The results as a person reads them: one table of the cases, then the targets with their verdicts. */
final class Report {

    private static final String[] HEADER = {
        "case", "library", "nodes", "threads", "ops/s", "p50 µs", "p99 µs", "alloc B/op", "notes"
    };
    private static final boolean[] RIGHT = {false, false, true, true, true, true, true, true, false};

    private Report() {}

    /** The table of cases, one line each, columns aligned. */
    static List<String> table(List<CaseResult> results) {
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADER);
        for (CaseResult r : results) {
            rows.add(new String[] {
                r.caseId(),
                r.library(),
                Integer.toString(r.nodes()),
                Integer.toString(r.threads()),
                r.opsPerSecond() == null ? "-" : rate(r.opsPerSecond()),
                r.p50Micros() == null ? "-" : micros(r.p50Micros()),
                r.p99Micros() == null ? "-" : micros(r.p99Micros()),
                r.allocBytesPerOp() == null ? "-" : count(Math.round(r.allocBytesPerOp())),
                notes(r)
            });
        }
        return aligned(rows, RIGHT);
    }

    /**
     * Rows as lines: the first is the header, columns aligned (to the right where {@code right}
     * says), the last column as it is, a blank line where the first column changes.
     */
    static List<String> aligned(List<String[]> rows, boolean[] right) {
        String[] header = rows.get(0);
        int[] widths = new int[header.length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        List<String> lines = new ArrayList<>();
        String previousCase = null;
        for (String[] row : rows) {
            if (previousCase != null && !previousCase.equals(row[0])) {
                lines.add(""); // a blank line between cases
            }
            previousCase = row == header ? null : row[0];
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                String cell = row[i];
                if (i == row.length - 1) {
                    line.append(cell);
                } else if (right[i]) {
                    line.append(" ".repeat(widths[i] - cell.length()))
                            .append(cell)
                            .append("  ");
                } else {
                    line.append(cell)
                            .append(" ".repeat(widths[i] - cell.length()))
                            .append("  ");
                }
            }
            lines.add(line.toString().stripTrailing());
        }
        return lines;
    }

    /** The targets, each with its checks: measured, bound, verdict. */
    static List<String> targets(List<Targets.Target> targets) {
        int name = 0;
        int shown = 0;
        int bound = 0;
        for (Targets.Target t : targets) {
            for (Targets.Check c : t.checks()) {
                name = Math.max(name, c.name().length());
                shown = Math.max(shown, c.shown().length());
                bound = Math.max(bound, c.bound().length());
            }
        }
        List<String> lines = new ArrayList<>();
        lines.add("TARGETS");
        for (Targets.Target t : targets) {
            String title = t.number() + ". " + t.title();
            lines.add(
                    title + " ".repeat(Math.max(1, name + shown + bound + 9 - title.length())) + verdict(t.verdict()));
            if (!t.reason().isEmpty()) {
                lines.add("   why: " + t.reason());
            }
            for (Targets.Check c : t.checks()) {
                lines.add(String.format(
                                Locale.ROOT,
                                "   %-" + name + "s  %" + shown + "s  %-" + bound + "s  %s",
                                c.name(),
                                c.shown(),
                                c.bound(),
                                c.verdict() == Targets.Verdict.REPORTED
                                        ? ""
                                        : verdict(c.verdict()).toLowerCase(Locale.ROOT))
                        .stripTrailing());
            }
        }
        return lines;
    }

    static String verdict(Targets.Verdict verdict) {
        return switch (verdict) {
            case PASS -> "PASS";
            case FAIL -> "FAIL";
            case NOT_MEASURED -> "NOT MEASURED";
            case REPORTED -> "REPORTED";
        };
    }

    /** What the table's last column says about a row. */
    static String notes(CaseResult r) {
        if (r.skipped() != null) {
            return r.skipped();
        }
        if (r.error() != null) {
            return "ERROR: " + r.error();
        }
        List<String> notes = new ArrayList<>();
        Map<String, Object> x = r.extra();
        if (x.containsKey("pipeline_depth")) {
            notes.add("SET pipelined " + x.get("pipeline_depth") + " deep, " + rate(r.number("set_per_s_per_node"))
                    + " per node; requests/s, not cycles");
        }
        if (r.library().equals(Plan.PING) && r.caseId().equals(Plan.SLOW)) {
            notes.add("one PING through the proxy: the round trip; requests/s");
        }
        if (x.containsKey("calls")) {
            notes.add(String.valueOf(x.get("calls")));
        }
        if (x.containsKey("hand_offs")) {
            notes.add(String.valueOf(x.get("waiting")));
            if (x.containsKey("total_ms")) {
                notes.add(count(r.threads()) + " threads queued in " + count(Math.round(r.number("queued_ms")))
                        + " ms, handed on one by one in " + count(Math.round(r.number("total_ms"))) + " ms; max "
                        + micros(r.number("hand_off_max_us")) + " µs");
            } else {
                notes.add(count(r.number("hand_offs").longValue()) + " hand-offs, released " + x.get("hold_ms")
                        + " ms after the waiter's call; max " + micros(r.number("hand_off_max_us")) + " µs");
            }
            if (r.number("overlaps") > 0) {
                notes.add(count(r.number("overlaps").longValue()) + " granted before the release");
            }
        }
        if (x.containsKey("slow_node")) {
            notes.add("node " + x.get("slow_node") + " +" + SlowNetwork.SLOW_NODE_EXTRA.toMillis() + " ms each way");
        }
        if (x.containsKey("resources") && r.threads() > 1) {
            notes.add(x.get("resources") + " resources");
        }
        if (x.containsKey("acquire_p99_us")) {
            notes.add("acquire p50 " + micros(r.number("acquire_p50_us")) + " µs, p99 "
                    + micros(r.number("acquire_p99_us")) + " µs");
        }
        if (x.containsKey("fairness")) {
            notes.add(String.format(Locale.ROOT, "fairness %.2f", r.number("fairness")));
            notes.add("overlaps " + count(r.number("overlaps").longValue()));
        }
        if (x.containsKey("split_vote_rate")) {
            notes.add(String.format(
                    Locale.ROOT,
                    "split votes %.1f%% of %s failed attempts",
                    100 * r.number("split_vote_rate"),
                    count(r.number("failed_attempts").longValue())));
        } else if (x.containsKey("failed_attempts")) {
            notes.add(count(r.number("failed_attempts").longValue()) + " failed attempts");
        }
        if (x.containsKey("frozen_node")) {
            notes.add("node " + x.get("frozen_node") + " frozen");
        }
        if (x.containsKey("connections_per_node")) {
            notes.add(count(r.number("failures").longValue()) + " not acquired; one client, "
                    + count(r.number("connections_per_node").longValue()) + " connections per node");
        } else if (r.number("failures") != null && r.number("failures") > 0) {
            notes.add(count(r.number("failures").longValue()) + " cycles not acquired");
        }
        if (r.number("errors") != null && r.number("errors") > 0) {
            notes.add(count(r.number("errors").longValue()) + " errors (" + x.get("first_error") + ")");
        }
        if (x.containsKey("iteration_cv_pct") && r.number("samples") != null && r.number("samples") >= 30) {
            notes.add(String.format(Locale.ROOT, "iterations ±%.0f%%", r.number("iteration_cv_pct")));
        }
        if (r.number("samples") != null && r.number("samples") < 30) {
            notes.add(count(r.number("samples").longValue()) + " cycle" + (r.number("samples") == 1 ? "" : "s")
                    + " measured");
        }
        return String.join("; ", notes);
    }

    /** A rate: whole numbers with separators from 100 on, else 3 significant digits ({@code 9.41}, {@code 0.112}). */
    static String rate(double perSecond) {
        if (perSecond >= 100) {
            return String.format(Locale.ROOT, "%,.0f", perSecond);
        }
        if (perSecond >= 10) {
            return String.format(Locale.ROOT, "%.1f", perSecond);
        }
        if (perSecond >= 1) {
            return String.format(Locale.ROOT, "%.2f", perSecond);
        }
        return String.format(Locale.ROOT, "%.3f", perSecond);
    }

    /** Microseconds: whole numbers with separators from 10 on, else one decimal. */
    static String micros(double micros) {
        return micros >= 10 ? String.format(Locale.ROOT, "%,.0f", micros) : String.format(Locale.ROOT, "%.1f", micros);
    }

    /** A count with thousands separators. */
    static String count(long count) {
        return String.format(Locale.ROOT, "%,d", count);
    }
}
