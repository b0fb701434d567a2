package io.quorumlock.torture;

import io.quorumlock.torture.Event.Kind;
import io.quorumlock.torture.Event.Op;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Renders the torture report: one self-contained HTML page (no external assets) with a summary
 * table on top, one row per strategy, then one SVG timeline per strategy: a lane per client, its
 * lease intervals as bars (red where two clients overlapped while both wrote), faults as vertical
 * marks with their labels, and the tokens in each bar's {@code <title>} (shown on hover).
 *
 * <p>Under the table a legend says what each kind of fault in the runs does. Elements carry classes
 * a test can look for: {@code legend}, {@code lane}, {@code lease}, {@code overlap}, {@code fault},
 * {@code fault-label}.
 */
public final class Report {

    private static final int WIDTH = 960;
    private static final int LEFT = 90;
    private static final int RIGHT = 20;
    private static final int TOP = 30;
    private static final int LANE = 26;
    private static final int BAR = 14;
    // Fault labels go on rows above the lanes, a new row where a label would run into another; their
    // widths are guessed with a generous width of a character at font size 11.
    private static final int LABEL_ROW = 13;
    private static final int MAX_LABEL_ROWS = 4;
    private static final double CHAR_WIDTH = 6.6;
    private static final String OVERLAP_COLOUR = "#d62728";
    private static final String LEASE_COLOUR = "#4c78a8";
    private static final String FAULT_COLOUR = "#ff7f0e";

    private Report() {}

    /**
     * One strategy's run: its name and its (merged) history.
     *
     * @param strategy the strategy's name, as shown in the table
     * @param events the history
     */
    public record Run(String strategy, List<Event> events) {
        /** Copies the events. */
        public Run {
            Objects.requireNonNull(strategy, "strategy");
            events = List.copyOf(events);
        }
    }

    /**
     * The figures of one row of the summary table.
     *
     * @param operations acquire attempts (ACQUIRE invocations); write attempts where nothing is acquired
     * @param opsPerSecond operations per second of wall time, first event to last
     * @param acquireP50Millis median latency of successful acquires, from the clients' monotonic clocks
     * @param acquireP99Millis 99th percentile of the same
     * @param faultsByKind faults started, by kind (first word of the label)
     */
    public record Summary(
            long operations,
            double opsPerSecond,
            double acquireP50Millis,
            double acquireP99Millis,
            Map<String, Integer> faultsByKind) {}

    /** Computes the summary figures of a history. */
    public static Summary summarize(List<Event> events) {
        // A strategy without a lock (a version column) counts its write attempts instead.
        long acquires = events.stream()
                .filter(e -> e.op() == Op.ACQUIRE && e.kind() == Kind.INVOKE)
                .count();
        long operations = acquires > 0
                ? acquires
                : events.stream()
                        .filter(e -> e.op() == Op.WRITE && e.kind() == Kind.INVOKE)
                        .count();
        long first = events.stream().mapToLong(Event::wallMillis).min().orElse(0);
        long last = events.stream().mapToLong(Event::wallMillis).max().orElse(0);
        double seconds = (last - first) / 1000.0;
        List<Long> latencies = new ArrayList<>();
        for (Checker.Call call : Checker.calls(Checker.inWallOrder(events), Op.ACQUIRE)) {
            if (call.invoke() != null && call.completion().kind() == Kind.OK) {
                latencies.add(call.completion().monotonicNanos() - call.invoke().monotonicNanos());
            }
        }
        Collections.sort(latencies);
        Map<String, Integer> faults = new TreeMap<>();
        for (Event e : events) {
            if (e.kind() == Kind.FAULT && e.op() == Op.START) {
                faults.merge(e.faultKind(), 1, Integer::sum);
            }
        }
        return new Summary(
                operations,
                seconds > 0 ? operations / seconds : 0,
                percentileMillis(latencies, 0.50),
                percentileMillis(latencies, 0.99),
                faults);
    }

    private static double percentileMillis(List<Long> sortedNanos, double p) {
        if (sortedNanos.isEmpty()) {
            return 0;
        }
        int index = (int) Math.ceil(p * sortedNanos.size()) - 1;
        return sortedNanos.get(Math.max(0, index)) / 1e6;
    }

