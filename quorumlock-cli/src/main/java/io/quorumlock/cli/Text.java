package io.quorumlock.cli;

import java.util.ArrayList;
import java.util.List;

/** Long sentences for the terminal: wrapped at word boundaries, so that a table above them stays narrow. */
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
}
