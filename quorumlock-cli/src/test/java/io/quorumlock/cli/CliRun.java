package io.quorumlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;
import picocli.CommandLine.Help;

/**
 * One in-process run of the command line, with what it printed; the lab's tests run its command line
 * with it too.
 *
 * @param exitCode what {@code main} would exit with
 * @param out what it printed to stdout
 * @param err what it printed to stderr
 * @param commandLine the command line, to reach the command objects afterwards
 */
public record CliRun(int exitCode, String out, String err, CommandLine commandLine) {

    /** Runs the command line as {@link Main#main} would, without colours and without exiting. */
    public static CliRun of(String... args) {
        return of(Main.commandLine(), args);
    }

    /** Runs {@code commandLine} as its {@code main} would, without colours and without exiting. */
    public static CliRun of(CommandLine commandLine, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        commandLine
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .setColorScheme(Help.defaultColorScheme(Help.Ansi.OFF));
        int exitCode = commandLine.execute(args);
        return new CliRun(exitCode, out.toString(), err.toString(), commandLine);
    }

    /**
     * Checks that this run was a usage error: exit code 2, nothing on stdout, and two lines on
     * stderr, {@code error} and one that matches {@code seeHelp} (where the help is).
     */
    public void assertUsageError(String error, String seeHelp) {
        assertThat(exitCode).isEqualTo(2);
        assertThat(err.lines().toList()).hasSize(2).first().isEqualTo(error);
        assertThat(err.lines().skip(1).findFirst())
                .hasValueSatisfying(line -> assertThat(line).matches(seeHelp));
        assertThat(out).isEmpty();
    }

    /** The first line printed to stderr. */
    public String firstErrorLine() {
        return err.lines().findFirst().orElse("");
    }
}
