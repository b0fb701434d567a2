package io.quorumlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The distribution a host installs, installed and used as docs/install.md says, with its blocks run
 * as written but for the paths: the tar.gz that {@code package} built is unpacked into a temporary
 * prefix as into /opt, its {@code bin/quorumlock} linked from {@code PREFIX/usr/local/bin} as from
 * /usr/local/bin, and run as cron runs a job: {@code /bin/sh -c LINE} with nothing in the environment
 * but {@code PATH} (that bin directory, /usr/bin and /bin: no Maven) and {@code JAVA_HOME} (or a
 * {@code java} on the PATH), against a real redis-server.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class InstalledDistributionIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(1);

    private static final String VERSION = System.getProperty("quorumlock.version", "");
    private static final Path ARCHIVE = Path.of(System.getProperty("quorumlock.distribution", "(not set)"));
    private static final String JAVA_HOME = System.getProperty("java.home");

    private final List<Process> started = new ArrayList<>();

    @TempDir
    Path prefix;

    private Path bin;
    private Path work;

    /** docs/install.md's "Unpack, link, check", under {@code prefix}. */
    @BeforeEach
    void install() throws Exception {
        if (VERSION.isEmpty() || !Files.isRegularFile(ARCHIVE)) {
            fail(ARCHIVE + " is missing: failsafe runs this test after 'package' (mvn verify), which builds it");
        }
        Path opt = Files.createDirectories(prefix.resolve("opt"));
        bin = Files.createDirectories(prefix.resolve("usr/local/bin"));
        work = Files.createDirectories(prefix.resolve("work"));
        String steps = docBlock("tar -xzf");
        String copied = "/tmp/" + ARCHIVE.getFileName();
        assertThat(steps)
                .as("docs/install.md unpacks the archive this build makes")
                .contains(copied);
        Result installed = cron(
                Map.of("JAVA_HOME", JAVA_HOME),
                "set -e\n"
                        + steps.replace("/opt", opt.toString())
                                .replace("/usr/local/bin", bin.toString())
                                .replace(copied, ARCHIVE.toString()));
        assertThat(installed.code()).as(installed.err()).isZero();
        assertThat(installed.out().lines().findFirst())
                .as("the version line, as docs/install.md shows it")
                .hasValue("quorumlock " + VERSION)
                .hasValue(docBlock("\nJava ").lines().findFirst().orElseThrow());

        Path home = opt.resolve("quorumlock-" + VERSION);
        try (var files = Files.walk(home)) {
            assertThat(files.filter(Files::isRegularFile).map(home::relativize).map(Path::toString))
                    .containsExactlyInAnyOrder("bin/quorumlock", "lib/quorumlock.jar", "README.txt", "LICENSE");
        }
        assertThat(home.resolve("bin/quorumlock")).isExecutable();
        assertThat(Files.readString(home.resolve("README.txt"))).contains("quorumlock " + VERSION);
    }

    @AfterEach
    void stopWhatIsLeft() throws InterruptedException {
        for (Process process : started) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void versionPrintsTheVersionOnTheJavaOfJavaHomeOrElseOnTheJavaOnThePath() throws Exception {
        Result withJavaHome = cron(Map.of("JAVA_HOME", JAVA_HOME), "quorumlock --version");
        assertThat(withJavaHome.code()).as(withJavaHome.err()).isZero();
        assertThat(withJavaHome.out().lines())
                .containsExactly(
                        "quorumlock " + VERSION,
                        "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ")");
        assertThat(withJavaHome.err()).isEmpty();

        // No JAVA_HOME: the java first on the PATH, here a link in the bin directory (as /usr/bin/java
        // is a link into the JDK), whose home's release file tells its version.
        Files.createSymbolicLink(bin.resolve("java"), Path.of(JAVA_HOME, "bin", "java"));
        Result onThePath = cron(Map.of(), "quorumlock --version");
        assertThat(onThePath.code()).as(onThePath.err()).isZero();
        assertThat(onThePath.out()).isEqualTo(withJavaHome.out());
    }

    @Test
    void aCronLineRunsTheCommandUnderTheLockAndExitsWithItsCode() throws Exception {
        Result ran = cron(Map.of("JAVA_HOME", JAVA_HOME), run("nightly", "sh -c 'echo ran'"));
        assertThat(ran.code()).as(ran.err()).isZero();
        assertThat(ran.out()).isEqualTo("ran\n");
        assertThat(ran.err()).isEmpty();

        Result seven = cron(Map.of("JAVA_HOME", JAVA_HOME), run("nightly", "sh -c 'exit 7'"));
        assertThat(seven.code()).as(seven.err()).isEqualTo(7);
    }

    /** docs/install.md's "In a crontab": the config file and check, then the crontab's command as cron runs it. */
    @Test
    void theDocsCrontabRunsTheJobUnderTheLock() throws Exception {
        Path home = Files.createDirectories(prefix.resolve("home"));
        // cron sets HOME from the user's entry, which the JVM reads for the config file; here that
        // entry is root's, so the home is named to the JVM too.
        Map<String, String> env =
                Map.of("JAVA_HOME", JAVA_HOME, "HOME", home.toString(), "QUORUMLOCK_OPTS", "-Duser.home=" + home);
        String nodes = "redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379";
        String configure = docBlock("quorumlock check");
        assertThat(configure).contains(nodes);
        Result checked =
                cron(env, "set -e\n" + configure.replace(nodes, redis.uris().get(0)));
        assertThat(checked.code()).as(checked.out() + checked.err()).isZero();
        assertThat(checked.out()).contains(redis.uris().get(0));

        String entry = docBlock("# crontab -e")
                .lines()
                .filter(line -> !line.startsWith("#"))
                .findFirst()
                .orElseThrow();
        String command = entry.split(" ", 6)[5]; // after the five time fields
        Path job =
                Files.writeString(bin.resolve("db-backup"), "#!/bin/sh\necho \"backed up as $QUORUMLOCK_RESOURCE\"\n");
        assertThat(job.toFile().setExecutable(true)).isTrue();
        Result ran = cron(env, command.replace("/usr/local/bin", bin.toString()).replace("/var/log", work.toString()));
        assertThat(ran.code()).as(ran.err()).isZero();
        assertThat(Files.readString(work.resolve("db-backup.log"))).isEqualTo("backed up as db-backup\n");
    }

    /** On the newest Java of the machine too (QUORUMLOCK_JAVA21, as for the virtual-thread tests). */
    @Test
    void runsOnANewerJavaToo() throws Exception {
        String newer = System.getenv("QUORUMLOCK_JAVA21");
        assumeTrue(newer != null && !newer.isBlank(), "QUORUMLOCK_JAVA21 names no Java 21+ home: skipped");
        Result ran = cron(Map.of("JAVA_HOME", newer), run("newer", "sh -c 'echo ran'"));
        assertThat(ran.code()).as(ran.err()).isZero();
        assertThat(ran.out()).isEqualTo("ran\n");
        assertThat(ran.err()).isEmpty();
    }

    @Test
    void aSecondRunWhileTheFirstHoldsTheLockExits75() throws Exception {
        Path holding = work.resolve("holding");
        Path proceed = work.resolve("proceed");
        Process first = cronStart(
                Map.of("JAVA_HOME", JAVA_HOME),
                run("nightly", "sh -c 'touch " + holding + "; while [ ! -e " + proceed + " ]; do sleep 0.05; done'"));
        TestTime.await(Duration.ofSeconds(30), () -> Files.exists(holding) || !first.isAlive(), "the first run's job");
        assertThat(first.isAlive()).as("the first run holds the lock").isTrue();

        Result second = cron(Map.of("JAVA_HOME", JAVA_HOME), run("nightly", "sh -c 'echo ran'"));
        assertThat(second.code()).as(second.err()).isEqualTo(75);
        assertThat(second.out()).as("the second job did not run").isEmpty();
        assertThat(second.err().lines().toList())
                .singleElement()
                .asString()
                .startsWith("quorumlock run: lock 'nightly' not acquired");

        Files.writeString(proceed, "");
        assertThat(finish(first).code()).isZero();
    }

    /** The script execs the JVM: a signal to the process cron started reaches run, which passes it on. */
    @Test
    void theInstalledCommandIsTheJvmItselfSoSigtermReachesTheJob() throws Exception {
        Path holding = work.resolve("holding");
        Path marker = work.resolve("marker");
        String job = "trap 'echo TERM > " + marker + "; kill $p; exit 3' TERM; sleep 60 & p=$!; touch " + holding
                + "; wait $p";
        // A relative link to the installed link: a chain, as the script follows it.
        Path link = Files.createSymbolicLink(work.resolve("ql"), Path.of("../usr/local/bin/quorumlock"));
        Process quorumlock = start(
                Map.of("JAVA_HOME", JAVA_HOME),
                link.toString(),
                "run",
                "--redis",
                redis.uris().get(0),
                "--resource",
                "signals",
                "--",
                "sh",
                "-c",
                job);
        TestTime.await(Duration.ofSeconds(30), () -> Files.exists(holding) || !quorumlock.isAlive(), "the job");
        assertThat(quorumlock.info().command())
                .hasValueSatisfying(c -> assertThat(c).endsWith("/java"));

        quorumlock.destroy();
        Result stopped = finish(quorumlock);
        assertThat(stopped.code()).as(stopped.err()).isEqualTo(3);
        assertThat(Files.readString(marker)).isEqualTo("TERM\n");
    }

    @Test
    void aJavaHomeWithoutJavaOrWithAJavaOlderThan17IsOneLineAndExitCode1() throws Exception {
        Path nowhere = prefix.resolve("nowhere");
        Result noJava = cron(Map.of("JAVA_HOME", nowhere.toString()), "quorumlock --version");
        assertThat(noJava.code()).isEqualTo(1);
        assertThat(noJava.err())
                .isEqualTo("quorumlock: JAVA_HOME is " + nowhere + ", which has no bin/java: set JAVA_HOME to a"
                        + " Java 17 or newer, or unset it to use the java on the PATH\n");

        // A Java 11 home as its release file describes it; its java must not be started.
        Path java11 = Files.createDirectories(prefix.resolve("jdk-11/bin")).getParent();
        Files.writeString(java11.resolve("release"), "IMPLEMENTOR=\"Example\"\nJAVA_VERSION=\"11.0.25\"\n");
        Path java = Files.writeString(java11.resolve("bin/java"), "#!/bin/sh\necho started; exit 99\n");
        assertThat(java.toFile().setExecutable(true)).isTrue();
        Result old = cron(Map.of("JAVA_HOME", java11.toString()), "quorumlock --version");
        assertThat(old.code()).isEqualTo(1);
        assertThat(old.out()).isEmpty();
        assertThat(old.err())
                .isEqualTo("quorumlock: " + java + " is Java 11.0.25; quorumlock needs Java 17 or newer: set"
                        + " JAVA_HOME to one, or put one first on the PATH\n");
    }

    /** The first fenced block of docs/install.md that contains {@code text}. */
    private static String docBlock(String text) throws IOException {
        Path page = Path.of(System.getProperty("basedir", System.getProperty("user.dir")), "..", "docs", "install.md");
        StringBuilder block = null;
        for (String line : Files.readAllLines(page)) {
            if (line.startsWith("```")) {
                if (block != null && block.indexOf(text) >= 0) {
                    return block.toString();
                }
                block = block == null ? new StringBuilder() : null;
            } else if (block != null) {
                block.append(line).append('\n');
            }
        }
        throw new AssertionError("docs/install.md has no block with '" + text + "'");
    }

    /** A crontab's command: {@code quorumlock run} on the Redis node, the resource, then the job. */
    private static String run(String resource, String job) {
        return "quorumlock run --redis " + redis.uris().get(0) + " --resource " + resource + " -- " + job;
    }

    /** Runs {@code line} as cron runs a crontab's command, and waits for it. */
    private Result cron(Map<String, String> env, String line) throws Exception {
        return finish(cronStart(env, line));
    }

    private Process cronStart(Map<String, String> env, String line) throws IOException {
        return start(env, "/bin/sh", "-c", line);
    }

    /**
     * Starts {@code command} with an environment of {@code PATH} (the bin directory, /usr/bin, /bin)
     * and {@code env} only, SIGINT and SIGTERM at their defaults (failsafe's JVM may have inherited
     * them ignored), stdin from /dev/null, stdout and stderr into files.
     */
    private Process start(Map<String, String> env, String... command) throws IOException {
        List<String> line = new ArrayList<>(List.of("/usr/bin/env", "--default-signal=INT,TERM", "-i"));
        line.add("PATH=" + (bin == null ? "" : bin + ":") + "/usr/bin:/bin");
        env.forEach((name, value) -> line.add(name + "=" + value));
        line.addAll(List.of(command));
        int n = started.size() + 1;
        Path dir = prefix.resolve("output");
        Files.createDirectories(dir);
        Process process = new ProcessBuilder(line)
                .directory(prefix.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectOutput(dir.resolve(n + ".out").toFile())
                .redirectError(dir.resolve(n + ".err").toFile())
                .start();
        started.add(process);
        return process;
    }

    /** Waits (scaled bound) for a process {@link #start} started, and reads what it printed. */
    private Result finish(Process process) throws Exception {
        Duration limit = TestTime.scaled(Duration.ofSeconds(30));
        int n = started.indexOf(process) + 1;
        Path dir = prefix.resolve("output");
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("still running after " + limit.toMillis() + " ms; stderr: "
                    + Files.readString(dir.resolve(n + ".err")));
        }
        return new Result(
                process.exitValue(),
                Files.readString(dir.resolve(n + ".out")),
                Files.readString(dir.resolve(n + ".err")));
    }

    private record Result(int code, String out, String err) {}
}
