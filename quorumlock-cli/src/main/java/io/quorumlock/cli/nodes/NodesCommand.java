package io.quorumlock.cli.nodes;

import io.quorumlock.cli.Verbosity;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code quorumlock nodes}: local Redis nodes for development, from the test kit, in the
 * foreground until Ctrl-C or SIGTERM; their URIs one per line, then a {@code --redis} line to
 * paste, then {@code stopped N nodes} once they are gone.
 */
@Command(
        name = "nodes",
        sortOptions = false,
        description = {
            "Starts local Redis nodes for development and runs until Ctrl-C (or SIGTERM), then stops them.",
            "",
            "Independent masters on free ports of 127.0.0.1, each in a temporary directory deleted when it stops;"
                    + " redis-server from QUORUMLOCK_REDIS_SERVER, else the PATH, else the binary shipped with"
                    + " quorumlock (Linux x86-64). Prints each node's URI on a line of its own, then a --redis line"
                    + " to paste into another command, such as quorumlock check. The nodes are fresh: a Redlock's"
                    + " restart guard does not count their votes until they have been up for the longest TTL it"
                    + " asks for.",
            "",
            "Exit code 0 once the nodes are stopped, 1 if they cannot be started, 2 for a usage error.",
            ""
        })
public final class NodesCommand implements Callable<Integer> {

    /** The most nodes: Redlock wants 3 or 5; more than 15 is no development setup. */
    static final int MAX_COUNT = 15;

    @Spec
    private CommandSpec spec;

    @Mixin
    private Verbosity verbosity;

    private int count;

    @Option(
            names = "--persistent",
            order = 2,
            description = "Run the nodes with appendonly yes and appendfsync always (default: no persistence).")
    private boolean persistent;

    @Option(
            names = "--count",
            paramLabel = "N",
            defaultValue = "5",
            order = 1,
            description = "How many nodes, 1 to " + MAX_COUNT + " (default: ${DEFAULT-VALUE}).")
    void setCount(int count) {
        if (count < 1 || count > MAX_COUNT) {
            throw new ParameterException(
                    spec.commandLine(), "--count must be between 1 and " + MAX_COUNT + ", was " + count);
        }
        this.count = count;
    }

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        // Taken over before the nodes start, so that a Ctrl-C during the start stops them as well.
        try (StopSignals signals = StopSignals.install()) {
            try (RedisServers servers = RedisServers.start(count, persistent)) {
                announce(out, servers);
                signals.await();
                if (System.console() != null) {
                    out.println(); // past the ^C the terminal echoed
                }
            }
            out.println("stopped " + count + (count == 1 ? " node" : " nodes"));
            out.flush();
        }
        return 0;
    }

    private void announce(PrintWriter out, RedisServers servers) {
        List<String> uris = servers.uris();
        RedisServer first = servers.get(0);
        out.println("Started " + count + " Redis " + (count == 1 ? "node" : "nodes") + " (redis-server "
                + first.version() + ", "
                + (persistent ? "appendonly yes, appendfsync always" : "no persistence: keys are lost on a restart")
                + "):");
        uris.forEach(out::println);
        out.println();
        String hint = count == 1
                ? "One node: a single-node lock, which has no restart guard."
                : "The nodes are fresh: Redlock's restart guard (on by default with several nodes) does not count"
                        + " a node's vote until it has been up for the longest TTL the client asks for, so no lock is"
                        + " granted in the first TTL; in tests, use Redlock.builder().restartGuard(false).";
        Text.wrap(hint, "", "", Text.WIDTH).forEach(out::println);
        out.println("Ctrl-C stops them. For another command:");
        out.println("--redis " + String.join(",", uris));
        out.flush();
    }
}
