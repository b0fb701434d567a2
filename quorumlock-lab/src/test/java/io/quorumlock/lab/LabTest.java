package io.quorumlock.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.cli.CliRun;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The lab's command line: the usage errors of demo and nodes, and the help that lists every command. */
class LabTest {

    static Stream<Arguments> badOptions() {
        return Stream.of(
                Arguments.of(new String[] {"demo", "--clients", "0"}, "--clients must be between 1 and 64, was 0"),
                Arguments.of(new String[] {"demo", "--clients", "65"}, "--clients must be between 1 and 64, was 65"),
                Arguments.of(new String[] {"demo", "--stock", "0"}, "--stock must be at least 1, was 0"),
                Arguments.of(new String[] {"demo", "--duration", "-1s"}, "--duration must be positive, was -1.00 s"),
                Arguments.of(new String[] {"demo", "--duration=0ms"}, "--duration must be positive, was 0.0 ms"),
                Arguments.of(
                        new String[] {"demo", "--duration", "soon"},
                        "Invalid value for option '--duration': 'soon' is not a duration:"
                                + " use a number and a unit, such as 500ms, 10s, 2m or 1h"),
                Arguments.of(
                        new String[] {"demo", "--stock", "many"},
                        "Invalid value for option '--stock': 'many' is not an int"),
                Arguments.of(new String[] {"demo", "--bogus"}, "Unknown option: '--bogus'"),
                Arguments.of(new String[] {"xyzzy"}, "Unmatched argument at index 0: 'xyzzy'"),
                Arguments.of(new String[] {"nodes", "--count", "0"}, "--count must be between 1 and 15, was 0"),
                Arguments.of(new String[] {"nodes", "--count", "16"}, "--count must be between 1 and 15, was 16"),
                Arguments.of(new String[] {"nodes", "--zookeeper", "8"}, "--zookeeper must be between 1 and 7, was 8"),
                Arguments.of(new String[] {"nodes", "--etcd", "0"}, "--etcd must be between 1 and 7, was 0"),
                Arguments.of(
                        new String[] {"nodes", "--port", "65536"}, "--port must be between 1 and 65535, was 65536"),
                Arguments.of(
                        new String[] {"nodes", "--count", "3", "--port", "65534"},
                        "--port 65534 leaves no room for 3 nodes: the last port would be 65536, past 65535"),
                Arguments.of(
                        new String[] {"nodes", "--etcd", "1", "--port", "7001"},
                        "--port is for Redis nodes: add --count N"),
                Arguments.of(
                        new String[] {"nodes", "--postgres", "--persistent"},
                        "--persistent is for Redis nodes: add --count N"),
                Arguments.of(
                        new String[] {"nodes", "--count", "five"},
                        "Invalid value for option '--count': 'five' is not an int"),
                Arguments.of(new String[] {}, "Missing command: try 'quorumlock demo'"));
    }

    /** The error of each command, and the help it points to. */
    static Stream<Arguments> usageErrors() {
        return Stream.of(
                Arguments.of(
                        new String[] {"nodes", "--count", "0"},
                        "--count must be between 1 and 15, was 0",
                        "see 'quorumlock nodes --help'"),
                Arguments.of(
                        new String[] {"nods"},
                        "Unmatched argument at index 0: 'nods' (did you mean nodes?)",
                        "see 'quorumlock --help'"));
    }

    @ParameterizedTest
    @MethodSource("badOptions")
    void aBadOptionGivesOneLineNamingItThenWhereTheHelpIsAndExitCode2(String[] args, String error) {
        CliRun.of(Lab.commandLine(), args).assertUsageError(error, "see 'quorumlock( \\w+)? --help'");
    }

    @ParameterizedTest
    @MethodSource("usageErrors")
    void aUsageErrorIsTwoShortLinesTheMessageAndTheCommandsHelp(String[] args, String error, String seeHelp) {
        CliRun.of(Lab.commandLine(), args).assertUsageError(error, Pattern.quote(seeHelp));
    }

    @Test
    void helpListsTheCommands() {
        CliRun run = CliRun.of(Lab.commandLine(), "--help");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("Usage: quorumlock").containsPattern("(?m)^\\s+demo\\s");
    }

    @Test
    void helpGivesEverySubcommandAOneLineSummary() {
        CliRun run = CliRun.of(Lab.commandLine(), "--help");

        List<String> names = List.copyOf(run.commandLine().getSubcommands().keySet());
        assertThat(names).containsExactly("run", "check", "nodes", "demo", "torture", "help");
        for (String name : names) {
            assertThat(run.out()).as("a summary beside " + name).containsPattern("(?m)^  " + name + "\\s+[A-Z]\\w+ ");
        }
    }

    @Test
    void demoHelpShowsTheOptionsWithTheirDefaults() {
        CliRun run = CliRun.of(Lab.commandLine(), "demo", "--help");

        assertThat(run.exitCode()).isZero();
        String help = run.out().replaceAll("\\s+", " "); // unwrapped
        assertThat(help)
                .contains(
                        "--clients=N",
                        "(default: 8,",
                        "--stock=N",
                        "(default: 2000)",
                        "--duration=TIME",
                        "(default: 10s)",
                        "--seed=N",
                        "--verbose");
    }
}
