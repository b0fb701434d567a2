package io.quorumlock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quorumlock.testkit.TestTime;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bench --baseline JAR} for real: this build (the module's classes) and the bench jar of the
 * package phase, each a child JVM that starts its own Redis nodes, over two rounds, in {@code
 * --smoke} mode to keep it to seconds (the children of a real run take {@code --quick}); a
 * baseline that fails; a child that does not end; the usage errors.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BaselineIT {

    private static final String ONE_ROW = "^single-node / raw-jedis$";

    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @Test
    void bothBuildsRowsSideBySide() throws IOException {
        Path jar = benchJar();

        int exit = bench("--baseline", jar.toString(), "--smoke", "--only", ONE_ROW, "--rounds", "2", "--out", dir);

        assertThat(exit).as("exit code; stdout:%n%s%nstderr:%n%s", out, err).isZero();
        assertThat(out.toString())
                .contains("round 1/2: new", "round 1/2: old", "round 2/2: new", "round 2/2: old (quorumlock-bench.jar)")
                .contains("old quorumlock-bench.jar (target/quorumlock-bench.jar)")
                .contains("2 rounds of --smoke --only '" + ONE_ROW + "'")
                .contains("Every row measured", BaselineRun.JSON_FILE);
        List<String> table = out.toString().lines().toList();
        String header =
                table.stream().filter(l -> l.startsWith("case ")).findFirst().orElseThrow();
        assertThat(header.split(" {2,}"))
                .containsExactly(
                        "case",
                        "library",
                        "new ops/s",
                        "old ops/s",
                        "new/old",
                        "min-max",
                        "new B/op",
                        "old B/op",
                        "new/old",
                        "notes");
        String[] row = table.stream()
                .filter(l -> l.startsWith("single-node "))
                .findFirst()
                .orElseThrow()
                .split(" {2,}");
        assertThat(row).hasSize(9); // no notes

        JsonNode root =
                new ObjectMapper().readTree(dir.resolve(BaselineRun.JSON_FILE).toFile());
        assertThat(root.path("rounds").asInt()).isEqualTo(2);
        assertThat(root.path("complete").asBoolean()).isTrue();
        assertThat(root.path("old").path("jar").asText()).isEqualTo(jar.toString());
        assertThat(root.path("rows").size()).isEqualTo(1);
        JsonNode r = root.path("rows").get(0);
        assertThat(r.path("case").asText() + " / " + r.path("library").asText()).isEqualTo("single-node / raw-jedis");
        List<Double> newOps = figures(r.path("new_ops_per_s_rounds"));
        List<Double> oldOps = figures(r.path("old_ops_per_s_rounds"));
        assertThat(newOps).hasSize(2).allMatch(ops -> ops > 0);
        assertThat(oldOps).hasSize(2).allMatch(ops -> ops > 0);
        // the medians of two rounds, the ratios paired by round (figures of 6 significant digits)
        assertThat(r.path("new_ops_per_s").asDouble())
                .isCloseTo((newOps.get(0) + newOps.get(1)) / 2, withinPercentage(0.01));
        assertThat(r.path("old_ops_per_s").asDouble())
                .isCloseTo((oldOps.get(0) + oldOps.get(1)) / 2, withinPercentage(0.01));
        double first = newOps.get(0) / oldOps.get(0);
        double second = newOps.get(1) / oldOps.get(1);
        assertThat(r.path("ratio").asDouble()).isCloseTo((first + second) / 2, withinPercentage(0.01));
        assertThat(r.path("ratio_min").asDouble()).isCloseTo(Math.min(first, second), withinPercentage(0.01));
        assertThat(r.path("ratio_max").asDouble()).isCloseTo(Math.max(first, second), withinPercentage(0.01));
        assertThat(r.path("new_alloc_bytes_per_op").asDouble()).isPositive();
        assertThat(r.path("alloc_ratio").asDouble())
                .isCloseTo(
                        r.path("new_alloc_bytes_per_op").asDouble()
                                / r.path("old_alloc_bytes_per_op").asDouble(),
                        withinPercentage(0.01));
        assertThat(row[0]).isEqualTo("single-node");
        assertThat(row[2]).isEqualTo(Report.rate(r.path("new_ops_per_s").asDouble()));
        assertThat(row[4])
                .isEqualTo(String.format(Locale.ROOT, "%.2f", r.path("ratio").asDouble()));
        assertThat(row[5]).contains("-");
        assertThat(Files.readString(dir.resolve(BaselineRun.LOG_FILE)))
                .contains("== round 1/2: new", "== round 2/2: old", "single-node / raw-jedis");
    }

    @Test
    void aBuildThatFailsIsNamedWithItsRoundAndItsLastLines() throws IOException {
        Path broken = jarOf(Failing.class, dir.resolve("broken.jar"));

        int exit = bench("--baseline", broken.toString(), "--smoke", "--only", ONE_ROW, "--rounds", "1", "--out", dir);

        assertThat(exit).as("exit code; stdout:%n%s%nstderr:%n%s", out, err).isEqualTo(BenchCommand.FAILURE);
        assertThat(err.toString())
                .contains("the old build (broken.jar) failed in round 1 of 1")
                .contains("exit code 3", "no redis-server here");
        assertThat(out.toString()).contains("round 1/1: new (").doesNotContain("Every row measured");
    }

    @Test
    void aChildThatDoesNotEndIsEndedWithWhatItStarted() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        List<String> command = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                Hung.class.getName());
        ProcessHandle hung;
        ProcessHandle own;
        try (ChildProcess child = ChildProcess.start(command, dir, lines::add)) {
            TestTime.await(Duration.ofSeconds(30), () -> !lines.isEmpty(), "the child to start a process of its own");
            String[] pids = lines.get(0).split(" ");
            hung = ProcessHandle.of(Long.parseLong(pids[0])).orElseThrow();
            own = ProcessHandle.of(Long.parseLong(pids[1])).orElseThrow();

            assertThat(child.waitFor(Duration.ofMillis(200)))
                    .as("the exit code of a child that timed out")
                    .isEmpty();
        }
        TestTime.await(Duration.ofSeconds(10), () -> !hung.isAlive(), "the child to be ended");
        TestTime.await(Duration.ofSeconds(10), () -> !own.isAlive(), "the process it started to be ended");
        assertThat(new ChildProcess.Result(OptionalInt.empty(), lines).told(Duration.ofSeconds(5)))
                .startsWith("no end after 5 s (ended); its last lines:")
                .contains(lines.get(0));
    }

    @Test
    void usageErrorsNameTheOptionAndTheRemedy() throws IOException {
        Path jar = benchJar();

        assertThat(bench("--rounds", "2")).isEqualTo(2);
        assertThat(bench("--baseline", jar.toString(), "--rounds", "0")).isEqualTo(2);
        assertThat(bench("--baseline", dir.resolve("nosuch.jar").toString())).isEqualTo(2);
        assertThat(bench("--baseline", jar.toString(), "--only", "(")).isEqualTo(2);
        assertThat(bench("--baseline", jar.toString(), "--smoke", "--only", "^no-such-case /", "--out", dir))
                .isEqualTo(2);

        assertThat(err.toString())
                .contains("--rounds applies to --baseline only: add --baseline REV_OR_JAR")
                .contains("--rounds must be at least 1, was 0")
                .contains("--baseline " + dir.resolve("nosuch.jar") + ": no such file; give the path of a"
                        + " quorumlock-bench.jar")
                .contains("--only (: not a regular expression")
                .contains("--only ^no-such-case / matched no row; rows are named 'case / library'");
        assertThat(dir.resolve(BaselineRun.JSON_FILE)).doesNotExist();
    }

    private int bench(Object... args) {
        CommandLine command =
                BenchCommand.commandLine().setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true));
        return command.execute(Arrays.stream(args).map(String::valueOf).toArray(String[]::new));
    }

    /** The bench jar the package phase built, before the integration tests. */
    private static Path benchJar() {
        Path jar = Path.of("target", "quorumlock-bench.jar").toAbsolutePath();
        assertThat(jar).as("the bench jar of the package phase").isRegularFile();
        return jar;
    }

    private static List<Double> figures(JsonNode array) {
        List<Double> figures = new ArrayList<>();
        array.forEach(n -> figures.add(n.asDouble()));
        return figures;
    }

    /** A jar of one class of this test, run by its manifest: a stand-in for a broken bench jar. */
    private static Path jarOf(Class<?> main, Path jar) throws IOException {
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, main.getName());
        String entry = main.getName().replace('.', '/') + ".class";
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest);
                InputStream in = main.getClassLoader().getResourceAsStream(entry)) {
            out.putNextEntry(new ZipEntry(entry));
            in.transferTo(out);
            out.closeEntry();
        }
        return jar;
    }

    /** A bench of another build that stops before it measures anything. */
    static final class Failing {
        public static void main(String[] args) {
            System.out.println("0:00  starting 5 Redis nodes");
            System.err.println("quorumlock bench: no redis-server here");
            System.exit(3);
        }
    }

    /** A child that starts a process of its own and never ends. */
    static final class Hung {
        public static void main(String[] args) throws Exception {
            Process own = new ProcessBuilder("tail", "-f", "/dev/null").start(); // ends only when ended
            System.out.println(ProcessHandle.current().pid() + " " + own.pid());
            System.out.flush();
            new CountDownLatch(1).await();
        }
    }
}
