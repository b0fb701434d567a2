package io.quorumlock.bench;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The rows of both builds over the rounds of {@code bench --baseline}: read from each child's
 * {@code bench-results.json} (input from another build, read as untrusted: bounded, checked field by
 * field), then per row the medians of ops/s and allocation, the median of the rounds' new/old ratios
 * with their spread; as a table and as {@code bench-baseline.json}.
 */
final class BaselineReport {

    /** The most a results file may weigh: a full run's is a few dozen KiB. */
    static final long MAX_RESULTS_BYTES = 4L << 20;

    /** The longest text of another build's file shown as it is (an error, a name). */
    private static final int MAX_TEXT = 300;

    private static final String[] HEADER = {
        "case", "library", "new ops/s", "old ops/s", "new/old", "min-max", "new B/op", "old B/op", "new/old", "notes"
    };
    private static final boolean[] RIGHT = {false, false, true, true, true, true, true, true, true, false};

    /**
     * One row of one child's results.
     *
     * @param opsPerSecond its ops/s, or null
     * @param allocBytesPerOp its bytes allocated per operation, or null
     * @param skipped why it was skipped, or null
     * @param error why it failed, or null
     */
    record Measured(
            String caseId, String library, Double opsPerSecond, Double allocBytesPerOp, String skipped, String error) {}

    /** One row of the comparison: per round, each side's figures (null where not measured). */
    private static final class Row {
        final String caseId;
        final String library;
        final Double[][] ops;
        final Double[][] alloc;
        final boolean[][] seen;
        final List<String> notes = new ArrayList<>();

        Row(String caseId, String library, int rounds) {
            this.caseId = caseId;
            this.library = library;
            this.ops = new Double[2][rounds];
            this.alloc = new Double[2][rounds];
            this.seen = new boolean[2][rounds];
        }
    }

    private final int rounds;
    private final Map<String, Row> rows = new LinkedHashMap<>();
    private boolean failed;

    BaselineReport(int rounds) {
        this.rounds = rounds;
    }

    /**
     * The rows of a results file.
     *
     * @param whose whose file it is, for the messages ("the old build's, round 2")
     * @throws IllegalStateException when it is too large, not UTF-8, not JSON, or not a bench's results
     */
    static List<Measured> read(Path file, String whose) throws IOException {
        long size = Files.size(file);
        if (size > MAX_RESULTS_BYTES) {
            throw malformed(file, whose, size + " bytes, more than the " + MAX_RESULTS_BYTES + " a bench writes");
        }
        Object root;
        try {
            root = Json.read(Files.readString(file));
        } catch (CharacterCodingException e) {
            throw malformed(file, whose, "not UTF-8");
        } catch (IllegalArgumentException e) {
            throw malformed(file, whose, e.getMessage());
        }
        if (!(root instanceof Map<?, ?> map) || !(map.get("cases") instanceof List<?> cases)) {
            throw malformed(file, whose, "no array \"cases\"");
        }
        List<Measured> measured = new ArrayList<>();
        for (Object c : cases) {
            if (!(c instanceof Map<?, ?> fields)) {
                throw malformed(file, whose, "a case that is not an object");
            }
            measured.add(new Measured(
                    text(fields, "case", false, file, whose),
                    text(fields, "library", false, file, whose),
                    figure(fields, "ops_per_s", file, whose),
                    figure(fields, "alloc_bytes_per_op", file, whose),
                    text(fields, "skipped", true, file, whose),
                    text(fields, "error", true, file, whose)));
        }
        return measured;
    }

    /** Adds a side's rows of one round ({@code round} from 1). */
    void add(int round, boolean newSide, List<Measured> measured) {
        int side = newSide ? 0 : 1;
        String name = newSide ? "new" : "old";
        for (Measured m : measured) {
            Row row = rows.computeIfAbsent(
                    m.caseId() + " / " + m.library(), k -> new Row(m.caseId(), m.library(), rounds));
            row.seen[side][round - 1] = true;
            row.ops[side][round - 1] = m.opsPerSecond();
            row.alloc[side][round - 1] = m.allocBytesPerOp();
            if (m.error() != null) {
                failed = true;
                row.notes.add("ERROR " + name + " round " + round + ": " + m.error());
            } else if (m.skipped() != null && !row.notes.contains("skipped: " + m.skipped())) {
                row.notes.add("skipped: " + m.skipped());
            }
        }
    }

    /**
     * Whether every row was measured without an error in every round of each build that has it,
     * and at least one row by both.
     */
    boolean complete() {
        return !failed
                && rows.values().stream().allMatch(r -> absent(r, 0) % rounds == 0 && absent(r, 1) % rounds == 0)
                && rows.values().stream().anyMatch(r -> absent(r, 0) + absent(r, 1) == 0);
    }

    private int absent(Row r, int side) {
        int absent = 0;
        for (boolean seen : r.seen[side]) {
            absent += seen ? 0 : 1;
        }
        return absent;
    }

