package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.cli.CliRun;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input to {@code quorumlock run}, in-process: one line that names the option and the remedy,
 * where the help is, exit code 2, and nothing started: the command never runs, and the "server" (a socket
 * that only counts the connections it gets) is never contacted.
 */
class RunOptionsTest {

    private static final String GRAMMAR = "expected redis://[user:password@]host:port[/db], or rediss:// for TLS, or"
            + " redis-sentinel://[user:password@]host:port[,host:port...][/db]#master for a master that Redis Sentinel"
            + " manages (rediss-sentinel:// for TLS), or redis-cluster://[user:password@]host:port[,host:port...] for a"
            + " Redis Cluster (rediss-cluster:// for TLS)";

    private static ServerSocketChannel server;
    private static String address;

    @TempDir
    static Path dir;

    private static Path marker;
    private static Path emptyConfig;

    @BeforeAll
    static void listen() throws IOException {
        server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        server.configureBlocking(false);
        address = "127.0.0.1:" + server.socket().getLocalPort();
        marker = dir.resolve("ran");
        emptyConfig = Files.writeString(dir.resolve("empty.config"), "# nothing\n");
    }

    @AfterAll
    static void close() throws IOException {
        server.close();
    }

    /** The arguments, with the command that would show it ran appended after {@code --}. */
    private static String[] args(String... options) {
        List<String> args = new ArrayList<>(List.of("run"));
        args.addAll(List.of(options));
        args.addAll(List.of("--", "touch", marker.toString()));
        return args.toArray(String[]::new);
    }

    static Stream<Arguments> badInput() {
        String redis = "redis://" + address;
        return Stream.of(
                Arguments.of(
                        new String[] {"run", "--redis", redis, "--resource", "job"},
                        "no command to run: give it after the options, such as quorumlock run --redis"
                                + " redis://10.0.0.1:6379 --resource nightly-report -- /usr/local/bin/nightly-report"),
                Arguments.of(
                        new String[] {"run", "--redis", redis, "--resource", "job", "--"},
                        "no command to run: give it after the options, such as quorumlock run --redis"
                                + " redis://10.0.0.1:6379 --resource nightly-report -- /usr/local/bin/nightly-report"),
                Arguments.of(args("--consul", address, "--resource", "job"), "Unknown option: '--consul'"),
                Arguments.of(
                        args("--redis", "http://" + address, "--resource", "job"),
                        "invalid node URI 'http://" + address
                                + "': the scheme must be redis://, rediss://, redis-sentinel://, rediss-sentinel://,"
                                + " redis-cluster:// or rediss-cluster:// (" + GRAMMAR + ")"),
                Arguments.of(
                        args("--redis", "redis://:hunter2@" + address + "/x", "--resource", "job"),
                        "invalid node URI 'redis://***@" + address + "/x': the path must be a database number"
                                + " such as /0 (" + GRAMMAR + ")"),
                Arguments.of(
                        args("--redis", redis, "--resource", "job", "--ttl", "-5s"),
                        "--ttl must be positive, was -5.00 s: such as --ttl 30s"),
                Arguments.of(
                        args("--redis", redis, "--resource", "job", "--ttl", "0s"),
                        "--ttl must be positive, was 0.0 ms: such as --ttl 30s"),
                Arguments.of(
                        args("--redis", redis, "--resource", "job", "--ttl", "150ms"),
                        "--ttl must be longer than 150 ms with Redis (3 x the node timeout: a grant and an extension"
                                + " must fit in it), was 150 ms"),
                Arguments.of(
                        args("--etcd", "http://" + address, "--resource", "job", "--ttl", "500ms"),
                        "--ttl must be at least 1s with etcd, whose leases are whole seconds; was 500 ms"),
                Arguments.of(
                        args("--redis", redis, "--resource", "job", "--wait", "-1s"),
                        "--wait must not be negative, was -1.00 s: 0s gives up at once"),
                Arguments.of(
                        args("--redis", redis, "--resource", "job", "--ttl", "3s", "--grace", "1s"),
                        "--grace 1.00 s is not shorter than the notice of a lost lease with --ttl 3.00 s (300 ms): the"
                                + " command could still run when another host gets the lock; use --grace 150 ms or a"
                                + " longer --ttl"),
                Arguments.of(
                        args("--redis", redis, "--resource", "job", "--grace", "-10ms"),
                        "--grace must not be negative, was -10 ms: 0s sends SIGKILL at once"),
                Arguments.of(
                        args("--zookeeper", address, "--resource", "job", "--connect-timeout", "0s"),
                        "--connect-timeout must be positive, was 0.0 ms: such as --connect-timeout 2s"),
                Arguments.of(
                        args("--zookeeper", address, "--resource", "job", "--ttl", "10s", "--connect-timeout", "15s"),
                        "--connect-timeout 15s is longer than --ttl 10s, the ZooKeeper session timeout: the session"
                                + " would be lost before such a connection is given up; use --connect-timeout 10s or"
                                + " less, or a longer --ttl"),
                Arguments.of(
                        args("--redis", redis, "--resource", "job", "--connect-timeout", "5s"),
                        "--connect-timeout is for ZooKeeper, etcd and --jdbc: Redis rounds give a silent node up to 500 ms"
                                + " (a quarter of --ttl if less), and a node that is down counts as a no at once"),
                Arguments.of(
                        args("--redis", redis, "--resource", "job", "--permits", "0"),
                        "--permits must be 1 to 64, was 0: such as --permits 3 for at most 3 commands at once"),
                Arguments.of(
                        args("--redis", redis, "--resource", "job", "--permits", "65"),
                        "--permits must be 1 to 64, was 65: such as --permits 3 for at most 3 commands at once"),
                Arguments.of(
                        args("--redis", redis, "--resource", "job", "--on-lost", "ignore"),
                        "Invalid value for option '--on-lost': 'ignore' is not one of terminate, continue"),
                Arguments.of(
                        args("--redis", redis),
                        "--resource is missing: name the lock, such as --resource nightly-report"),
                Arguments.of(
                        args("--redis", redis, "--resource", " "),
                        "--resource must not be empty: name the lock, such as --resource nightly-report"),
                Arguments.of(
                        args("--redis", redis, "--zookeeper", address, "--resource", "job"),
                        "name one backend only, not both --redis and --zookeeper"),
                Arguments.of(
                        args("--config", emptyConfig.toString(), "--resource", "job"),
                        "name where the lock lives: --redis URI[,URI...], --zookeeper CONNECT_STRING, --etcd"
                                + " ENDPOINTS or --jdbc JDBC_URL (or one of redis, zookeeper, etcd, jdbc in "
                                + emptyConfig
                                + ")"),
                Arguments.of(
                        args("--zookeeper", "127.0.0.1:port", "--resource", "job"),
                        "connectString '127.0.0.1:port' is not a ZooKeeper connect string"));
    }

