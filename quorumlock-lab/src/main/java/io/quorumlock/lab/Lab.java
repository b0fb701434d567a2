package io.quorumlock.lab;

import io.quorumlock.cli.Main;
import io.quorumlock.cli.check.CheckCommand;
import io.quorumlock.cli.run.RunCommand;
import io.quorumlock.lab.demo.DemoCommand;
import io.quorumlock.lab.nodes.NodesCommand;
import io.quorumlock.lab.torture.TortureCommand;
import io.quorumlock.testkit.TestTime;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * The lab's {@code quorumlock} command line: the deployed commands ({@code run}, {@code check}) and the
 * ones that start servers on this machine to show what the locks guarantee ({@code nodes}, {@code demo},
 * {@code torture}). Same options, messages and exit codes as {@link Main}.
 */
@Command(
        name = "quorumlock",
        scope = ScopeType.INHERIT,
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description =
                "Distributed locks over Redis (a single node or Redlock), ZooKeeper and etcd, and the evidence of what they"
                        + " guarantee.",
        subcommands = {
            RunCommand.class,
            CheckCommand.class,
            NodesCommand.class,
            DemoCommand.class,
            TortureCommand.class,
            HelpCommand.class
        })
public final class Lab implements Callable<Integer> {

    /**
     * How much longer than in tests the lab waits for the servers it starts, unless {@value
     * TestTime#TIME_SCALE_PROPERTY} is set: a demo on a busy machine should be slow, not fail.
     */
    static final String TIME_SCALE = "3";

    @Spec
    private CommandSpec spec;

    /** Runs the command line and exits with its exit code. */
    public static void main(String[] args) {
        if (System.getProperty(TestTime.TIME_SCALE_PROPERTY) == null) {
            System.setProperty(TestTime.TIME_SCALE_PROPERTY, TIME_SCALE);
        }
        System.exit(commandLine().execute(args));
    }

    /** A fresh command line with the error handling of the CLI; for {@link #main} and for tests. */
    public static CommandLine commandLine() {
        CommandLine commandLine = Main.handleErrors(new CommandLine(new Lab()));
        TortureCommand.describeFaultKinds(commandLine.getSubcommands().get("torture"));
        return commandLine;
    }

    /** Without a subcommand there is nothing to do: a usage error. */
    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "Missing command: try 'quorumlock demo'");
    }
}
