package io.quorumlock.lab;

import io.quorumlock.testkit.ServerWait;
import java.io.PrintWriter;

/**
 * Progress for a command that runs a while. On a terminal, a single status line that rewrites
 * itself ({@code \r}) and steps aside for the lines printed with {@link #println}. When the
 * output is piped or redirected, the status is dropped and only those lines are printed, so a log
 * or a script gets plain lines.
 *
 * <p>As a {@link ServerWait.Listener}, it shows what the servers of the test kit wait for while they
 * start: the wait as the status, a slow one and its end as lines.
 */
public final class ProgressLine implements ServerWait.Listener {

    private final PrintWriter out;
    private final boolean live;
    private int shown; // length of the status on the screen, 0 when none

    /**
     * @param out where to print
     * @param live whether to show the self-updating status line (only on a terminal)
     */
    public ProgressLine(PrintWriter out, boolean live) {
        this.out = out;
        this.live = live;
    }

    /** A progress line that is live when this JVM has a console, that is, stdout is a terminal. */
    public static ProgressLine forConsole(PrintWriter out) {
        return new ProgressLine(out, System.console() != null);
    }

    /** Replaces the status line; does nothing when not live. */
    @Override
    public synchronized void status(String text) {
        if (live) {
            out.print("\r" + text + " ".repeat(Math.max(0, shown - text.length())));
            out.flush();
            shown = text.length();
        }
    }

    /** Prints a line that stays, above the status line. */
    public synchronized void println(String line) {
        clear();
        out.println(line);
        out.flush();
    }

    /** Prints a line that stays: as {@link #println}. */
    @Override
    public void line(String text) {
        println(text);
    }

    /** Removes the status line from the screen. */
    public synchronized void clear() {
        if (shown > 0) {
            out.print("\r" + " ".repeat(shown) + "\r");
            out.flush();
            shown = 0;
        }
    }
}
