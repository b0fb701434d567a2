package io.quorumlock.cli.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.cli.CliRun;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The help of check; its usage errors are in MainTest with the others. */
class HelpTest {

    static Stream<Arguments> helps() {
        return Stream.of(Arguments.of(
                "check",
                List.of(
                        "--redis=URI[,URI...]",
                        "--config=FILE",
                        "QUORUMLOCK_REDIS_PASSWORD",
                        "Exit code 0 when no node has an error (warnings are printed), 1 when one has, 2 for"
                                + " a usage error.")));
    }

    @ParameterizedTest
    @MethodSource("helps")
    void helpNamesTheOptionsAndTheExitCodes(String command, List<String> expected) {
        CliRun run = CliRun.of(command, "--help");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out().replaceAll("\\s+", " ")).contains(expected);
    }
}
