package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.cli.CliRun;
import io.quorumlock.cli.lock.ConfigFile;
import io.quorumlock.cli.lock.LockOptions;
import io.quorumlock.testkit.RedisServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * A known password in every place the command line takes one (a URI on the command line in each
 * form, the config file, the environment), good and bad, through {@code run} and {@code check} at
 * {@code -vv}: it appears in nothing printed, and not in the command's environment.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SecretsIT {

    /** The node's password: every piece of it is a marker that must never be seen. */
    private static final String PASSWORD = "S3cr3t/Xq9@Zw7:Kp4";

    private static final String ENCODED = "S3cr3t%2FXq9%40Zw7%3AKp4";
    private static final List<String> MARKERS = List.of("S3cr3t", "Xq9", "Zw7", "Kp4");

    /** Prints the command's environment, then a line that says it ran. */
    private static final String[] SHOW_ENVIRONMENT = {"sh", "-c", "env; echo RAN"};

    private static RedisServer node;

    @TempDir
    static Path dir;

    private static Path noConfig;
    private static int closedPort;

    @BeforeAll
    static void startANodeWithAPassword() throws IOException {
        noConfig = Files.writeString(dir.resolve("empty"), "");
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        node = RedisServer.start();
        try (Jedis jedis = node.connect(Duration.ofSeconds(5))) {
            jedis.configSet("requirepass", PASSWORD);
        }
    }

    @AfterAll
    static void stopTheNode() {
        if (node != null) {
            node.close();
        }
    }

    private static String at() {
        return node.host() + ":" + node.port();
    }

    /** A backend option and its value that cannot be used, each carrying the password. */
    private static List<String[]> refused() {
        List<String[]> options = new ArrayList<>();
        for (String uri : List.of(
                "rediss://S3cr3t-Xq9@127.0.0.1:" + closedPort,
                "redis://S3cr3t-Xq9@h:99999",
                "redis://u:pa/S3cr3t-Xq9@h:99999",
                "redis://u:" + PASSWORD + "@h:1/x",
                "redis://:" + PASSWORD + "@h:abc",
                "redis://u:S3cr3t%zzXq9@h:1",
                "redis://h:1?password=" + ENCODED,
                "redis://u:" + PASSWORD + "@",
                "u:" + PASSWORD + "@h:1",
                "redis://" + at() + ",redis://u:" + PASSWORD + "@h:99999")) {
            options.add(new String[] {"--redis", uri});
        }
        options.add(new String[] {"--etcd", "http://root:" + PASSWORD + "@h:2379"});
        options.add(new String[] {"--etcd", "http://root:S3cr3t-Xq9@h:2379"});
        options.add(new String[] {"--etcd", "http://127.0.0.1:2379,https://root:" + PASSWORD + "@h:2379"});
        options.add(new String[] {"--zookeeper", "digest:" + PASSWORD + "@zk1:2181"});
        return options;
    }

    @Test
    void usageErrorsOfRunAndCheckNeverShowTheSecret() {
        for (String[] option : refused()) {
            String what = String.join(" ", option);
            CliRun run = CliRun.of(
                    "run",
                    "--config",
                    noConfig.toString(),
                    option[0],
                    option[1],
                    "--resource",
                    "job",
                    "--wait",
                    "0s",
                    "-vv",
                    "--",
                    "true");
            assertThat(run.exitCode()).as(what + ": " + run.err()).isNotZero();
            assertNoSecret(what, run.out() + run.err());
            if (!option[1].startsWith("rediss:")) { // TLS may take rediss:// and fail to connect instead
                assertThat(run.exitCode()).as(what + ": " + run.err()).isEqualTo(2);
                assertThat(run.firstErrorLine()).as(what).contains("***");
            }
            if (option[0].equals("--redis")) {
                CliRun check = CliRun.of("check", "--config", noConfig.toString(), "--redis", option[1], "-vv");
                assertThat(check.exitCode()).as(what + ": " + check.err()).isNotZero();
                assertNoSecret("check " + what, check.out() + check.err());
            }
        }
    }

    @Test
    void thePasswordInTheUriInEachFormLocksAtDebugWithoutShowingIt() throws Exception {
        for (String uri : List.of(
                "redis://:" + PASSWORD + "@" + at(),
                "redis://default:" + PASSWORD + "@" + at(),
                "redis://default:" + ENCODED + "@" + at(),
                "redis://" + ENCODED + "@" + at() + "/0")) {
            try (RunProcess run = runProcess(Map.of(), "--redis", uri)) {
                assertThat(run.exitCode()).as(uri + ": " + run.err()).isZero();
                assertThat(run.out()).as(uri).contains("RAN");
                assertThat(run.err()).as("-vv logs at debug").contains("DEBUG");
                assertNoSecret(uri, run.out() + run.err());
            }
        }
    }

    @Test
    void thePasswordFromTheEnvironmentLocksAndIsNotPassedOn() throws Exception {
        try (RunProcess run = runProcess(Map.of(LockOptions.PASSWORD_ENV, PASSWORD), "--redis", "redis://" + at())) {
            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(run.out()).contains("RAN").doesNotContain(LockOptions.PASSWORD_ENV);
            assertThat(run.err()).contains("DEBUG");
            assertNoSecret("environment", run.out() + run.err());
        }
    }

    @Test
    void thePasswordFromTheConfigFileLocksAndIsNotPassedOn() throws Exception {
        Path config = Files.writeString(
                dir.resolve("config"), "redis = redis://" + at() + "\nredis.password = " + PASSWORD + "\n");
        Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-r--r--"));
        try (RunProcess run = runProcess(Map.of(), "--config", config.toString())) {
            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(run.out()).contains("RAN");
            assertThat(run.err()).contains("chmod 600", "DEBUG");
            assertNoSecret("config file", run.out() + run.err());
        }
        assertNoSecret("ConfigFile.toString()", ConfigFile.read(config).toString());
        assertNoSecret(
                "LockService.toString()",
                new LockOptions.LockService(
                                LockOptions.Kind.REDIS,
                                List.of("redis://u:" + PASSWORD + "@h:1", "redis://h:2"),
                                Optional.of(PASSWORD))
                        .toString());
    }

    @Test
    void aWrongPasswordOrAnUnreachableNodeFailsWithoutShowingIt() throws Exception {
        for (String uri : List.of(
                "redis://default:S3cr3t-wrong-Xq9@" + at(),
                "redis://default:" + ENCODED + "x@" + at(),
                "redis://default:" + PASSWORD + "@127.0.0.1:" + closedPort)) {
            try (RunProcess run = runProcess(Map.of(), "--redis", uri)) {
                assertThat(run.exitCode()).as(uri + ": " + run.err()).isIn(1, RunCommand.UNAVAILABLE);
                assertThat(run.out()).as(uri).doesNotContain("RAN");
                assertNoSecret(uri, run.out() + run.err());
            }
        }
        try (RunProcess wrong =
                runProcess(Map.of(LockOptions.PASSWORD_ENV, "S3cr3t-wrong"), "--redis", "redis://" + at())) {
            assertThat(wrong.exitCode()).as(wrong.err()).isEqualTo(1);
            assertNoSecret("wrong password in the environment", wrong.out() + wrong.err());
        }
    }

    @Test
    void checkAtDebugShowsNoSecret() throws Exception {
        for (String uri :
                List.of("redis://default:" + PASSWORD + "@" + at(), "redis://default:S3cr3t-wrong-Xq9@" + at())) {
            try (RunProcess check = RunProcess.command(
                    dir, Map.of(), "check", "--config", noConfig.toString(), "--redis", uri, "-vv")) {
                assertThat(check.exitCode()).as(uri + ": " + check.err()).isNotEqualTo(2);
                assertThat(check.out()).as(uri).contains("redis://" + at());
                assertNoSecret("check " + uri, check.out() + check.err());
            }
        }
    }

    /** {@code run --resource job -vv ... -- sh -c 'env; echo RAN'}, with no config file unless given. */
    private static RunProcess runProcess(Map<String, String> env, String... backend) {
        List<String> args = new ArrayList<>(List.of(backend));
        if (!args.contains("--config")) {
            args.addAll(List.of("--config", noConfig.toString()));
        }
        args.addAll(List.of("--resource", "job", "-vv", "--"));
        args.addAll(List.of(SHOW_ENVIRONMENT));
        return RunProcess.start(dir, env, args.toArray(String[]::new));
    }

    private static void assertNoSecret(String what, String text) {
        for (String marker : MARKERS) {
            assertThat(text).as("%s shows part of the password", what).doesNotContain(marker);
        }
    }
}
