package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Redlock under 10,000 virtual threads, four on each of 2,500 resources, on a Java 21+ JDK in a child JVM
 * (the build is Java 17): no deadlock, every section exclusive, and no carrier thread pinned by the
 * lock's code, as JFR's {@code jdk.VirtualThreadPinned} events (threshold 0 ms) recorded during the
 * run show (the JDK's own pins, in its critical sections or its first linkage of a call site, are
 * counted apart: on a loaded machine a path the warm-up did not take may run first in the run). The
 * JDK is {@code QUORUMLOCK_JAVA21} if set (then it must work), else the newest Java 21+ under
 * {@code /usr/lib/jvm}; without one the test is skipped, saying what to install.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class VirtualThreadsIT {

    private static final Logger log = LoggerFactory.getLogger(VirtualThreadsIT.class);

    static final String JDK_VARIABLE = "QUORUMLOCK_JAVA21";

    private static final int THREADS = 10_000;
    /** Four threads per resource: each takes it twice, and the turns of a resource are served one after another. */
    private static final int RESOURCES = 2_500;

    private static final int SECTIONS_PER_THREAD = 2;
    /**
     * The threads of a resource take it in turn, twice each: on two cores beside other work a
     * resource served about a section every two seconds (the holders wait for a carrier among
     * thousands of runnable threads), and with ten threads per resource the last waited over 40 s.
     * A thread waits up to three quarters of this.
     */
    private static final Duration CHILD_TIMEOUT = TestTime.scaled(Duration.ofSeconds(100));

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(5);

    @TempDir
    Path dir;

    @Test
    void tenThousandVirtualThreadsContendingInFoursPinNoCarrierAndKeepEverySectionExclusive() throws Exception {
        Path jdk = jdkOrAbort();
        Path recording = dir.resolve("pinned.jfr");
        Path settings = dir.resolve("pinned.jfc");
        Files.writeString(
                settings,
                String.join(
                        "\n",
                        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
                        "<configuration version=\"2.0\">",
                        "  <event name=\"jdk.VirtualThreadPinned\">",
                        "    <setting name=\"enabled\">true</setting>",
                        "    <setting name=\"stackTrace\">true</setting>",
                        "    <setting name=\"threshold\">0 ms</setting>",
                        "  </event>",
                        "</configuration>"));
        List<String> args = childArgs(THREADS, RESOURCES, SECTIONS_PER_THREAD, CHILD_TIMEOUT, redis.uris());
        Path out = dir.resolve("child.out");
        Path err = dir.resolve("child.err");
        Process child = startChild(
                jdk,
                List.of("-XX:StartFlightRecording=filename=" + recording + ",settings=" + settings),
                VirtualThreadsMain.class,
                args,
                out,
                err);
        try {
            if (!child.waitFor(CHILD_TIMEOUT.plusSeconds(15).toSeconds(), TimeUnit.SECONDS)) {
                String dump = threadDump(jdk, child.pid());
                fail("the child JVM did not finish within "
                        + CHILD_TIMEOUT.plusSeconds(15).toSeconds()
                        + " s (a deadlock?); its stderr ends with:\n" + tail(err, 4_000) + "\nits threads:\n"
                        + dump);
            }
        } finally {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
        }
        String stdout = Files.readString(out);
        String stderr = tail(err, 4_000);
        assertThat(child.exitValue())
                .as("exit code of the child JVM; stdout:\n%s\nstderr:\n%s", stdout, stderr)
                .isZero();
        Map<String, String> result = result(stdout);
        assertThat(result).as("the child's result line, stdout:\n%s", stdout).containsKey("sections");

        String pinned = run(
                jdk.resolve("bin/jfr").toString(),
                "print",
                "--stack-depth",
                "64",
                "--events",
                "jdk.VirtualThreadPinned",
                recording.toString());
        List<String> events = Stream.of(pinned.split("(?m)^(?=jdk\\.VirtualThreadPinned)"))
                .filter(e -> e.startsWith("jdk.VirtualThreadPinned"))
                .toList();
        // Pinned in the lock's callers during the run; apart: the warm-up's, the JDK's own threads'
        // (its poller's start), the pin on purpose at the end, and the JDK's own pins inside a
        // caller: in one of its critical sections (freeze result 2: only the JDK can pin a
        // continuation so) or while it links a call site run for the first time (a string
        // concatenation on a path the warm-up did not take, such as a node owing a reply).
        String onPurpose = VirtualThreadsMain.PinsItsCarrier.class.getSimpleName();
        List<String> warmUp = events.stream()
                .filter(e -> e.contains("(javaThreadId = " + result.get("warmUpThread") + ", virtual)"))
                .toList();
        List<String> jdkOwn =
                events.stream().filter(e -> !e.contains("io.quorumlock.")).toList();
        List<String> jdkInside = events.stream()
                .filter(e -> !jdkOwn.contains(e))
                .filter(e -> e.contains("pinnedReason = \"Freeze or preempt failed (2)\"")
                        || e.contains("java.lang.invoke.MethodHandleNatives.link"))
                .toList();
        List<String> ours = events.stream()
                .filter(e -> !warmUp.contains(e) && !jdkOwn.contains(e) && !jdkInside.contains(e))
                .filter(e -> !e.contains(onPurpose))
                .toList();

        log.info(
                "{} virtual threads over {} resources on {}: {} sections in {} ms ({} /s), {} carrier threads,"
                        + " {} pinned events in the callers, {} in the"
                        + " warm-up, {} in the JDK's own threads, {} in the JDK's critical sections or"
                        + " linkage inside a caller",
                THREADS,
                RESOURCES,
                jdk.getFileName(),
                result.get("sections"),
                result.get("millis"),
                Math.round(Long.parseLong(result.get("sections")) * 1000.0 / Long.parseLong(result.get("millis"))),
                result.get("carriers"),
                ours.size(),
                warmUp.size(),
                jdkOwn.size(),
                jdkInside.size());
        assertThat(ours)
                .as("pinned carriers during the run:\n%s", String.join("\n", ours))
                .isEmpty();
        assertThat(events.stream().filter(e -> e.contains(onPurpose)).count())
                .as("the pin on purpose after the run is in the recording (else it records nothing):\n%s", pinned)
                .isEqualTo(1L);
        assertThat(result)
                .as("stderr:\n%s", stderr)
                .containsEntry("done", "true")
                .containsEntry("finished", String.valueOf(THREADS))
                .containsEntry("failures", "0")
                .containsEntry("sections", String.valueOf(THREADS * SECTIONS_PER_THREAD))
                .containsEntry("maxInside", "1")
                .containsEntry("lost", "0");
    }

    /** The Java 21+ JDK to run a child JVM on; the test is skipped, saying what to install, if there is none. */
    static Path jdkOrAbort() throws IOException {
        return java21().orElseGet(() -> {
            String missing = "no Java 21+ JDK found in $" + JDK_VARIABLE + " nor under /usr/lib/jvm: install one"
                    + " (such as Temurin 25) or set "
                    + JDK_VARIABLE + " to its home";
            Assumptions.abort(missing); // .ci/run names the JDK where the machine has one
            return null;
        });
    }

    /** A child's arguments: {@code threads resources sections timeoutSeconds nodeUri...}. */
    static List<String> childArgs(int threads, int resources, int sections, Duration timeout, List<String> nodes) {
        List<String> args = new ArrayList<>(List.of(
                String.valueOf(threads),
                String.valueOf(resources),
                String.valueOf(sections),
                String.valueOf(timeout.toSeconds())));
        args.addAll(nodes);
        return args;
    }

    /**
     * Starts {@code main} with {@code args} in a child JVM of {@code jdk} on this test's class
     * path, with 512 MB of heap, the {@code options} and SLF4J at WARN, its output in {@code out}
     * and {@code err}.
     */
    static Process startChild(Path jdk, List<String> options, Class<?> main, List<String> args, Path out, Path err)
            throws IOException {
        List<String> command = new ArrayList<>();
        command.add(jdk.resolve("bin/java").toString());
        command.add("-Xmx512m");
        command.addAll(options);
        command.addAll(List.of(
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp",
                System.getProperty("java.class.path"),
                main.getName()));
        command.addAll(args);
        return new ProcessBuilder(command)
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
    }

    /** The child's {@code RESULT key=value ...} line. */
    static Map<String, String> result(String stdout) {
        Map<String, String> result = new HashMap<>();
        stdout.lines().filter(l -> l.startsWith("RESULT ")).findFirst().ifPresent(line -> {
            Matcher m = Pattern.compile("(\\w+)=(\\S+)").matcher(line);
            while (m.find()) {
                result.put(m.group(1), m.group(2));
            }
        });
        return result;
    }

    /** {@code $QUORUMLOCK_JAVA21}, required to be a Java 21+ JDK if set; else the newest under /usr/lib/jvm. */
    static Optional<Path> java21() throws IOException {
        String named = System.getenv(JDK_VARIABLE);
        if (named != null && !named.isBlank()) {
            Path home = Paths.get(named.trim());
            if (feature(home) < 21 || !Files.isExecutable(home.resolve("bin/jfr"))) {
                throw new IllegalStateException(JDK_VARIABLE + "=" + named + " is not the home of a Java 21+ JDK"
                        + " (with bin/java and bin/jfr): point it at one, such as /usr/lib/jvm/temurin-25-jdk-amd64");
            }
            return Optional.of(home);
        }
        Path jvms = Paths.get("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(jvms)) {
            return homes.filter(h -> feature(h) >= 21 && Files.isExecutable(h.resolve("bin/jfr")))
                    .max(Comparator.comparingInt(VirtualThreadsIT::feature));
        }
    }

    /** The feature release of the JDK at {@code home}, from its {@code release} file; 0 if none. */
    private static int feature(Path home) {
        try {
            for (String line : Files.readAllLines(home.resolve("release"))) {
                Matcher m = Pattern.compile("^JAVA_VERSION=\"(\\d+)").matcher(line);
                if (m.find()) {
                    return Files.isExecutable(home.resolve("bin/java")) ? Integer.parseInt(m.group(1)) : 0;
                }
            }
        } catch (IOException e) {
            return 0;
        }
        return 0;
    }

    /** The child's threads, virtual ones included, or why they could not be had. */
    private String threadDump(Path jdk, long pid) {
        Path dump = dir.resolve("threads.txt");
        try {
            run(
                    jdk.resolve("bin/jcmd").toString(),
                    String.valueOf(pid),
                    "Thread.dump_to_file",
                    "-format=text",
                    dump.toString());
            return tail(dump, 20_000);
        } catch (IOException | RuntimeException e) {
            return "no thread dump: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "no thread dump: interrupted";
        }
    }

    private String run(String... command) throws IOException, InterruptedException {
        Path output = Files.createTempFile(dir, "tool", ".out");
        Process tool = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        if (!tool.waitFor(TestTime.scaled(Duration.ofSeconds(30)).toSeconds(), TimeUnit.SECONDS)) {
            tool.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " did not finish within 30 s");
        }
        String text = Files.readString(output);
        if (tool.exitValue() != 0) {
            throw new IllegalStateException(
                    String.join(" ", command) + " exited with " + tool.exitValue() + ":\n" + text);
        }
        return text;
    }

    private static String tail(Path file, int chars) throws IOException {
        if (!Files.exists(file)) {
            return "";
        }
        String text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        return text.length() <= chars ? text : "..." + text.substring(text.length() - chars);
    }
}
