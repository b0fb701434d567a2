package io.quorumlock.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The results as an SVG chart: one horizontal bar per library, grouped by case, on a logarithmic
 * axis of cycles per second (wins per second under contention), so that 0.1/s and 10,000/s both
 * read; each bar carries its value, quorumlock's in the accent colour.
 */
final class Chart {

    private static final Map<String, String> COLOURS = new LinkedHashMap<>();

    static {
        COLOURS.put(Plan.QUORUMLOCK, "#d9480f");
        COLOURS.put(Plan.RAW, "#495057");
        COLOURS.put(Plan.FANOUT, "#adb5bd");
        COLOURS.put(Plan.SEQUENTIAL, "#1c7ed6");
        COLOURS.put(Plan.REDISSON, "#37b24d");
        COLOURS.put(Plan.REDLOCK, "#7048e8");
        COLOURS.put(Plan.SHEDLOCK, "#f59f00");
        COLOURS.put(Plan.SPRING_INTEGRATION, "#0ca678");
        COLOURS.put(Plan.CURATOR, "#e64980");
        COLOURS.put(Plan.JETCD, "#4263eb");
    }

    private static final Map<String, String> CASE_TITLES = Map.ofEntries(
            Map.entry(Plan.SINGLE, "Single node, one thread"),
            Map.entry(Plan.FIVE, "5 nodes, one thread"),
            Map.entry(Plan.FROZEN, "5 nodes, one frozen (SIGSTOP), one thread"),
            Map.entry(Plan.CONTENTION, "Contention: 8 clients, one resource, 5 nodes (wins/s)"),
            Map.entry(Plan.TLS, "5 nodes over TLS, one thread"),
            Map.entry(Plan.SENTINEL, "A master behind Sentinel, with a replica, one thread"),
            Map.entry(Plan.CLUSTER, "A Redis Cluster, 3 masters with a replica each, one thread"),
            Map.entry(Plan.MANY, "Many callers: 64 threads, 64 resources, 5 nodes"),
            Map.entry(Plan.MANY_SHARED, "Many callers: 64 threads, 8 resources, 5 nodes (acquired cycles/s)"),
            Map.entry(Plan.SLOW, "Slow network: 5 nodes, 1 ms each way, one thread"),
            Map.entry(Plan.SLOW_NODE, "Slow network, one node +20 ms each way, one thread"),
            Map.entry(Plan.DB_CYCLE, "PostgreSQL: acquire + release, one thread, one shared pool"),
            Map.entry(Plan.ZK_CYCLE, "ZooKeeper, 3 servers: acquire + release, one thread"),
            Map.entry(Plan.ETCD_CYCLE, "etcd, 3 members: acquire + release, one thread"),
            Map.entry(Plan.SEMAPHORE, "A semaphore of 3 permits on one Redis node: a permit taken and given back"),
            Map.entry(Plan.ZK_SEMAPHORE, "A semaphore of 3 permits on one ZooKeeper server"));

    private static final int WIDTH = 960;
    private static final int LABEL = 190; // left column: library names
    private static final int PLOT = 600; // the bars
    private static final int BAR = 18;
    private static final int ROW = 24;
    private static final int GROUP_GAP = 30;
    private static final int TOP = 92;
    private static final int MIN_DECADE = -2; // 0.01 /s
    private static final int MAX_DECADE = 5; // 100,000 /s

    private Chart() {}

