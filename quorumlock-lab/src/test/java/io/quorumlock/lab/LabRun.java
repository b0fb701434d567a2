package io.quorumlock.lab;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;
import picocli.CommandLine.Help;

/**
 * One in-process run of the lab's command line, with what it printed.
 *
 * @param exitCode what {@code main} would exit with
 * @param out what it printed to stdout
 * @param err what it printed to stderr
 * @param commandLine the command line, to reach the command objects afterwards
 */
public record LabRun(int exitCode, String out, String err, CommandLine commandLine) {

    /** Runs the command line as {@link Lab#main} would, without colours and without exiting. */
    public static LabRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = Lab.commandLine()
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .setColorScheme(Help.defaultColorScheme(Help.Ansi.OFF));
        int exitCode = commandLine.execute(args);
        return new LabRun(exitCode, out.toString(), err.toString(), commandLine);
    }

    /** The first line printed to stderr. */
    public String firstErrorLine() {
        return err.lines().findFirst().orElse("");
    }
}
