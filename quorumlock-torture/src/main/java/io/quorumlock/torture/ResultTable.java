package io.quorumlock.torture;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** The torture result as lines a person reads at a glance: one row per strategy, then the evidence. */
public final class ResultTable {

    private static final String[] HEADERS = {
        "strategy", "ops", "ops/s", "acq p50", "acq p99", "overlaps", "lost upd", "stale acc", "stale rej", "verdict"
    };

    /** Evidence lines shown per strategy and kind of violation; the rest is in the history files. */
    private static final int EVIDENCE = 3;

    private ResultTable() {}

    /** The table, then the faults by kind, then the event pairs behind each violation. */
    public static List<String> lines(Torture.Result result) {
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADERS);
        for (Torture.Outcome o : result.answers()) {
            Verdict v = o.verdict();
            Report.Summary s = o.summary();
            rows.add(new String[] {
                o.strategy().label(),
                String.format(Locale.ROOT, "%,d", s.operations()),
                String.format(Locale.ROOT, "%.1f", s.opsPerSecond()),
                s.acquireP50Millis() > 0 ? String.format(Locale.ROOT, "%.1f ms", s.acquireP50Millis()) : "-",
                s.acquireP99Millis() > 0 ? String.format(Locale.ROOT, "%.0f ms", s.acquireP99Millis()) : "-",
                Integer.toString(v.overlaps().size()),
                Long.toString(v.lostUpdates()),
                Integer.toString(v.staleAccepted().size() + v.tokenViolations().size()),
                Long.toString(v.staleRejected()),
                verdict(o)
            });
        }
        List<String> lines = new ArrayList<>(align(rows));
        lines.add("");
        lines.add("faults injected:");
        for (Torture.Outcome o : result.answers()) {
            Map<String, Integer> faults = o.summary().faultsByKind();
            lines.add("  " + o.strategy().label() + ": "
                    + (faults.isEmpty()
                            ? "none"
                            : faults.entrySet().stream()
                                    .map(e -> e.getKey() + " " + e.getValue())
                                    .collect(Collectors.joining(", "))));
        }
        result.skipped().forEach((strategy, reason) -> lines.add("  " + strategy.label() + ": skipped, " + reason));
        for (Torture.Outcome o : result.answers()) {
            Verdict v = o.verdict();
            if (!o.violated() && v.overlaps().isEmpty()) {
                continue;
            }
            lines.add("");
            lines.add(o.strategy().label() + ":");
            overlapsByFault(o)
                    .forEach((fault, overlaps) -> lines.add("  " + overlaps.size()
                            + " overlapping pair(s) after " + fault + ", first: "
                            + holder(overlaps.get(0).first())
                            + " and " + holder(overlaps.get(0).second())
                            + (overlaps.stream().allMatch(Verdict.Overlap::serial)
                                    ? "; writes in order (each read the other's)"
                                    : "")));
            v.staleAccepted().stream()
                    .limit(EVIDENCE)
                    .forEach(stale -> lines.add("  stale write accepted: "
                            + stale.write().client() + " at "
                            + time(stale.write().wallMillis())
                            + " with token " + stale.write().fencingToken().orElse(0) + " after "
                            + stale.newer().client()
                            + "'s newer one"));
            v.tokenViolations().stream().limit(EVIDENCE).forEach(t -> lines.add("  token out of order: " + t));
            v.tornReads().stream()
                    .limit(EVIDENCE)
                    .forEach(read -> lines.add("  torn read: " + read.client() + " at " + time(read.wallMillis())
                            + " read " + read.read().orElse(0) + " then "
                            + read.written().orElse(0)
                            + " under one read lease"));
            if (v.lostUpdates() > 0) {
                lines.add("  lost updates: final value " + v.finalValue().orElse(0) + ", expected "
                        + v.expectedFinal().orElse(0) + " from " + v.writesAcknowledged()
                        + " acknowledged decrements: " + v.lostUpdates() + " lost");
            }
        }
        return lines;
    }

    /**
     * The overlaps grouped by the fault that started last before the second grant ("no fault" if
     * none), so that each fault's double grants show with their first event pair.
     */
    static Map<String, List<Verdict.Overlap>> overlapsByFault(Torture.Outcome outcome) {
        Map<String, List<Verdict.Overlap>> byFault = new LinkedHashMap<>();
        for (Verdict.Overlap overlap : outcome.verdict().overlaps()) {
            long at = overlap.second().startMillis();
            String fault = outcome.faults().stream()
                    .filter(f -> f.wallMillis() <= at)
                    .reduce((first, second) -> second)
                    .map(f -> f.label() + " (" + time(f.wallMillis()) + ")")
                    .orElse("no fault");
            byFault.computeIfAbsent(fault, k -> new ArrayList<>()).add(overlap);
        }
        return byFault;
    }

    private static String verdict(Torture.Outcome o) {
        if (!o.violated()) {
            return "ok";
        }
        if (o.strategy().claimsCorrectness()) {
            return "VIOLATED";
        }
        return o.strategy().tokens() ? "violated (no fence)" : "violated (efficiency lock)";
    }

    private static String holder(Interval interval) {
        Event write = interval.acceptedWrites().get(0);
        return interval.client() + " (granted " + time(interval.startMillis()) + ", wrote "
                + write.read().orElse(0) + " -> " + write.written().orElse(0) + " at "
                + time(write.wallMillis()) + ")";
    }

    /** The wall time of day, as in the history files' wall times. */
    private static String time(long wallMillis) {
        return String.format(Locale.ROOT, "%tT.%03d", wallMillis, wallMillis % 1000);
    }

    private static List<String> align(List<String[]> rows) {
        int[] widths = new int[HEADERS.length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        List<String> lines = new ArrayList<>();
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                String cell = row[i];
                boolean left = i == 0 || i == row.length - 1;
                line.append(
                        left
                                ? String.format("%-" + widths[i] + "s", cell)
                                : String.format("%" + widths[i] + "s", cell));
                if (i < row.length - 1) {
                    line.append("  ");
                }
            }
            lines.add(line.toString().stripTrailing());
        }
        return lines;
    }
}
