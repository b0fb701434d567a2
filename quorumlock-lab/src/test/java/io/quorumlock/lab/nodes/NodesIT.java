package io.quorumlock.lab.nodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.quorumlock.etcd.EtcdLock;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.MariaDbServer;
import io.quorumlock.testkit.PostgresServer;
import io.quorumlock.testkit.Processes;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;

/**
 * {@code quorumlock nodes} as a user runs it: the shaded jar in a JVM of its own (failsafe runs the
 * integration tests after {@code package}), its output read line by line, then a signal, and
 * nothing left behind.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NodesIT {

    private static final Duration START = Duration.ofSeconds(30);
    private static final Duration EXIT = Duration.ofSeconds(20);
    private static final int PROBE_MILLIS = 2_000;

    @TempDir
    Path dir;

    private Process process;
    private final List<ProcessHandle> servers = new ArrayList<>();
    private final List<Path> nodeDirs = new ArrayList<>();
    private final List<String> out = new CopyOnWriteArrayList<>();
    private Thread reader;
    private Path err;

    /** The last line nodes prints once everything is up. */
    private static final String READY = "Ctrl-C or SIGTERM stops them.";

    /** Starts {@code java -jar quorumlock-lab.jar nodes ARGS} and returns the Redis URIs once it has printed its --redis line. */
    private List<String> startNodes(String... args) throws IOException {
        start(Map.of(), args);
        String redisLine = pasted("--redis ");
        List<String> uris = List.of(redisLine.substring("--redis ".length()).split(","));
        assertThat(out).as("each URI on a line of its own").containsSubsequence(uris);
        return uris;
    }

    /** The line to paste that starts with {@code prefix}. */
    private String pasted(String prefix) {
        return out.stream()
                .filter(line -> line.startsWith(prefix))
                .findFirst()
                .orElseThrow(() -> new AssertionError(
                        "no " + prefix + "line; stdout:\n" + String.join("\n", out) + "\nstderr:\n" + stderr()));
    }

    /**
     * Starts {@code java -jar quorumlock-lab.jar nodes ARGS} with {@code env} added, and returns once it
     * is ready or has exited; notes its child processes and their directories.
     */
    private void start(Map<String, String> env, String... args) throws IOException {
        Path jar =
                Path.of(System.getProperty("basedir", System.getProperty("user.dir")), "target", "quorumlock-lab.jar");
        if (!Files.isRegularFile(jar)) {
            fail(jar + " is missing: run the integration tests after 'package' (mvn verify)");
        }
        List<String> command = new ArrayList<>();
        // Started in the background of a non-interactive shell, this JVM may have inherited SIGINT
        // ignored, and so would the child; give the child the default disposition back.
        if (defaultSignalWorks()) {
            command.addAll(List.of("env", "--default-signal=INT,TERM"));
        }
        command.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar.toString(), "nodes"));
        command.addAll(Arrays.asList(args));
        err = dir.resolve("stderr");
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(err.toFile());
        builder.environment().putAll(env);
        process = builder.start();
        reader = new Thread(this::readOutput, "nodes-stdout");
        reader.setDaemon(true);
        reader.start();
        TestTime.await(START, () -> out.contains(READY) || !process.isAlive(), "the line '" + READY + "'");
        // Its descendants are the servers (by pid: Debian's redis-server is a link to redis-check-rdb),
        // and runuser's postgres processes as root.
        process.descendants().forEach(servers::add);
        for (ProcessHandle server : servers) {
            Path cwd = Path.of("/proc", Long.toString(server.pid()), "cwd");
            if (Files.exists(cwd)) { // Linux: the server's own temporary directory
                nodeDirs.add(Files.readSymbolicLink(cwd));
            }
        }
    }

    /** Sends the signal and checks that nodes exits with 0, prints {@code stopped}, and leaves no server behind. */
    private void stopWith(String signal, String stopped) throws Exception {
        Processes.signal(process.pid(), signal, false, EXIT);

        assertThat(process.waitFor(TestTime.scaled(EXIT).toMillis(), TimeUnit.MILLISECONDS))
                .as("exited after SIG" + signal)
                .isTrue();
        reader.join(TestTime.scaled(EXIT).toMillis());
        assertThat(process.exitValue()).as(stderr()).isZero();
        assertThat(out).last().isEqualTo(stopped);
        assertThat(servers).noneMatch(ProcessHandle::isAlive);
        assertThat(nodeDirs)
                .as("the servers' directories")
                .noneMatch(path -> path.toString().contains("quorumlock-") && Files.exists(path));
    }

    /** Runs nodes to its end, which must come at once, and returns its exit code. */
    private int exitCode(Map<String, String> env, String... args) throws Exception {
        start(env, args);
        assertThat(process.waitFor(TestTime.scaled(EXIT).toMillis(), TimeUnit.MILLISECONDS))
                .as("nodes exited")
                .isTrue();
        reader.join(TestTime.scaled(EXIT).toMillis());
        return process.exitValue();
    }

    private void readOutput() {
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                out.add(line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** After a failure: SIGTERM first, so that the command deletes the nodes' directories; SIGKILL if need be. */
    @AfterEach
    void nothingLeftRunning() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(TestTime.scaled(EXIT).toMillis(), TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor(TestTime.scaled(EXIT).toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        servers.forEach(ProcessHandle::destroyForcibly);
    }

    @ParameterizedTest
    @ValueSource(strings = {"INT", "TERM"})
    void runsTheNodesUntilASignalThenStopsThemAndExitsWith0(String signal) throws Exception {
        List<String> uris = startNodes("--count", "3");

        assertThat(uris).hasSize(3).allMatch(uri -> uri.matches("redis://127\\.0\\.0\\.1:\\d+"));
        for (String uri : uris) {
            try (Jedis jedis = jedis(uri)) {
                assertThat(jedis.ping()).isEqualTo("PONG");
            }
        }
        assertThat(servers).as("child processes, one per node").hasSize(3);
        assertThat(out).anyMatch(line -> line.contains("restart guard"));

        stopWith(signal, "stopped 3 Redis nodes");

        assertThat(out).as("plain lines when piped").noneMatch(line -> line.contains("\r") || line.contains("\u001b"));
        assertThat(nodeDirs).as("the nodes' directories").hasSize(3).noneMatch(Files::exists);
        for (String uri : uris) {
            assertThat(refusesConnections(uri))
                    .as(uri + " no longer accepts connections")
                    .isTrue();
        }
        assertThat(stderr()).isEmpty();
    }

    @Test
    void persistentNodesWriteEveryCommandToTheirAppendOnlyFile() throws Exception {
        List<String> uris = startNodes("--count", "1", "--persistent");

        try (Jedis jedis = jedis(uris.get(0))) {
            assertThat(jedis.configGet("appendonly")).containsEntry("appendonly", "yes");
            assertThat(jedis.configGet("appendfsync")).containsEntry("appendfsync", "always");
        }
        assertThat(out.get(0)).contains("appendonly yes, appendfsync always");

        Processes.signal(process.pid(), "INT", false, EXIT);

        assertThat(process.waitFor(TestTime.scaled(EXIT).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(process.exitValue()).as(stderr()).isZero();
        assertThat(servers).hasSize(1).noneMatch(ProcessHandle::isAlive);
    }

    /**
     * {@code quorumlock run} from the deployed jar ({@code quorumlock-cli/target/quorumlock.jar}) on
     * the nodes just started, as a user tries the lock; its exit code, with stderr in {@code err}.
     */
    private int runOn(List<String> uris, StringBuilder err) throws Exception {
        Path jar = Path.of(
                System.getProperty("basedir", System.getProperty("user.dir")),
                "..",
                "quorumlock-cli",
                "target",
                "quorumlock.jar");
        if (!Files.isRegularFile(jar)) {
            fail(jar + " is missing: build quorumlock-cli first (mvn verify)");
        }
        Path runErr = dir.resolve("run.err");
        Process run = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-jar",
                        jar.toString(),
                        "run",
                        "--redis",
                        String.join(",", uris),
                        "--resource",
                        "job",
                        "--ttl",
                        "10s",
                        "--",
                        "true")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(runErr.toFile())
                .start();
        try {
            assertThat(run.waitFor(TestTime.scaled(EXIT).toMillis(), TimeUnit.MILLISECONDS))
                    .as("run exited")
                    .isTrue();
        } finally {
            run.destroyForcibly();
        }
        err.append(Files.readString(runErr));
        return run.exitValue();
    }

    @Test
    void persistentNodesJustStartedGrantTheDeployedRunTheLockAtOnce() throws Exception {
        List<String> uris = startNodes("--count", "3", "--persistent");

        StringBuilder err = new StringBuilder();
        assertThat(runOn(uris, err)).as(err.toString()).isZero();

        stopWith("TERM", "stopped 3 Redis nodes");
    }

    @Test
    void nodesWithoutPersistenceJustStartedKeepTheDeployedRunOutForATtl() throws Exception {
        List<String> uris = startNodes("--count", "3");

        StringBuilder err = new StringBuilder();
        assertThat(runOn(uris, err)).as(err.toString()).isEqualTo(73);
        assertThat(err)
                .contains("no node names a holder, but the restart guard keeps the votes")
                .containsPattern("excluded: .*restart guard: up [0-9.]+ s");

        stopWith("TERM", "stopped 3 Redis nodes");
    }

    @Test
    void startsZooKeeperEtcdAndPostgresWhoseOptionsWorkAndSigtermStopsThemAll() throws Exception {
        assumeTrue(EtcdCluster.available(), EtcdCluster.unavailableReason().orElse(""));
        assumeTrue(
                PostgresServer.available(), PostgresServer.unavailableReason().orElse(""));
        start(Map.of(), "--zookeeper", "3", "--etcd", "3", "--postgres");

        assertThat(out).as("no Redis nodes unless --count asks for them").noneMatch(line -> line.startsWith("--redis"));
        String zooKeeper = pasted("--zookeeper ").substring("--zookeeper ".length());
        assertThat(zooKeeper).matches("127\\.0\\.0\\.1:\\d+(,127\\.0\\.0\\.1:\\d+){2}");
        try (ZooKeeperLock lock =
                ZooKeeperLock.builder().connectString(zooKeeper).build()) {
            assertThat(lock.tryAcquire("nodes-it", Duration.ofSeconds(10))).isPresent();
        }
        List<String> etcd =
                List.of(pasted("--etcd ").substring("--etcd ".length()).split(","));
        assertThat(etcd).hasSize(3).allMatch(url -> url.matches("http://127\\.0\\.0\\.1:\\d+"));
        try (EtcdLock lock = EtcdLock.builder().endpoints(etcd).build()) {
            assertThat(lock.tryAcquire("nodes-it", Duration.ofSeconds(10))).isPresent();
        }
        String jdbc = pasted("--jdbc ");
        assertThat(jdbc).matches("--jdbc jdbc:postgresql://127\\.0\\.0\\.1:\\d+/postgres --jdbc-user postgres");
        String jdbcUrl = jdbc.split(" ")[1];
        try (Connection connection = DriverManager.getConnection(jdbcUrl, "postgres", "");
                ResultSet one = connection.createStatement().executeQuery("select 1")) {
            assertThat(one.next()).isTrue();
        }
        assertThat(servers).as("3 etcd members and the postmaster").hasSizeGreaterThanOrEqualTo(4);

        stopWith("TERM", "stopped 3 ZooKeeper servers, 3 etcd members and PostgreSQL");

        for (String address : zooKeeper.split(",")) {
            assertThat(refusesConnections("zk://" + address)).as(address).isTrue();
        }
        assertThat(refusesConnections(URI.create(etcd.get(0)).toString())).isTrue();
        assertThat(stderr()).isEmpty();
    }

    @Test
    void startsAMasterItsReplicaAndThreeSentinelsWhoseAddressTheLockTakes() throws Exception {
        start(Map.of(), "--sentinel");

        assertThat(out).anyMatch(line -> line.startsWith("Started a Redis master, its replica and three sentinels"));
        assertThat(out).anyMatch(line -> line.matches("redis://127\\.0\\.0\\.1:\\d+ \\(replica\\)"));
        String redis = pasted("--redis ");
        assertThat(redis).matches("--redis redis-sentinel://(127\\.0\\.0\\.1:\\d+,){2}127\\.0\\.0\\.1:\\d+#mymaster");
        try (Redlock lock =
                Redlock.builder().node(redis.substring("--redis ".length())).build()) {
            assertThat(lock.tryAcquire("nodes-it", Duration.ofSeconds(10))).isPresent();
        }

        stopWith("TERM", "stopped the master, its replica and three sentinels");
        assertThat(stderr()).isEmpty();
    }

    @Test
    void startsAClusterWhoseSeedsTheLockTakes() throws Exception {
        start(Map.of(), "--cluster");

        assertThat(out)
                .anyMatch(line -> line.startsWith("Started a Redis Cluster of three masters with a replica each"));
        assertThat(out).anyMatch(line -> line.matches("redis://127\\.0\\.0\\.1:\\d+ \\(master of slots 0-5460\\)"));
        String redis = pasted("--redis ");
        assertThat(redis).matches("--redis redis-cluster://(127\\.0\\.0\\.1:\\d+,){2}127\\.0\\.0\\.1:\\d+");
        try (Redlock lock =
                Redlock.builder().node(redis.substring("--redis ".length())).build()) {
            for (String resource : List.of("nodes-it-1", "nodes-it-2", "nodes-it-3")) {
                assertThat(lock.tryAcquire(resource, Duration.ofSeconds(10))).isPresent();
            }
        }

        stopWith("TERM", "stopped the cluster's three masters and their replicas");
        assertThat(stderr()).isEmpty();
    }

    @Test
    void startsMariaDbWhoseJdbcOptionWorksWithThePasswordItNames() throws Exception {
        assumeTrue(MariaDbServer.available(), MariaDbServer.unavailableReason().orElse(""));
        start(Map.of(), "--mariadb");

        assertThat(out)
                .anyMatch(line ->
                        line.startsWith("Started MariaDB ") && line.contains("QUORUMLOCK_JDBC_PASSWORD=quorumlock"));
        String jdbc = pasted("--jdbc ");
        assertThat(jdbc).matches("--jdbc jdbc:mariadb://127\\.0\\.0\\.1:\\d+/quorumlock --jdbc-user quorumlock");
        try (JdbcLock lock = JdbcLock.builder()
                .url(jdbc.split(" ")[1])
                .user("quorumlock")
                .password("quorumlock")
                .build()) {
            lock.createTable();
            assertThat(lock.tryAcquire("nodes-it", Duration.ofSeconds(10))).isPresent();
        }

        stopWith("TERM", "stopped MariaDB");
        assertThat(stderr()).isEmpty();
    }

    @Test
    void redisNodesListenOnPortAndTheFollowingOnesBesideAZooKeeperServer() throws Exception {
        int first = consecutiveFreePorts(2);
        List<String> uris = startNodes("--count", "2", "--port", Integer.toString(first), "--zookeeper", "1");

        assertThat(uris).containsExactly("redis://127.0.0.1:" + first, "redis://127.0.0.1:" + (first + 1));
        for (String uri : uris) {
            try (Jedis jedis = jedis(uri)) {
                assertThat(jedis.ping()).isEqualTo("PONG");
            }
        }
        assertThat(pasted("--zookeeper ")).matches("--zookeeper 127\\.0\\.0\\.1:\\d+");

        stopWith("INT", "stopped 2 Redis nodes and 1 ZooKeeper server");
    }

    @Test
    void aTakenPortIsOneLineNamingPortAndNothingIsLeftRunning() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();

            assertThat(exitCode(Map.of(), "--count", "1", "--port", Integer.toString(port), "--zookeeper", "1"))
                    .isEqualTo(1);
            assertThat(stderr().lines().toList())
                    .containsExactly("quorumlock nodes: --port " + port + ": port " + port + " of 127.0.0.1 is in use"
                            + " by another process; choose another --port, or leave it out for free ports");
            assertThat(servers).noneMatch(ProcessHandle::isAlive);
        }
    }

    /** The README's fenced example (a docs page's, once it moved there): the java block of class FencedQuickStart. */
    private static String fencedExample() throws IOException {
        Path root = Path.of(System.getProperty("basedir", System.getProperty("user.dir")), "..");
        List<Path> pages = new ArrayList<>(List.of(root.resolve("README.md")));
        Path docs = root.resolve("docs");
        if (Files.isDirectory(docs)) {
            try (Stream<Path> files = Files.walk(docs)) {
                files.filter(f -> f.toString().endsWith(".md")).sorted().forEach(pages::add);
            }
        }
        Pattern block = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
        for (Path page : pages) {
            Matcher m = block.matcher(Files.readString(page));
            while (m.find()) {
                if (m.group(1).contains("class FencedQuickStart")) {
                    return m.group(1);
                }
            }
        }
        throw new AssertionError("no java block with class FencedQuickStart in " + pages);
    }

    private static String group(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertThat(m.find()).as(regex + " in the fenced example").isTrue();
        return m.group(1);
    }

    private static boolean free(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    @Test
    void theFencedExampleRunsAsPastedAgainstWhatNodesServes() throws Exception {
        assumeTrue(
                PostgresServer.available(), PostgresServer.unavailableReason().orElse(""));
        String example = fencedExample();
        String connectString = group(example, "connectString\\(\"([^\"]+)\"\\)");
        Matcher jdbc = Pattern.compile("getConnection\\(\\s*\"([^\"]+)\",\\s*\"([^\"]*)\",\\s*\"([^\"]*)\"\\)")
                .matcher(example);
        assertThat(jdbc.find())
                .as("DriverManager.getConnection(url, user, password) in the example")
                .isTrue();
        String url = jdbc.group(1);
        String user = jdbc.group(2);
        String password = jdbc.group(3);
        int zooKeeperPort = Integer.parseInt(connectString.substring(connectString.lastIndexOf(':') + 1));
        int postgresPort = Integer.parseInt(group(url, ":(\\d+)/"));
        assumeTrue(
                free(zooKeeperPort) && free(postgresPort),
                "the example's ports " + zooKeeperPort + " and " + postgresPort + " are taken on this machine");

        start(Map.of(), "--zookeeper", "1", "--postgres");

        assertThat(pasted("--zookeeper ")).isEqualTo("--zookeeper " + connectString);
        assertThat(pasted("--jdbc ")).isEqualTo("--jdbc " + url + " --jdbc-user " + user);
        try (ZooKeeperLock lock =
                ZooKeeperLock.builder().connectString(connectString).build()) {
            assertThat(lock.tryAcquire("fenced-example", Duration.ofSeconds(10)))
                    .isPresent();
        }
        try (Connection connection = DriverManager.getConnection(url, user, password);
                ResultSet one = connection.createStatement().executeQuery("select 1")) {
            assertThat(one.next()).isTrue();
        }

        stopWith("TERM", "stopped 1 ZooKeeper server and PostgreSQL");
    }

    @Test
    void aTakenStandardPortIsSaidWithTheAddressServedInsteadAndATakenChosenPortIsOneLine() throws Exception {
        assumeTrue(free(2181), "port 2181 is taken on this machine");
        try (ServerSocket taken = new ServerSocket(2181, 1, InetAddress.getLoopbackAddress())) {
            start(Map.of(), "--zookeeper", "1");

            String served = pasted("--zookeeper ").substring("--zookeeper ".length());
            assertThat(served).matches("127\\.0\\.0\\.1:\\d+").isNotEqualTo("127.0.0.1:2181");
            assertThat(out)
                    .contains("Port 2181 of 127.0.0.1 is in use: ZooKeeper listens on " + served + " instead. Code"
                            + " that names 127.0.0.1:2181, as the fenced example does, must name " + served
                            + " (or stop what holds port 2181, or choose a port with --zookeeper-port).");
            stopWith("TERM", "stopped 1 ZooKeeper server");

            out.clear();
            assertThat(exitCode(Map.of(), "--zookeeper", "1", "--zookeeper-port", "2181"))
                    .isEqualTo(1);
            assertThat(stderr().lines().toList())
                    .containsExactly("quorumlock nodes: --zookeeper-port 2181: port 2181 of 127.0.0.1 is in use by"
                            + " another process; choose another --zookeeper-port, or leave it out for 2181 when free,"
                            + " else a free port");
            assertThat(out).as("nothing started").noneMatch(line -> line.startsWith("Started"));
        }
    }

    static Stream<Arguments> missingBinaries() {
        return Stream.of(
                Arguments.of("--etcd", "QUORUMLOCK_ETCD_BIN", "etcd-server"),
                Arguments.of("--postgres", "QUORUMLOCK_PG_BIN", "postgresql"),
                Arguments.of("--mariadb", "QUORUMLOCK_MARIADB_BIN", "mariadb-server"));
    }

    @ParameterizedTest
    @MethodSource("missingBinaries")
    void aMissingBinaryIsOneLineNamingThePackageAndTheVariableAndStartsNothing(
            String option, String variable, String debianPackage) throws Exception {
        List<String> args = new ArrayList<>(List.of("--count", "1", "--zookeeper", "1", option));
        if (option.equals("--etcd")) {
            args.add("1");
        }
        int exitCode = exitCode(Map.of(variable, dir.resolve("missing").toString()), args.toArray(String[]::new));

        assertThat(exitCode).as(stderr()).isEqualTo(1);
        assertThat(stderr().lines().toList())
                .singleElement()
                .asString()
                .startsWith("quorumlock nodes: " + variable + " is set to ")
                .contains("Debian package " + debianPackage);
        assertThat(out).as("nothing started").noneMatch(line -> line.startsWith("Started"));
    }

    /** The first of {@code count} consecutive free ports of 127.0.0.1. */
    private static int consecutiveFreePorts(int count) throws IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            List<ServerSocket> held = new ArrayList<>();
            try {
                held.add(new ServerSocket(0, 1, InetAddress.getLoopbackAddress()));
                int first = held.get(0).getLocalPort();
                for (int port = first + 1; port < first + count; port++) {
                    held.add(new ServerSocket(port, 1, InetAddress.getLoopbackAddress()));
                }
                return first;
            } catch (IOException taken) {
                // one of the following ports is taken: start again elsewhere
            } finally {
                for (ServerSocket socket : held) {
                    socket.close();
                }
            }
        }
        throw new IOException("no " + count + " consecutive free ports on 127.0.0.1");
    }

    private static Jedis jedis(String uri) {
        URI parsed = URI.create(uri);
        return new Jedis(parsed.getHost(), parsed.getPort(), PROBE_MILLIS);
    }

    private static boolean refusesConnections(String uri) throws IOException {
        URI parsed = URI.create(uri);
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(parsed.getHost(), parsed.getPort()), PROBE_MILLIS);
            return false;
        } catch (ConnectException refused) {
            return true;
        }
    }

    private String stderr() {
        try {
            return err == null || !Files.exists(err) ? "" : Files.readString(err);
        } catch (IOException e) {
            return "(cannot read " + err + ": " + e + ")";
        }
    }

    /** Whether {@code env --default-signal} (GNU coreutils 8.31 and later) is there. */
    private static boolean defaultSignalWorks() {
        try {
            Process probe = new ProcessBuilder("env", "--default-signal=INT,TERM", "true")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            return probe.waitFor(10, TimeUnit.SECONDS) && probe.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
