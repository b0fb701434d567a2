package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What {@code quorumlock run} prints when it fails is for people: its own lines, no Java class
 * names, stack traces or logger prefixes, whatever the backend and whatever failed (usage errors,
 * services that are down, a config file others may read, URLs it cannot serve). Each case runs as a
 * user runs it, in a JVM of its own.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PlainOutputIT {

    /** A qualified Java class name, such as io.grpc.StatusRuntimeException or java.net.ConnectException. */
    private static final Pattern CLASS_NAME = Pattern.compile("\\b(?:[a-z][a-z0-9_]*\\.)+[A-Z][A-Za-z0-9_$]+");

    /** A logger's line: its level first, or the logger's name before " - ". */
    private static final Pattern LOGGER_LINE =
            Pattern.compile("(?m)^(?:\\[[^]]*] )?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|SEVERE)\\b|^\\w+ - ");

    private static int closedPort;

    @TempDir
    static Path dir;

    @BeforeAll
    static void closedPort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
    }

    static Stream<Arguments> failures() throws Exception {
        Path readable = dir.resolve("readable-config");
        Files.writeString(readable, "redis = redis://127.0.0.1:" + closedPort + "\nredis.password = s3cret\n");
        Files.setPosixFilePermissions(readable, PosixFilePermissions.fromString("rw-r--r--"));
        Path notPem = Files.writeString(dir.resolve("ca.pem"), "not a certificate\n");
        String closed = "127.0.0.1:" + closedPort;
        return Stream.of(
                Arguments.of(List.of("--redis", "redis://" + closed, "--etcd", "http://" + closed), 2),
                Arguments.of(List.of("--redis", "redis://" + closed + ",redis://127.0.0.2:" + closedPort), 69),
                Arguments.of(List.of("--config", readable.toString()), 69),
                Arguments.of(List.of("--etcd", "http://" + closed, "--connect-timeout", "1s"), 69),
                Arguments.of(List.of("--etcd", "https://" + closed, "--connect-timeout", "1s"), 69),
                Arguments.of(List.of("--etcd", "https://" + closed, "--tls-ca", notPem.toString()), 2),
                Arguments.of(List.of("--zookeeper", closed, "--connect-timeout", "1s"), 69),
                Arguments.of(List.of("--jdbc", "jdbc:postgresql://" + closed + "/app"), 69),
                Arguments.of(List.of("--jdbc", "jdbc:postgres://" + closed + "/app"), 2),
                Arguments.of(List.of("--jdbc", "jdbc:mysql://" + closed + "/app"), 2));
    }

    @ParameterizedTest
    @MethodSource("failures")
    void aFailureIsToldInPlainLines(List<String> options, int exitCode) throws Exception {
        String[] args = Stream.concat(options.stream(), Stream.of("--resource", "job", "--", "true"))
                .toArray(String[]::new);
        try (RunProcess run = RunProcess.start(dir, Map.of(), args)) {
            assertThat(run.exitCode()).as(run.err()).isEqualTo(exitCode);
            String err = run.err();
            assertThat(err).as("what run printed").isNotBlank();
            assertThat(CLASS_NAME.matcher(err).results().map(m -> m.group()).toList())
                    .as("Java class names in: " + err)
                    .isEmpty();
            assertThat(err)
                    .doesNotContain("Exception")
                    .doesNotContain("\tat ")
                    .doesNotContainPattern(LOGGER_LINE)
                    .doesNotContain("[--")
                    .doesNotContain("s3cret");
            if (exitCode == 2) { // a usage error: the message, then where the help is
                assertThat(err.lines().toList()).hasSize(2).last().isEqualTo("see 'quorumlock run --help'");
            } else {
                assertThat(err.lines())
                        .as("every line is run's own")
                        .allMatch(line -> line.startsWith("quorumlock run: "));
            }
        }
    }
}
