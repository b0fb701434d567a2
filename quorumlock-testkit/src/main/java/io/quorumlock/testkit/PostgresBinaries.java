package io.quorumlock.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Finds the PostgreSQL server binaries ({@code initdb}, {@code postgres}) and what it takes to run
 * them here; see {@link PostgresServer#available()}.
 */
final class PostgresBinaries {

    static final String BIN_ENV = "QUORUMLOCK_PG_BIN";
    static final String OS_USER = "postgres";
    static final Path DEBIAN_ROOT = Path.of("/usr/lib/postgresql");
    static final String INSTALL_HINT = "install it with `apt-get install postgresql` (Debian, Ubuntu) or set " + BIN_ENV
            + " to the directory that holds initdb and postgres";

    /**
     * The outcome of one lookup: the directory, the runuser to go through as root, or why PostgreSQL
     * cannot run here. {@code required}: {@value #BIN_ENV} is set, so a failure is an error, not a
     * reason to skip.
     */
    record Lookup(Optional<Path> binDir, Optional<Path> runuser, Optional<String> unavailableReason, boolean required) {

        Lookup(Optional<Path> binDir, Optional<Path> runuser, Optional<String> unavailableReason) {
            this(binDir, runuser, unavailableReason, false);
        }

        Lookup asRequired(boolean required) {
            return new Lookup(binDir, runuser, unavailableReason, required);
        }
    }

    private static Lookup resolved;
    private static final Map<Path, String> versions = new ConcurrentHashMap<>();

    private PostgresBinaries() {}

    static synchronized Lookup lookup() {
        if (resolved == null) {
            resolved = resolve(System.getenv(), DEBIAN_ROOT, isRoot());
        }
        return resolved;
    }

    /**
     * The directory named by {@value #BIN_ENV}, else the highest {@code /usr/lib/postgresql/<major>/bin},
     * else the directory of {@code initdb} on the PATH. As root, PostgreSQL must run as the {@code
     * postgres} user through {@code runuser}.
     */
    static Lookup resolve(Map<String, String> env, Path debianRoot, boolean root) {
        String configured = env.get(BIN_ENV);
        return find(env, debianRoot, root).asRequired(configured != null && !configured.isBlank());
    }

    private static Lookup find(Map<String, String> env, Path debianRoot, boolean root) {
        String configured = env.get(BIN_ENV);
        Optional<Path> binDir;
        if (configured != null && !configured.isBlank()) {
            Path dir = Path.of(configured);
            if (!hasServerBinaries(dir)) {
                return new Lookup(
                        Optional.empty(),
                        Optional.empty(),
                        Optional.of(BIN_ENV + " is set to '" + configured
                                + "', which holds no executable initdb and postgres: point it at a PostgreSQL"
                                + " bin directory (such as /usr/lib/postgresql/15/bin), or unset it and install the"
                                + " Debian package postgresql (apt-get install postgresql)"));
            }
            binDir = Optional.of(dir);
        } else {
            binDir = highestMajor(debianRoot)
                    .or(() -> RedisBinary.findOnPath("initdb", env.get("PATH"))
                            .map(Path::getParent)
                            .filter(PostgresBinaries::hasServerBinaries));
        }
        if (binDir.isEmpty()) {
            return new Lookup(
                    Optional.empty(),
                    Optional.empty(),
                    Optional.of("PostgreSQL not found: no " + debianRoot + "/<major>/bin with initdb and postgres,"
                            + " and no initdb on the PATH; " + INSTALL_HINT));
        }
        if (!root) {
            return new Lookup(binDir, Optional.empty(), Optional.empty());
        }
        Optional<Path> runuser = RedisBinary.findOnPath("runuser", env.get("PATH"))
                .or(() -> Stream.of(Path.of("/usr/sbin/runuser"), Path.of("/sbin/runuser"))
                        .filter(Files::isExecutable)
                        .findFirst());
        if (runuser.isEmpty()) {
            return new Lookup(
                    binDir,
                    Optional.empty(),
                    Optional.of("PostgreSQL refuses to run as root, and runuser (util-linux) is not found to run it"
                            + " as the " + OS_USER + " user"));
        }
        if (!userExists(OS_USER)) {
            return new Lookup(
                    binDir,
                    runuser,
                    Optional.of("PostgreSQL refuses to run as root, and there is no '" + OS_USER
                            + "' user to run it as; " + INSTALL_HINT + " (the package creates the user)"));
        }
        return new Lookup(binDir, runuser, Optional.empty());
    }

    /** {@code <root>/<major>/bin} with the highest numeric major that holds the server binaries. */
    static Optional<Path> highestMajor(Path root) {
        if (!Files.isDirectory(root)) {
            return Optional.empty();
        }
        try (Stream<Path> majors = Files.list(root)) {
            return majors.filter(dir -> dir.getFileName().toString().matches("\\d+(\\.\\d+)?"))
                    .sorted(Comparator.comparingDouble((Path dir) ->
                                    Double.parseDouble(dir.getFileName().toString()))
                            .reversed())
                    .map(dir -> dir.resolve("bin"))
                    .filter(PostgresBinaries::hasServerBinaries)
                    .findFirst();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    static boolean hasServerBinaries(Path dir) {
        return Files.isExecutable(dir.resolve("initdb")) && Files.isExecutable(dir.resolve("postgres"));
    }

    /** Whether this process runs as root (uid 0), from {@code /proc/self}; else by the user name. */
    static boolean isRoot() {
        try {
            return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "root".equals(System.getProperty("user.name"));
        }
    }

    private static boolean userExists(String user) {
        try {
            List<String> passwd = Files.readAllLines(Path.of("/etc/passwd"), StandardCharsets.UTF_8);
            return passwd.stream().anyMatch(line -> line.startsWith(user + ":"));
        } catch (IOException e) {
            return false;
        }
    }

    /** The output of {@code postgres --version}, such as {@code 15.14}; "unknown" if it cannot be read. */
    static String version(Path binDir) {
        return versions.computeIfAbsent(binDir, PostgresBinaries::readVersion);
    }

    private static String readVersion(Path binDir) {
        try {
            Process process = new ProcessBuilder(binDir.resolve("postgres").toString(), "--version")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return "unknown";
            }
            // "postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)"
            String[] words = out.split("\\s+");
            return words.length >= 3 ? words[2] : out;
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }
}
