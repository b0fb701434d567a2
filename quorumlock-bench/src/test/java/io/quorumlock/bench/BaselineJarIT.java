package io.quorumlock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A baseline named by a revision, on a real git repository of two commits: the revision checked out
 * in a temporary worktree, its jar kept in the checkout's {@value BaselineJar#CACHE} and taken from
 * there the next time, the worktree removed whether the build succeeds or fails. The build itself is
 * a stand-in that packs the checked-out file into the jar (a Maven build of the bench takes minutes).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BaselineJarIT {

    @TempDir
    Path dir;

    private Path repository;
    private String first;

    @BeforeEach
    void twoCommits() throws IOException {
        repository = Files.createDirectories(dir.resolve("checkout")).toRealPath();
        git("init", "-q");
        Files.writeString(repository.resolve("version.txt"), "first");
        git("add", "version.txt");
        git("commit", "-q", "-m", "first");
        first = git("rev-parse", "HEAD");
        Files.writeString(repository.resolve("version.txt"), "second");
        git("commit", "-q", "-am", "second");
    }

    @Test
    void aRevisionIsBuiltOnceInAWorktreeThatIsRemovedThenTakenFromTheCache() throws IOException {
        AtomicReference<Path> checkout = new AtomicReference<>();
        AtomicInteger builds = new AtomicInteger();
        BaselineJar.Build build = (where, lines) -> {
            builds.incrementAndGet();
            checkout.set(where);
            packVersion(where);
        };

        BaselineJar.Baseline baseline = BaselineJar.resolve("HEAD~1", List.of(repository), build, progress());

        Path cached = repository.resolve(BaselineJar.CACHE).resolve(first + ".jar");
        assertThat(baseline.jar()).isEqualTo(cached);
        assertThat(baseline.label()).isEqualTo(first.substring(0, 7));
        assertThat(baseline.revision()).contains(first);
        assertThat(versionIn(cached)).as("the jar of the revision asked for").isEqualTo("first");
        assertThat(checkout.get()).as("the worktree, removed").doesNotExist();
        assertThat(worktrees()).containsExactly(repository.toString());

        BaselineJar.Baseline again =
                BaselineJar.resolve(first.substring(0, 10), List.of(repository), build, progress());

        assertThat(again.jar()).isEqualTo(cached);
        assertThat(builds.get()).as("builds: the second time from the cache").isEqualTo(1);
        assertThat(worktrees()).containsExactly(repository.toString());
    }

    @Test
    void aFailedBuildLeavesNeitherWorktreeNorJar() {
        AtomicReference<Path> checkout = new AtomicReference<>();
        BaselineJar.Build failing = (where, lines) -> {
            checkout.set(where);
            assertThat(where.resolve("version.txt")).hasContent("first");
            throw new IllegalStateException("the build failed: exit code 1");
        };

        assertThatThrownBy(() -> BaselineJar.resolve("HEAD~1", List.of(repository), failing, progress()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("building baseline " + first.substring(0, 7) + " failed: the build failed");

        assertThat(checkout.get()).as("the worktree, removed").doesNotExist();
        assertThat(worktrees()).containsExactly(repository.toString());
        assertThat(repository.resolve(BaselineJar.CACHE).resolve(first + ".jar"))
                .doesNotExist();
    }

    @Test
    void aJarIsTakenAsItIs() throws IOException {
        Path jar = dir.resolve("quorumlock-bench.jar");
        new JarOutputStream(Files.newOutputStream(jar), new Manifest()).close();

        BaselineJar.Baseline baseline =
                BaselineJar.resolve(jar.toString(), List.of(dir.resolve("nowhere")), failingBuild(), progress());

        assertThat(baseline.jar()).isEqualTo(jar.toAbsolutePath().normalize());
        assertThat(baseline.revision()).isEmpty();
    }

    @Test
    void whatIsNeitherAJarNorARevisionIsAUsageErrorWithItsRemedy() throws IOException {
        Path notJar = Files.writeString(dir.resolve("notes.txt"), "not a jar");
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));

        assertThatThrownBy(() -> BaselineJar.resolve("nosuch", List.of(repository), failingBuild(), progress()))
                .isInstanceOf(BaselineJar.Unusable.class)
                .hasMessageContaining(
                        "--baseline nosuch: no such file, and no such revision in the checkout at " + repository)
                .hasMessageContaining("git log --oneline");
        assertThatThrownBy(() -> BaselineJar.resolve("HEAD~1", List.of(elsewhere), failingBuild(), progress()))
                .isInstanceOf(BaselineJar.Unusable.class)
                .hasMessageContaining("--baseline HEAD~1: no such file, and no git checkout")
                .hasMessageContaining("give the path of a quorumlock-bench.jar of another build");
        assertThatThrownBy(
                        () -> BaselineJar.resolve(notJar.toString(), List.of(repository), failingBuild(), progress()))
                .isInstanceOf(BaselineJar.Unusable.class)
                .hasMessageContaining("not a jar");
        assertThatThrownBy(() -> BaselineJar.resolve("old/bench.jar", List.of(repository), failingBuild(), progress()))
                .isInstanceOf(BaselineJar.Unusable.class)
                .hasMessageContaining("--baseline old/bench.jar: no such file");
        assertThat(worktrees()).containsExactly(repository.toString());
    }

    private static BaselineJar.Build failingBuild() {
        return (where, lines) -> {
            throw new AssertionError("no build expected");
        };
    }

    private static Progress progress() {
        return new Progress(new PrintWriter(new StringWriter()), false);
    }

    /** The stand-in build: the jar holds the checked-out version.txt. */
    private static void packVersion(Path checkout) {
        Path jar = checkout.resolve(BaselineJar.BUILT_JAR);
        try {
            Files.createDirectories(jar.getParent());
            try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
                out.putNextEntry(new ZipEntry("version.txt"));
                out.write(Files.readAllBytes(checkout.resolve("version.txt")));
                out.closeEntry();
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String versionIn(Path jar) throws IOException {
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            return new String(zip.getInputStream(zip.getEntry("version.txt")).readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The worktrees git knows of the repository. */
    private List<String> worktrees() {
        List<String> worktrees = new ArrayList<>();
        ChildProcess.Result listed = ChildProcess.run(
                List.of("git", "-C", repository.toString(), "worktree", "list", "--porcelain"),
                repository,
                Duration.ofSeconds(30),
                line -> {
                    if (line.startsWith("worktree ")) {
                        worktrees.add(line.substring("worktree ".length()));
                    }
                });
        assertThat(listed.succeeded())
                .as("git worktree list: %s", listed.lastLines())
                .isTrue();
        return worktrees;
    }

    private String git(String... args) {
        List<String> command = new ArrayList<>(List.of(
                "git", "-C", repository.toString(), "-c", "user.name=bench", "-c", "user.email=bench@example.com"));
        command.addAll(List.of(args));
        ChildProcess.Result result = ChildProcess.run(command, repository, Duration.ofSeconds(30), line -> {});
        assertThat(result.succeeded()).as("%s: %s", command, result.lastLines()).isTrue();
        return result.firstLine();
    }
}
