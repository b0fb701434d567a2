package io.quorumlock.cli.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.cli.CliRun;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/** {@code quorumlock check} against real nodes, in-process: the table, the remedies and the exit code. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CheckIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    @RegisterExtension
    static final RedisServersExtension durable = RedisServersExtension.nodes(1).persistent();

    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(2);

    @TempDir
    static Path dir;

    /** An empty config file, so that a ~/.config/quorumlock/config on this machine plays no part. */
    private static Path noConfig;

    @BeforeAll
    static void emptyConfigFile() throws IOException {
        noConfig = Files.writeString(dir.resolve("empty"), "");
    }

    private static CliRun check(String... redisUris) {
        return CliRun.of("check", "--redis", String.join(",", redisUris), "--config", noConfig.toString());
    }

    /** The table row of a node: the line that starts with its URI and two spaces. */
    private static String row(CliRun run, String uri) {
        return run.out()
                .lines()
                .filter(line -> line.startsWith(uri + "  "))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no row for " + uri + " in\n" + run.out()));
    }

    /** The output with its wrapped lines joined (all white space as one space), to look for a remedy whole. */
    private static String unwrapped(CliRun run) {
        return run.out().replaceAll("\\s+", " ");
    }

    @Test
    void independentNodesPassWithTheirWarningsShown() {
        CliRun run = check(redis.uris().toArray(String[]::new));

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out().lines().findFirst())
                .hasValueSatisfying(header -> assertThat(header).matches("node +role +run_id +persistence +verdict"));
        for (String uri : redis.uris()) {
            assertThat(row(run, uri)).matches("\\Q" + uri + "\\E +master +[0-9a-f]{8} +none +warning");
        }
        assertThat(unwrapped(run))
                .contains("loses its keys on restart (appendonly no): set appendonly yes and appendfsync always")
                .contains("OK with warnings: 3 of 3 nodes have warnings and none has an error; the 3 nodes can serve"
                        + " Redlock (quorum 2)");
        assertThat(run.err()).isEmpty();
    }

    @Test
    void aPersistentNodeIsFitWithoutAWord() {
        CliRun run = check(durable.get(0).uri());

        assertThat(run.exitCode()).isZero();
        assertThat(row(run, durable.get(0).uri())).matches(".* master +[0-9a-f]{8} +aof, fsync always +ok");
        assertThat(run.out()).endsWith("OK: the node can serve a single-node lock.\n");
    }

    @Test
    void theSameServerUnderTwoNamesIsAUsageError() {
        RedisServer node = redis.get(0);
        String alias = "redis://localhost:" + node.port();

        CliRun run = check(node.uri(), alias, redis.get(1).uri());

        assertThat(run.exitCode()).as(run.out()).isEqualTo(2);
        assertThat(run.firstErrorLine())
                .isEqualTo("nodes " + node.uri() + " and " + alias + " are the same server (both reach 127.0.0.1:"
                        + node.port() + "): each Redis server may vote only once; list independent servers");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void aReplicaIsAnErrorAndItsMasterGetsAWarning() {
        RedisServer master = redis.get(0);
        RedisServer replica = redis.get(1);
        try (Jedis jedis = replica.connect(ADMIN_TIMEOUT)) {
            jedis.replicaof(master.host(), master.port());
        }
        TestTime.await(
                Duration.ofSeconds(10),
                () -> {
                    try (Jedis jedis = master.connect(ADMIN_TIMEOUT)) {
                        return jedis.info("replication").contains("connected_slaves:1");
                    }
                },
                "the replica to connect to its master");

        CliRun run = check(redis.uris().toArray(String[]::new));

        assertThat(run.exitCode()).as(run.out()).isEqualTo(1);
        assertThat(row(run, replica.uri())).matches(".* replica +[0-9a-f]{8} +none +ERROR");
        assertThat(row(run, master.uri())).endsWith("warning");
        assertThat(unwrapped(run))
                .contains("is a replica of 127.0.0.1:" + master.port()
                        + ": Redlock needs independent masters; list masters only")
                .contains("has 1 connected replica(s)")
                .contains("FAILED: 1 of 3 nodes has errors");
        // RedisServersExtension makes it a master again before the next test.
    }

    @Test
    void anUnreachableNodeIsAnError() throws IOException {
        String closed = "redis://127.0.0.1:" + closedPort();

        CliRun run = check(redis.get(0).uri(), redis.get(1).uri(), closed);

        assertThat(run.exitCode()).as(run.out()).isEqualTo(1);
        assertThat(row(run, closed)).matches("\\Q" + closed + "\\E +unknown +- +unknown +ERROR");
        assertThat(unwrapped(run)).contains("unreachable", "start the node or remove it from the list");
    }

    @Test
    void aBadUriIsAUsageErrorOfOneLine() {
        CliRun run = check(redis.get(0).uri(), "redis//127.0.0.1:6379");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.firstErrorLine())
                .isEqualTo("invalid node URI 'redis//127.0.0.1:6379': the scheme must be redis://, rediss://,"
                        + " redis-sentinel://, rediss-sentinel://, redis-cluster:// or rediss-cluster:// (expected"
                        + " redis://[user:password@]host:port[/db], or rediss:// for TLS, or"
                        + " redis-sentinel://[user:password@]host:port[,host:port...][/db]#master for a master that Redis"
                        + " Sentinel manages (rediss-sentinel:// for TLS), or"
                        + " redis-cluster://[user:password@]host:port[,host:port...] for a Redis Cluster"
                        + " (rediss-cluster:// for TLS))");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void thePasswordComesFromTheConfigFileAndIsNeverPrinted() throws IOException {
        String password = "s3cret-for-check";
        RedisServer node = redis.get(2);
        try (Jedis jedis = node.connect(ADMIN_TIMEOUT)) {
            jedis.aclSetUser("locker", "on", ">" + password, "~*", "+@all");
        }
        try {
            Path config = Files.writeString(dir.resolve("with-password"), "redis.password = " + password + "\n");
            Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-------"));
            String uri = "redis://locker:@127.0.0.1:" + node.port(); // a user, no password

            CliRun fromFile = CliRun.of("check", "--redis", uri, "--config", config.toString());
            CliRun inUri = check("redis://locker:" + password + "@127.0.0.1:" + node.port());
            CliRun wrong = check("redis://locker:not-" + password + "@127.0.0.1:" + node.port());

            List<CliRun> runs = List.of(fromFile, inUri, wrong);
            assertThat(fromFile.exitCode()).as(fromFile.out() + fromFile.err()).isZero();
            assertThat(row(fromFile, "redis://127.0.0.1:" + node.port())).contains("master");
            assertThat(inUri.exitCode()).as(inUri.out() + inUri.err()).isZero();
            assertThat(wrong.exitCode()).isEqualTo(1);
            assertThat(wrong.out().replaceAll("\\n {4}", " "))
                    .contains("  - refused the password that its URI gives (WRONGPASS): check it")
                    .doesNotContain("start the node");
            assertThat(runs).allSatisfy(run -> assertThat(run.out() + run.err()).doesNotContain(password));
        } finally {
            try (Jedis jedis = node.connect(ADMIN_TIMEOUT)) {
                jedis.aclDelUser("locker");
            }
        }
    }

    /** A port on which nothing listens: one the system just handed out and took back. */
    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