    /** The table: medians side by side, the ratio's median and spread, allocation and its ratio. */
    List<String> table() {
        List<String[]> lines = new ArrayList<>();
        lines.add(HEADER);
        for (Row r : rows.values()) {
            Figures f = figures(r);
            List<String> notes = new ArrayList<>(r.notes);
            notes.addAll(missing(r));
            lines.add(new String[] {
                r.caseId,
                r.library,
                f.newOps == null ? "-" : Report.rate(f.newOps),
                f.oldOps == null ? "-" : Report.rate(f.oldOps),
                ratio(f.ratio),
                f.ratio == null ? "-" : ratio(f.ratioMin) + "-" + ratio(f.ratioMax),
                f.newAlloc == null ? "-" : Report.count(Math.round(f.newAlloc)),
                f.oldAlloc == null ? "-" : Report.count(Math.round(f.oldAlloc)),
                ratio(f.allocRatio),
                String.join("; ", notes)
            });
        }
        return Report.aligned(lines, RIGHT);
    }

    /** The rows for {@code bench-baseline.json}. */
    List<Object> json() {
        List<Object> list = new ArrayList<>();
        for (Row r : rows.values()) {
            Figures f = figures(r);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("case", r.caseId);
            row.put("library", r.library);
            row.put("new_ops_per_s", f.newOps);
            row.put("old_ops_per_s", f.oldOps);
            row.put("ratio", f.ratio);
            row.put("ratio_min", f.ratioMin);
            row.put("ratio_max", f.ratioMax);
            row.put("new_alloc_bytes_per_op", f.newAlloc);
            row.put("old_alloc_bytes_per_op", f.oldAlloc);
            row.put("alloc_ratio", f.allocRatio);
            row.put("new_ops_per_s_rounds", Arrays.asList(r.ops[0]));
            row.put("old_ops_per_s_rounds", Arrays.asList(r.ops[1]));
            List<String> notes = new ArrayList<>(r.notes);
            notes.addAll(missing(r));
            if (!notes.isEmpty()) {
                row.put("notes", notes);
            }
            list.add(row);
        }
        return list;
    }

    private record Figures(
            Double newOps,
            Double oldOps,
            Double ratio,
            Double ratioMin,
            Double ratioMax,
            Double newAlloc,
            Double oldAlloc,
            Double allocRatio) {}

    private Figures figures(Row r) {
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            if (r.ops[0][i] != null && r.ops[1][i] != null && r.ops[1][i] > 0) {
                ratios.add(r.ops[0][i] / r.ops[1][i]);
            }
        }
        Double newAlloc = median(Arrays.asList(r.alloc[0]));
        Double oldAlloc = median(Arrays.asList(r.alloc[1]));
        return new Figures(
                median(Arrays.asList(r.ops[0])),
                median(Arrays.asList(r.ops[1])),
                median(ratios),
                ratios.stream().min(Double::compare).orElse(null),
                ratios.stream().max(Double::compare).orElse(null),
                newAlloc,
                oldAlloc,
                newAlloc == null || oldAlloc == null || oldAlloc <= 0 ? null : newAlloc / oldAlloc);
    }

    /** The notes of a row not measured on a side in every round. */
    private List<String> missing(Row r) {
        List<String> notes = new ArrayList<>();
        for (int side = 0; side < 2; side++) {
            int absent = absent(r, side);
            String name = side == 0 ? "new" : "old";
            if (absent == rounds) {
                notes.add("not in the " + name + " build");
            } else if (absent > 0) {
                notes.add("not in " + absent + " of the " + name + " build's rounds");
            }
        }
        return notes;
    }

    /** The median of the figures that are there, or null when none is. */
    static Double median(List<Double> figures) {
        List<Double> sorted = figures.stream().filter(Objects::nonNull).sorted().collect(Collectors.toList());
        if (sorted.isEmpty()) {
            return null;
        }
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
    }

    private static String ratio(Double ratio) {
        return ratio == null ? "-" : String.format(Locale.ROOT, "%.2f", ratio);
    }

    private static String text(Map<?, ?> fields, String name, boolean optional, Path file, String whose) {
        Object value = fields.get(name);
        if (value == null && optional) {
            return null;
        }
        if (!(value instanceof String s)) {
            throw malformed(file, whose, "a case whose \"" + name + "\" is not a string");
        }
        return shown(s);
    }

    private static Double figure(Map<?, ?> fields, String name, Path file, String whose) {
        Object value = fields.get(name);
        if (value == null) {
            return null;
        }
        if (!(value instanceof Double d) || d < 0 || d.isInfinite()) {
            throw malformed(file, whose, "a case whose \"" + name + "\" is not a number of at least 0");
        }
        return d;
    }

    /** Text of another build as it may be printed: no control characters (terminal escapes), bounded. */
    private static String shown(String text) {
        String printable = text.codePoints()
                .map(c -> Character.isISOControl(c) ? '?' : c)
                .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
                .toString();
        return printable.length() <= MAX_TEXT ? printable : printable.substring(0, MAX_TEXT) + "...";
    }

    private static IllegalStateException malformed(Path file, String whose, String why) {
        return new IllegalStateException(file + " (" + whose + "): not a bench's results: " + why);
    }
}
