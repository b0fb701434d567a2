package io.quorumlock.lab;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * A result table for a person to read at a glance: labels on the left, values right-aligned in
 * one column, an optional note after the value.
 *
 * <pre>
 * clients                 8
 * units sold          2,000
 * oversold                0   ok
 * </pre>
 */
public final class Table {

    private record Row(String label, String value, String note) {}

    private final List<Row> rows = new ArrayList<>();

    /** Adds a row without a note. */
    public Table row(String label, Object value) {
        return row(label, value, "");
    }

    /** Adds a row; an empty note leaves nothing after the value. */
    public Table row(String label, Object value, String note) {
        rows.add(new Row(label, String.valueOf(value), note == null ? "" : note));
        return this;
    }

    /** The rows as lines, aligned. */
    public List<String> lines() {
        int labels = rows.stream().mapToInt(r -> r.label().length()).max().orElse(0);
        int values = rows.stream().mapToInt(r -> r.value().length()).max().orElse(0);
        List<String> lines = new ArrayList<>(rows.size());
        for (Row row : rows) {
            String line = String.format("%-" + labels + "s  %" + values + "s", row.label(), row.value());
            lines.add(row.note().isEmpty() ? line : line + "   " + row.note());
        }
        return lines;
    }

    /** Prints the lines, one {@code println} each. */
    public void printTo(PrintWriter out) {
        lines().forEach(out::println);
        out.flush();
    }
}
