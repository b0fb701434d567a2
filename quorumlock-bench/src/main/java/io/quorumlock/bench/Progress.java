package io.quorumlock.bench;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * Progress of the run. On a terminal, one status line that rewrites itself ({@code \r}) and steps
 * aside for the lines printed with {@link #println}; piped or redirected, plain lines only: a line
 * when a step starts and when it ends, nothing in between.
 */
final class Progress {

    private final PrintWriter out;
    private final boolean live;
    private final long start = System.nanoTime();
    private int shown; // length of the status on the screen, 0 when none
    private String step = "";

    Progress(PrintWriter out, boolean live) {
        this.out = out;
        this.live = live;
    }

    /** Starts a step: on a terminal it becomes the status line, piped it is printed as a line. */
    synchronized void step(String text) {
        step = text;
        if (live) {
            status("");
        } else {
            out.println(elapsed() + "  " + text);
            out.flush();
        }
    }

    /** Shows a detail of the current step on the status line; nothing when not live. */
    synchronized void status(String detail) {
        if (live) {
            String text = elapsed() + "  " + step + (detail.isEmpty() ? "" : ": " + detail);
            out.print("\r" + text + " ".repeat(Math.max(0, shown - text.length())));
            out.flush();
            shown = text.length();
        }
    }

    /** Prints a line that stays, above the status line. */
    synchronized void println(String line) {
        clear();
        out.println(line);
        out.flush();
    }

    /** Removes the status line from the screen. */
    synchronized void clear() {
        if (shown > 0) {
            out.print("\r" + " ".repeat(shown) + "\r");
            out.flush();
            shown = 0;
        }
    }

    /** The time since the run started, as {@code m:ss}. */
    String elapsed() {
        long seconds = (System.nanoTime() - start) / 1_000_000_000L;
        return String.format(Locale.ROOT, "%d:%02d", seconds / 60, seconds % 60);
    }
}