    static String svg(List<CaseResult> results, String subtitle) {
        Map<String, List<CaseResult>> groups = new LinkedHashMap<>();
        for (CaseResult r : results) {
            if (r.caseId().equals(Plan.CAPACITY) || r.library().equals(Plan.PING)) {
                continue; // requests per second, not cycles: in the table only
            }
            if (Plan.handOff(r.caseId())) {
                continue; // latencies, not cycles: in the table only
            }
            groups.computeIfAbsent(r.caseId(), k -> new ArrayList<>()).add(r);
        }
        int height = TOP + 20;
        for (List<CaseResult> group : groups.values()) {
            height += GROUP_GAP + group.size() * ROW;
        }
        height += 40;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                        + " font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\">%n",
                WIDTH,
                height,
                WIDTH,
                height));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>%n", WIDTH, height));
        svg.append("<text x=\"20\" y=\"30\" font-size=\"18\" font-weight=\"bold\">"
                + "quorumlock bench: lock+release cycles per second (log scale, higher is better)</text>\n");
        svg.append("<text x=\"20\" y=\"50\" fill=\"#555\">" + escape(subtitle) + "</text>\n");
        legend(svg, results);
        int axisTop = TOP;
        int axisBottom = height - 40;
        axis(svg, axisTop, axisBottom);
        int y = TOP + 20;
        for (Map.Entry<String, List<CaseResult>> group : groups.entrySet()) {
            y += GROUP_GAP;
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"20\" y=\"%d\" font-weight=\"bold\">%s</text>%n",
                    y - 8,
                    escape(CASE_TITLES.getOrDefault(group.getKey(), group.getKey()))));
            for (CaseResult r : group.getValue()) {
                bar(svg, r, y);
                y += ROW;
            }
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static void legend(StringBuilder svg, List<CaseResult> results) {
        Set<String> libraries = new LinkedHashSet<>();
        COLOURS.keySet().stream()
                .filter(l -> results.stream().anyMatch(r -> r.library().equals(l)))
                .forEach(libraries::add);
        int x = 20;
        for (String library : libraries) {
            svg.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%d\" y=\"62\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                            + "<text x=\"%d\" y=\"73\">%s</text>%n",
                    x,
                    COLOURS.get(library),
                    x + 17,
                    library));
            x += 30 + library.length() * 8;
        }
    }

    private static void axis(StringBuilder svg, int top, int bottom) {
        for (int decade = MIN_DECADE; decade <= MAX_DECADE; decade++) {
            double x = xOf(Math.pow(10, decade));
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#dee2e6\"/>%n",
                    x,
                    top,
                    x,
                    bottom));
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#868e96\" font-size=\"11\">%s</text>%n",
                    x,
                    bottom + 15,
                    tick(decade)));
        }
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#868e96\" font-size=\"11\">cycles/s</text>%n",
                LABEL + PLOT / 2,
                bottom + 30));
    }

    private static void bar(StringBuilder svg, CaseResult r, int y) {
        String colour = COLOURS.getOrDefault(r.library(), "#868e96");
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"end\"%s>%s</text>%n",
                LABEL - 10,
                y + BAR - 5,
                r.library().equals(Plan.QUORUMLOCK) ? " font-weight=\"bold\"" : "",
                escape(r.library())));
        if (r.opsPerSecond() == null || r.opsPerSecond() <= 0) {
            String why = r.skipped() != null ? r.skipped() : r.error() != null ? "error: " + r.error() : "not measured";
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" fill=\"#868e96\" font-style=\"italic\">%s</text>%n",
                    LABEL + 4,
                    y + BAR - 5,
                    escape(why.length() > 90 ? why.substring(0, 87) + "..." : why)));
            return;
        }
        double end = xOf(r.opsPerSecond());
        svg.append(String.format(
                Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s %s: %s /s</title></rect>%n",
                LABEL,
                y,
                Math.max(1, end - LABEL),
                BAR,
                colour,
                escape(r.caseId()),
                escape(r.library()),
                Report.rate(r.opsPerSecond())));
        String label = Report.rate(r.opsPerSecond()) + " /s";
        if (r.p50Micros() != null) {
            label += " \u00b7 p50 " + duration(r.p50Micros());
        }
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"%.1f\" y=\"%d\">%s</text>%n",
                Math.min(end, LABEL + PLOT) + 6,
                y + BAR - 5,
                escape(label)));
    }

    private static double xOf(double perSecond) {
        double decades = Math.log10(Math.max(perSecond, Math.pow(10, MIN_DECADE)));
        double clamped = Math.min(decades, MAX_DECADE);
        return LABEL + (clamped - MIN_DECADE) / (MAX_DECADE - MIN_DECADE) * PLOT;
    }

    private static String tick(int decade) {
        return switch (decade) {
            case -2 -> "0.01";
            case -1 -> "0.1";
            case 0 -> "1";
            case 1 -> "10";
            case 2 -> "100";
            case 3 -> "1k";
            case 4 -> "10k";
            default -> "100k";
        };
    }

    private static String duration(double micros) {
        if (micros >= 1_000_000) {
            return String.format(Locale.ROOT, "%.1f s", micros / 1e6);
        }
        if (micros >= 1_000) {
            return String.format(Locale.ROOT, "%.1f ms", micros / 1e3);
        }
        return String.format(Locale.ROOT, "%.0f µs", micros);
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("\"", "&quot;");
    }
}
