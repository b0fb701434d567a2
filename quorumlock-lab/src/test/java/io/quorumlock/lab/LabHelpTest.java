package io.quorumlock.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.cli.CliRun;
import io.quorumlock.torture.FaultKind;
import io.quorumlock.torture.Strategy;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The help of nodes and torture; their usage errors are in LabTest with the others. */
class LabHelpTest {

    static Stream<Arguments> helps() {
        return Stream.of(
                Arguments.of(
                        "nodes",
                        List.of(
                                "--count=N",
                                "1 to 15 (default: 5 when no other server is asked for, else none)",
                                "--port=P",
                                "--persistent",
                                "--zookeeper=N",
                                "--etcd=N",
                                "--postgres",
                                "--mariadb",
                                "--mariadb-port=P",
                                "until Ctrl-C (or SIGTERM)",
                                "restart guard",
                                "QUORUMLOCK_ETCD_BIN",
                                "QUORUMLOCK_PG_BIN",
                                "QUORUMLOCK_MARIADB_BIN",
                                "Exit code 0 once the servers are stopped")),
                Arguments.of(
                        "torture",
                        List.of(
                                "--faults=KINDS",
                                "kill, freeze, restart, clock, pause, expire, partition, slow, failover",
                                "slows nodes down and fails a Sentinel master over to a replica that lacks its latest"
                                        + " writes",
                                "failover " + FaultKind.FAILOVER.description(),
                                "Fault kinds:",
                                "partition " + FaultKind.PARTITION.description(),
                                "slow " + FaultKind.SLOW.description(),
                                "kill " + FaultKind.KILL.description(),
                                "--strategies=NAMES",
                                "some of "
                                        + Arrays.stream(Strategy.values())
                                                .map(Strategy::option)
                                                .collect(Collectors.joining(", ")))));
    }

    @ParameterizedTest
    @MethodSource("helps")
    void helpNamesTheOptionsAndTheExitCodes(String command, List<String> expected) {
        CliRun run = CliRun.of(Lab.commandLine(), command, "--help");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out().replaceAll("\\s+", " ")).contains(expected);
    }
}
