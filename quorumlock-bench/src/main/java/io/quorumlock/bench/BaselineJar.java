package io.quorumlock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The bench jar of the build to compare with ({@code bench --baseline REV_OR_JAR}): a jar given by
 * its path, or one built from a revision of the checkout, in a temporary detached worktree that is
 * removed after (also when the build fails, or on Ctrl-C); the jar is kept in {@value #CACHE} of the
 * checkout, named by the revision's full hash, and used again next time.
 */
final class BaselineJar {

    /** Where the jars built from revisions are kept, in the checkout. */
    static final String CACHE = "target/bench-baselines";

    /** The jar a build leaves in its checkout. */
    static final String BUILT_JAR = "quorumlock-bench/target/quorumlock-bench.jar";

    private static final Duration GIT_TIMEOUT = Duration.ofMinutes(2);
    private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(30);
    private static final byte[] ZIP = {'P', 'K', 3, 4};

    /** Builds the bench jar in a checkout ({@link #BUILT_JAR}), each line of its output to {@code lines}; throws if it fails. */
    interface Build {
        void run(Path checkout, Consumer<String> lines);
    }

    /**
     * The jar to run as the baseline.
     *
     * @param jar the jar
     * @param label what the output calls it: the revision's short hash, or the jar's file name
     * @param revision the revision's full hash, when built from one
     */
    record Baseline(Path jar, String label, Optional<String> revision) {}

    /** Why REV_OR_JAR cannot be used, with the remedy: a usage error. */
    static final class Unusable extends RuntimeException {
        Unusable(String message) {
            super(message);
        }
    }

    private BaselineJar() {}

    /**
     * The baseline that {@code given} names: a jar file, else a revision of the first of {@code
     * lookIn} that is in a git checkout, built with {@code build} unless built before.
     *
     * @throws Unusable when {@code given} is neither
     */
    static Baseline resolve(String given, List<Path> lookIn, Build build, Progress progress) throws IOException {
        Path file = Path.of(given);
        if (Files.isRegularFile(file)) {
            if (!isZip(file)) {
                throw new Unusable("--baseline " + given + ": not a jar; give a quorumlock-bench.jar of another build"
                        + " or a git revision");
            }
            return new Baseline(
                    file.toAbsolutePath().normalize(), file.getFileName().toString(), Optional.empty());
        }
        if (given.endsWith(".jar") || given.startsWith("-")) {
            throw new Unusable("--baseline " + given + ": no such file; give the path of a quorumlock-bench.jar"
                    + " of another build (its quorumlock-bench/target/quorumlock-bench.jar) or a git revision");
        }
        Path repository = repository(lookIn)
                .orElseThrow(() -> new Unusable("--baseline " + given + ": no such file, and no git checkout to take"
                        + " the revision from (looked in "
                        + lookIn.stream().map(Path::toString).collect(Collectors.joining(" and "))
                        + "); give the path of a quorumlock-bench.jar of another build, or run the bench from a"
                        + " quorumlock checkout"));
        ChildProcess.Result sha = git(repository, "rev-parse", "--verify", "--quiet", given + "^{commit}");
        if (!sha.succeeded() || !sha.firstLine().matches("[0-9a-f]{40,64}")) {
            throw new Unusable("--baseline " + given + ": no such file, and no such revision in the checkout at "
                    + repository + "; give a revision of it (a commit of 'git log --oneline', a tag, HEAD~1) or the"
                    + " path of a quorumlock-bench.jar");
        }
        String full = sha.firstLine();
        String label = full.substring(0, 7);
        Path cached = repository.resolve(CACHE).resolve(full + ".jar");
        if (Files.isRegularFile(cached)) {
            progress.step("baseline " + label + ": the jar built before, " + shown(cached));
            return new Baseline(cached, label, Optional.of(full));
        }
        progress.step("building baseline " + label + "...");
        buildInWorktree(repository, full, cached, build, progress);
        progress.step("baseline " + label + " built: " + shown(cached));
        return new Baseline(cached, label, Optional.of(full));
    }

    /** A path as the output shows it: from the working directory when it is under it. */
    static String shown(Path path) {
        Path here = Path.of("").toAbsolutePath();
        return path.startsWith(here) ? here.relativize(path).toString() : path.toString();
    }

    /** The Maven build of the bench jar and the modules it needs, offline when the local repository allows. */
    static void maven(Path checkout, Consumer<String> lines) {
        ChildProcess.Result result = ChildProcess.run(mvn(true), checkout, BUILD_TIMEOUT, lines);
        boolean online = false;
        if (!result.succeeded() && result.lastLines().stream().anyMatch(line -> line.contains("offline"))) {
            lines.accept("not everything the build needs is in the local Maven repository: building online");
            online = true;
            result = ChildProcess.run(mvn(false), checkout, BUILD_TIMEOUT, lines);
        }
        if (!result.succeeded()) {
            throw new IllegalStateException(
                    "the build failed (" + String.join(" ", mvn(!online)) + "): " + result.told(BUILD_TIMEOUT));
        }
    }

    private static List<String> mvn(boolean offline) {
        List<String> command = new ArrayList<>(List.of("mvn", "-B", "-q"));
        if (offline) {
            command.add("-o");
        }
        command.addAll(List.of(
                "-DskipTests",
                "-Dspotless.check.skip=true",
                "-Dmaven.source.skip=true",
                "-Dmaven.javadoc.skip=true",
                "-pl",
                "quorumlock-bench",
                "-am",
                "package"));
        return command;
    }

    private static void buildInWorktree(Path repository, String sha, Path cached, Build build, Progress progress)
            throws IOException {
        Path scratch = Files.createTempDirectory("quorumlock-baseline-").toRealPath();
        Path checkout = scratch.resolve(sha.substring(0, 12));
        Worktree worktree = new Worktree(repository, checkout, scratch);
        Thread onCtrlC = new Thread(
                () -> {
                    BenchCommand.stopping = true;
                    BenchCommand.killChildren();
                    worktree.remove();
                },
                "quorumlock-bench-baseline-worktree");
        Runtime.getRuntime().addShutdownHook(onCtrlC);
        try {
            ChildProcess.Result added = git(repository, "worktree", "add", "--detach", checkout.toString(), sha);
            if (!added.succeeded()) {
                throw new IllegalStateException("git worktree add of " + sha + " failed: " + added.told(GIT_TIMEOUT));
            }
            try {
                build.run(checkout, progress::status);
            } catch (RuntimeException e) {
                throw new IllegalStateException(
                        "building baseline " + sha.substring(0, 7) + " failed: " + e.getMessage(), e);
            }
            Path built = checkout.resolve(BUILT_JAR);
            if (!Files.isRegularFile(built)) {
                throw new IllegalStateException("building baseline " + sha.substring(0, 7) + " left no " + BUILT_JAR);
            }
            Files.createDirectories(cached.getParent());
            Path part = Files.createTempFile(cached.getParent(), sha, ".part");
            try {
                Files.copy(built, part, StandardCopyOption.REPLACE_EXISTING);
                Files.move(part, cached, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(part);
            }
        } finally {
            worktree.remove();
            try {
                Runtime.getRuntime().removeShutdownHook(onCtrlC);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the hook removes the worktree
            }
        }
    }

    /** The temporary worktree: removed once, by whichever comes first of the run's end and Ctrl-C. */
    private static final class Worktree {
        private final Path repository;
        private final Path checkout;
        private final Path scratch;
        private boolean removed;

        Worktree(Path repository, Path checkout, Path scratch) {
            this.repository = repository;
            this.checkout = checkout;
            this.scratch = scratch;
        }

        synchronized void remove() {
            if (removed) {
                return;
            }
            removed = true;
            if (Files.exists(checkout)
                    && !git(repository, "worktree", "remove", "--force", checkout.toString())
                            .succeeded()) {
                BenchCommand.deleteTree(checkout);
            }
            AtomicBoolean listed = new AtomicBoolean();
            if (!Files.exists(checkout)) {
                ChildProcess.run(
                        List.of("git", "-C", repository.toString(), "worktree", "list", "--porcelain"),
                        repository,
                        GIT_TIMEOUT,
                        line -> listed.compareAndSet(false, line.equals("worktree " + checkout)));
            }
            if (listed.get()) {
                // its directory went another way: its entry goes with the other stale ones
                git(repository, "worktree", "prune");
            }
            BenchCommand.deleteTree(scratch);
        }
    }

    /** What is checked out in the checkout that holds {@code dir} ({@code git describe --always --dirty}), if any. */
    static Optional<String> describe(Path dir) {
        try {
            ChildProcess.Result described = git(dir, "describe", "--always", "--dirty");
            return described.succeeded() && !described.firstLine().isEmpty()
                    ? Optional.of(described.firstLine())
                    : Optional.empty();
        } catch (UncheckedIOException noGit) {
            return Optional.empty();
        }
    }

    private static Optional<Path> repository(List<Path> lookIn) {
        for (Path dir : lookIn) {
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try {
                ChildProcess.Result top = git(dir, "rev-parse", "--show-toplevel");
                if (top.succeeded() && !top.firstLine().isEmpty()) {
                    return Optional.of(Path.of(top.firstLine()));
                }
            } catch (UncheckedIOException noGit) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    private static ChildProcess.Result git(Path dir, String... args) {
        List<String> command = new ArrayList<>(List.of("git", "-C", dir.toString()));
        command.addAll(Arrays.asList(args));
        return ChildProcess.run(command, dir, GIT_TIMEOUT, line -> {});
    }

    private static boolean isZip(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return Arrays.equals(in.readNBytes(ZIP.length), ZIP);
        }
    }
}