    @ParameterizedTest
    @MethodSource("badInput")
    void badInputGivesOneLineNamingTheOptionExitCode2AndStartsNothing(String[] args, String error) throws IOException {
        CliRun run = CliRun.of(args);

        assertThat(run.exitCode()).as(run.err()).isEqualTo(2);
        assertThat(run.firstErrorLine()).startsWith(error);
        assertThat(run.err().lines().skip(1).toList())
                .as("then where the help is")
                .containsExactly("see 'quorumlock run --help'");
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).doesNotContain("hunter2");
        assertThat(marker).as("the command did not run").doesNotExist();
        try (SocketChannel connection = server.accept()) {
            assertThat(connection).as("no connection to the server").isNull();
        }
    }

    @Test
    void theCommandStartsAtTheFirstArgumentThatIsNotAnOption() {
        CliRun run = CliRun.of("run", "--redis", "redis://" + address, "sh", "-c", "exit 7", "--resource", "x");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.firstErrorLine())
                .as("--resource after the command is the command's")
                .isEqualTo("--resource is missing: name the lock, such as --resource nightly-report");
    }

    @Test
    void helpListsTheExitCodesAndTheEnvironment() {
        CliRun run = CliRun.of("run", "--help");

        assertThat(run.exitCode()).isZero();
        String help = run.out().replaceAll("\\s+", " ");
        assertThat(help)
                .contains("--resource=NAME", "--ttl=TIME", "Default: 30s")
                .contains("--wait=TIME", "Default: 0s", "--grace=TIME", "Default: 10s")
                .contains("--on-lost=ACTION", "Default: terminate")
                .contains("--connect-timeout=TIME", "Default: 2s, or --ttl if shorter (ZooKeeper); 5s for a database")
                .contains("73 nobody holds the lock, but the restart guard kept the votes", "(EX_CANTCREAT")
                .contains("--jdbc=JDBC_URL", "--tls-ca=FILE", "https://")
                .contains("Exit codes:", "0-255 the command's exit code; 128+N when signal N ended it")
                .contains("2 usage error", "75 the lock is held by another owner", "76 the lease was lost")
                .contains("69 the lock service could not be reached", "(EX_UNAVAILABLE)")
                .contains("1 a configuration error the lock service reported", "126, 127 the command could not be run")
                .contains("QUORUMLOCK_RESOURCE", "QUORUMLOCK_VALID_UNTIL", "QUORUMLOCK_FENCING_TOKEN")
                .contains(
                        "--permits=N", "At most N commands run at once", "QUORUMLOCK_PERMIT", "the lock on NAME#PERMIT")
                .contains("QUORUMLOCK_REDIS_PASSWORD");
    }
}