    /** Renders the report and writes it to {@code file}. */
    public static void write(Path file, List<Run> runs) {
        try {
            Files.writeString(file, render(runs), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write report " + file, e);
        }
    }

    /** Renders the report as one HTML page. */
    public static String render(List<Run> runs) {
        StringBuilder html = new StringBuilder();
        html.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
                .append("<title>quorumlock torture report</title>\n<style>\n")
                .append("body{font-family:sans-serif;margin:2em}")
                .append("table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}")
                .append("th:first-child,td:first-child{text-align:left}.bad{color:")
                .append(OVERLAP_COLOUR)
                .append(";font-weight:bold}svg{border:1px solid #eee}")
                .append(".legend{display:grid;grid-template-columns:max-content auto;gap:2px 12px;font-size:small}")
                .append(".legend dt{color:")
                .append(FAULT_COLOUR)
                .append(";font-weight:bold}.legend dd{margin:0}\n</style>\n</head>\n<body>\n")
                .append("<h1>quorumlock torture report</h1>\n");
        List<Verdict> verdicts =
                runs.stream().map(r -> Checker.check(r.events())).toList();
        table(html, runs, verdicts);
        legend(html, runs);
        for (int i = 0; i < runs.size(); i++) {
            timeline(html, runs.get(i), verdicts.get(i));
        }
        return html.append("</body>\n</html>\n").toString();
    }

    private static void table(StringBuilder html, List<Run> runs, List<Verdict> verdicts) {
        html.append("<table class=\"summary\">\n<tr><th>strategy</th><th>operations</th><th>ops/s</th>")
                .append("<th>acquire p50 ms</th><th>acquire p99 ms</th><th>faults</th><th>overlaps</th>")
                .append("<th>lost updates</th><th>stale accepted</th><th>stale rejected</th>")
                .append("<th>token violations</th></tr>\n");
        for (int i = 0; i < runs.size(); i++) {
            Summary s = summarize(runs.get(i).events());
            Verdict v = verdicts.get(i);
            String faults = s.faultsByKind().entrySet().stream()
                    .map(f -> f.getKey() + " " + f.getValue())
                    .collect(Collectors.joining(", "));
            html.append("<tr class=\"strategy\"><td>")
                    .append(escape(runs.get(i).strategy()))
                    .append("</td><td>")
                    .append(s.operations())
                    .append("</td><td>")
                    .append(String.format(Locale.ROOT, "%.1f", s.opsPerSecond()))
                    .append("</td><td>")
                    .append(String.format(Locale.ROOT, "%.2f", s.acquireP50Millis()))
                    .append("</td><td>")
                    .append(String.format(Locale.ROOT, "%.2f", s.acquireP99Millis()))
                    .append("</td><td>")
                    .append(faults.isEmpty() ? "none" : escape(faults))
                    .append("</td>");
            cell(html, v.overlaps().size());
            cell(html, v.lostUpdates());
            cell(html, v.staleAccepted().size());
            html.append("<td>").append(v.staleRejected()).append("</td>");
            cell(html, v.tokenViolations().size());
            html.append("</tr>\n");
        }
        html.append("</table>\n");
    }

    /** What each kind of fault in the runs does, in the order of {@link FaultKind}. */
    private static void legend(StringBuilder html, List<Run> runs) {
        Set<FaultKind> kinds = new TreeSet<>();
        for (Run run : runs) {
            for (Event e : run.events()) {
                if (e.kind() == Kind.FAULT && e.op() == Op.START) {
                    FaultKind.byOption(e.faultKind()).ifPresent(kinds::add);
                }
            }
        }
        if (kinds.isEmpty()) {
            return;
        }
        html.append("<dl class=\"legend\">\n");
        for (FaultKind kind : kinds) {
            html.append("<dt>")
                    .append(escape(kind.option()))
                    .append("</dt><dd>")
                    .append(escape(kind.description()))
                    .append("</dd>\n");
        }
        html.append("</dl>\n");
    }

    private static void cell(StringBuilder html, long violations) {
        html.append(violations > 0 ? "<td class=\"bad\">" : "<td>")
                .append(violations)
                .append("</td>");
    }

    private static void timeline(StringBuilder html, Run run, Verdict verdict) {
        List<Event> events = run.events();
        List<Interval> intervals = Checker.intervals(events);
        Set<Interval> overlapping = new HashSet<>();
        for (Verdict.Overlap o : verdict.overlaps()) {
            overlapping.add(o.first());
            overlapping.add(o.second());
        }
        Set<String> clients = new TreeSet<>();
        for (Event e : events) {
            if (e.kind() != Kind.FAULT && e.kind() != Kind.INITIAL && e.kind() != Kind.FINAL) {
                clients.add(e.client());
            }
        }
        List<String> lanes = new ArrayList<>(clients);
        long t0 = events.stream().mapToLong(Event::wallMillis).min().orElse(0);
        long t1 = events.stream().mapToLong(Event::wallMillis).max().orElse(0);
        double scale = (WIDTH - LEFT - RIGHT) / (double) Math.max(1, t1 - t0);
        Map<Event, FaultLabel> labels = faultLabels(events, t0, scale);
        int rows = labels.values().stream().mapToInt(FaultLabel::row).max().orElse(0) + 1;
        int top = TOP + (rows - 1) * LABEL_ROW;
        int height = top + lanes.size() * LANE + 10;

        html.append("<h2>")
                .append(escape(run.strategy()))
                .append("</h2>\n<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"")
                .append(WIDTH)
                .append("\" height=\"")
                .append(height)
                .append("\" font-size=\"11\">\n");
        for (int i = 0; i < lanes.size(); i++) {
            int y = top + i * LANE;
            html.append(String.format(
                    Locale.ROOT,
                    "<g class=\"lane\" data-client=\"%s\"><text x=\"4\" y=\"%d\">%s</text>"
                            + "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/></g>%n",
                    escape(lanes.get(i)),
                    y + LANE / 2 + 4,
                    escape(lanes.get(i)),
                    LEFT,
                    y + LANE / 2,
                    WIDTH - RIGHT,
                    y + LANE / 2));
        }
        for (Interval interval : intervals) {
            int lane = lanes.indexOf(interval.client());
            double x = LEFT + (interval.startMillis() - t0) * scale;
            double w = Math.max(1, (interval.endMillis() - interval.startMillis()) * scale);
            boolean red = overlapping.contains(interval);
            html.append(String.format(
                    Locale.ROOT,
                    "<rect class=\"%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
                            + "<title>%s</title></rect>%n",
                    red ? "lease overlap" : "lease",
                    x,
                    top + lane * LANE + (LANE - BAR) / 2,
                    w,
                    BAR,
                    red ? OVERLAP_COLOUR : LEASE_COLOUR,
                    escape(describe(interval, t0))));
        }
        for (Event e : events) {
            if (e.kind() != Kind.FAULT) {
                continue;
            }
            double x = LEFT + (e.wallMillis() - t0) * scale;
            boolean start = e.op() == Op.START;
            html.append(String.format(
                    Locale.ROOT,
                    "<line class=\"fault fault-%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"%s>"
                            + "<title>%s</title></line>%n",
                    start ? "start" : "end",
                    x,
                    top - 12,
                    x,
                    height - 6,
                    FAULT_COLOUR,
                    start ? "" : " stroke-dasharray=\"4 3\"",
                    escape((start ? "" : "end of ") + e.label() + " at " + (e.wallMillis() - t0) + " ms")));
            FaultLabel label = labels.get(e);
            if (label != null) {
                html.append(String.format(
                        Locale.ROOT,
                        "<text class=\"fault-label\" x=\"%.1f\" y=\"%d\" fill=\"%s\"%s>%s</text>%n",
                        label.leftOfTheMark() ? x - 2 : x + 2,
                        top - 16 - label.row() * LABEL_ROW,
                        FAULT_COLOUR,
                        label.leftOfTheMark() ? " text-anchor=\"end\"" : "",
                        escape(e.label())));
            }
        }
        html.append("</svg>\n");
        if (!verdict.overlaps().isEmpty()) {
            html.append("<details class=\"evidence\"><summary>")
                    .append(verdict.overlaps().size())
                    .append(" overlapping pairs</summary><ul>\n");
            verdict.overlaps().stream()
                    .limit(50)
                    .forEach(o ->
                            html.append("<li>").append(escape(o.toString())).append("</li>\n"));
            html.append("</ul></details>\n");
        }
    }

    /** Where a fault's label goes: its row, and whether it ends at the mark (near the right edge). */
    private record FaultLabel(int row, boolean leftOfTheMark) {}

    /**
     * Places the labels of the faults' starts, in wall order, each on the lowest row where it runs
     * into no other label; a label for which there is no row left is not shown (the mark's title
     * still names the fault).
     */
    private static Map<Event, FaultLabel> faultLabels(List<Event> events, long t0, double scale) {
        Map<Event, FaultLabel> labels = new IdentityHashMap<>();
        double[] rowEnds = new double[MAX_LABEL_ROWS];
        Arrays.fill(rowEnds, Double.NEGATIVE_INFINITY);
        List<Event> starts = events.stream()
                .filter(e -> e.kind() == Kind.FAULT && e.op() == Op.START)
                .sorted(Comparator.comparingLong(Event::wallMillis))
                .toList();
        for (Event e : starts) {
            double x = LEFT + (e.wallMillis() - t0) * scale;
            double width = e.label().length() * CHAR_WIDTH;
            boolean leftOfTheMark = x + 2 + width > WIDTH;
            double from = leftOfTheMark ? x - 2 - width : x + 2;
            for (int row = 0; row < MAX_LABEL_ROWS; row++) {
                if (rowEnds[row] + 4 <= from) {
                    rowEnds[row] = from + width;
                    labels.put(e, new FaultLabel(row, leftOfTheMark));
                    break;
                }
            }
        }
        return labels;
    }

    private static String describe(Interval interval, long t0) {
        Event grant = interval.grant();
        StringBuilder s = new StringBuilder(interval.client());
        grant.fencingToken().ifPresent(t -> s.append(" fencing token ").append(t));
        if (!grant.leaseToken().isEmpty()) {
            s.append(" token ").append(grant.leaseToken());
        }
        if (grant.validityMillis() > 0) {
            s.append(", validity ").append(grant.validityMillis()).append(" ms");
        }
        s.append(", held ")
                .append(interval.startMillis() - t0)
                .append("-")
                .append(interval.endMillis() - t0)
                .append(" ms")
                .append(interval.end().isPresent() ? "" : " (never released)")
                .append(", ")
                .append(interval.acceptedWrites().size())
                .append(" writes accepted");
        return s.toString();
    }

    static String escape(String text) {
        return text.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("\"", "&quot;");
    }
}
