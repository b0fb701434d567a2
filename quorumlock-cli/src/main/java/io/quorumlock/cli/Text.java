package io.quorumlock.cli;

import java.util.ArrayList;
import java.util.List;

/** Text for the terminal: long sentences wrapped at word boundaries, and tables in aligned columns. */
public final class Text {

    /** The longest line a sentence is wrapped to. */
    public static final int WIDTH = 100;

    private Text() {}

    /**
     * {@code text} in lines of at most {@code width} characters where its words allow, the first
     * line after {@code first}, the others after {@code rest}.
     */
    public static List<String> wrap(String text, String first, String rest, int width) {
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder(first);
        int start = first.length();
        for (String word : text.split(" ")) {
            if (line.length() > start && line.length() + 1 + word.length() > width) {
                lines.add(line.toString());
                line = new StringBuilder(rest);
                start = rest.length();
            }
            if (line.length() > start) {
                line.append(' ');
            }
            line.append(word);
        }
        lines.add(line.toString());
        return lines;
    }

    /**
     * {@code text} on one line and without the Java class names that some libraries' messages
     * quote, such as {@code io.grpc.StatusRuntimeException: }: what the commands print is for
     * people, the class names are in the stack trace that -v shows.
     */
    public static String plain(String text) {
        return text.replaceAll("\\s*\\R\\s*", " ")
                .replaceAll("\\b(?:[a-z][a-z0-9_]*\\.)+[A-Z][A-Za-z0-9_$]*(?:Exception|Error)\\b:?\\s*", "");
    }

    /** The rows with each column padded to its widest cell, left-aligned, two spaces apart. */
    public static List<String> table(List<String[]> rows) {
        int[] widths = new int[rows.get(0).length];
        rows.forEach(row -> {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        });
        return rows.stream()
                .map(row -> {
                    StringBuilder line = new StringBuilder();
                    for (int i = 0; i < row.length; i++) {
                        line.append(String.format("%-" + (widths[i] + 2) + "s", row[i]));
                    }
                    return line.toString().stripTrailing();
                })
                .toList();
    }
}
