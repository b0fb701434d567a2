package io.quorumlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class MainTest {

    static Stream<Arguments> badOptions() {
        return Stream.of(
                Arguments.of(new String[] {"xyzzy"}, "Unmatched argument at index 0: 'xyzzy'"),
                Arguments.of(
                        new String[] {"check", "--zookeeper", "zk1:2181"},
                        "check inspects Redis nodes or a database, not --zookeeper: name them with --redis"
                                + " URI[,URI...] or --jdbc JDBC_URL (or in the config file)"),
                Arguments.of(
                        new String[] {"check", "--etcd", "http://127.0.0.1:2379"},
                        "check inspects Redis nodes or a database, not --etcd: name them with --redis"
                                + " URI[,URI...] or --jdbc JDBC_URL (or in the config file)"),
                Arguments.of(
                        new String[] {"check", "--redis", "redis://127.0.0.1:1,redis://127.0.0.1:1"},
                        "node 127.0.0.1:1 is listed twice (redis://127.0.0.1:1 and redis://127.0.0.1:1): each Redis"
                                + " server may vote only once; list independent servers"),
                Arguments.of(new String[] {}, "Missing command: try 'quorumlock --help'"));
    }

    /** The error of each command, and the help it points to. */
    static Stream<Arguments> usageErrors() {
        return Stream.of(
                Arguments.of(
                        new String[] {"run", "--redis", "redis://127.0.0.1:1", "--resource", "job", "--ttl", "soon"},
                        "Invalid value for option '--ttl': 'soon' is not a duration: use a number and a unit, such as"
                                + " 500ms, 10s, 2m or 1h",
                        "see 'quorumlock run --help'"),
                Arguments.of(
                        new String[] {"run", "--ttll", "3s"},
                        "Unknown option: '--ttll' (did you mean --ttl?)",
                        "see 'quorumlock run --help'"),
                Arguments.of(
                        new String[] {"check", "--redis", "redis://127.0.0.1:1", "--bogus"},
                        "Unknown option: '--bogus'",
                        "see 'quorumlock check --help'"),
                Arguments.of(
                        new String[] {"chek"},
                        "Unmatched argument at index 0: 'chek' (did you mean check or help?)",
                        "see 'quorumlock --help'"));
    }

    @ParameterizedTest
    @MethodSource("badOptions")
    void aBadOptionGivesOneLineNamingItThenWhereTheHelpIsAndExitCode2(String[] args, String error) {
        CliRun.of(args).assertUsageError(error, "see 'quorumlock( \\w+)? --help'");
    }

    @ParameterizedTest
    @MethodSource("usageErrors")
    void aUsageErrorIsTwoShortLinesTheMessageAndTheCommandsHelp(String[] args, String error, String seeHelp) {
        CliRun.of(args).assertUsageError(error, Pattern.quote(seeHelp));
    }

    @Test
    void versionNamesTheProjectVersion() {
        CliRun run = CliRun.of("--version");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).startsWith("quorumlock ").doesNotContain("${").doesNotContain("unknown version");
    }

    @Test
    void helpListsTheCommands() {
        CliRun run = CliRun.of("--help");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("Usage: quorumlock").containsPattern("(?m)^\\s+run\\s");
        assertThat(run.out().replaceAll("\\s+", " "))
                .contains("Redis (a single node or Redlock), ZooKeeper, etcd or a database (PostgreSQL, MariaDB)");
    }

    @Test
    void helpGivesEverySubcommandAOneLineSummary() {
        CliRun run = CliRun.of("--help");

        List<String> names = List.copyOf(run.commandLine().getSubcommands().keySet());
        assertThat(names).containsExactly("run", "check", "help");
        for (String name : names) {
            assertThat(run.out()).as("a summary beside " + name).containsPattern("(?m)^  " + name + "\\s+[A-Z]\\w+ ");
        }
    }
}
