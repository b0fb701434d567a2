package io.quorumlock.cli;

import io.quorumlock.cli.check.CheckCommand;
import io.quorumlock.cli.run.RunCommand;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The {@code quorumlock} command line that users deploy: {@code run} and {@code check}. Each subcommand
 * is a class of its own, listed in {@link Command#subcommands()} below. The lab's command line
 * ({@code quorumlock-lab}: demo, nodes, torture) adds its commands to these with the same error handling
 * ({@link #handleErrors}).
 *
 * <p>Exit codes: 0 when the command succeeded, 1 when it ran and failed, 2 for a usage error.
 */
@Command(
        name = "quorumlock",
        scope = ScopeType.INHERIT, // every subcommand gets --help and --version too
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description =
                "Distributed locks over Redis (a single node or Redlock), ZooKeeper, etcd or a database (PostgreSQL,"
                        + " MariaDB), and the evidence of what they guarantee.",
        subcommands = {RunCommand.class, CheckCommand.class, HelpCommand.class})
public final class Main implements Callable<Integer> {

    /** The exit code of a command that ran and failed. */
    public static final int FAILURE = 1;

    @Spec
    private CommandSpec spec;

    /** Runs the command line and exits with its exit code. */
    public static void main(String[] args) {
        Verbosity.quietJavaLogging();
        System.exit(commandLine().execute(args));
    }

    /** A fresh command line with the error handling of the CLI; for {@link #main} and for tests. */
    public static CommandLine commandLine() {
        return handleErrors(new CommandLine(new Main()));
    }

    /**
     * {@code commandLine} with the error handling of the CLI: a usage error in two short lines and exit
     * code 2, a failure in one line and exit code 1.
     */
    public static CommandLine handleErrors(CommandLine commandLine) {
        return commandLine
                .setExecutionExceptionHandler(Main::reportFailure)
                .setParameterExceptionHandler(Main::reportUsageError);
    }

    /** Without a subcommand there is nothing to do: a usage error. */
    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "Missing command: try 'quorumlock --help'");
    }

    /**
     * A usage error: the message on one line, then where the help is, rather than the whole help
     * (which buries the message). Exit code 2.
     */
    private static int reportUsageError(ParameterException error, String[] args) {
        CommandLine command = error.getCommandLine();
        String message = Text.plain(String.valueOf(error.getMessage()));
        if (error instanceof UnmatchedArgumentException unmatched
                && !unmatched.getSuggestions().isEmpty()) {
            message += " (did you mean " + String.join(" or ", unmatched.getSuggestions()) + "?)";
        }
        PrintWriter err = command.getErr();
        err.println(command.getColorScheme().errorText(message));
        err.println("see '" + command.getCommandSpec().qualifiedName() + " --help'");
        err.flush();
        return command.getCommandSpec().exitCodeOnInvalidInput();
    }

    /**
     * One line for a failure, in words rather than a stack trace or an exception's class name; -v
     * shows where it came from.
     */
    private static int reportFailure(Exception failure, CommandLine command, ParseResult parsed) {
        String message = failure.getMessage() == null || failure.getMessage().isBlank()
                ? "failed unexpectedly; run it again with -v for the details"
                : Text.plain(failure.getMessage());
        command.getErr()
                .println(command.getColorScheme()
                        .errorText(command.getCommandSpec().qualifiedName() + ": " + message));
        if (Verbosity.isVerbose()) {
            failure.printStackTrace(command.getErr());
        }
        return FAILURE;
    }

    /** Reads the version Maven wrote into {@code version.properties}. */
    public static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties properties = new Properties();
            try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    properties.load(in);
                }
            }
            return new String[] {
                "quorumlock " + properties.getProperty("version", "(unknown version)"),
                "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ")"
            };
        }
    }
}
