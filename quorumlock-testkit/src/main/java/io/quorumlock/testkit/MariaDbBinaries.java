package io.quorumlock.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds the MariaDB server ({@code mariadbd}), the tool that creates its data directory ({@code
 * mariadb-install-db}) and the command-line client ({@code mariadb}); see {@link
 * MariaDbServer#available()}.
 */
final class MariaDbBinaries {

    static final String BIN_ENV = "QUORUMLOCK_MARIADB_BIN";
    static final String SERVER = "mariadbd";
    static final String INSTALL_DB = "mariadb-install-db";
    static final String CLIENT = "mariadb";
    /** Where packages put mariadbd when it is not on the PATH: Debian's /usr/sbin, Red Hat's /usr/libexec. */
    static final List<Path> SERVER_DIRS = List.of(Path.of("/usr/sbin"), Path.of("/usr/libexec"));

    static final String INSTALL_HINT = "install it with `apt-get install mariadb-server` (Debian, Ubuntu) or set "
            + BIN_ENV + " to the mariadbd binary or the directory that holds it";

    /** The three programs the server needs. */
    record Binaries(Path server, Path installDb, Path client) {}

    /**
     * The outcome of one lookup: the programs, or why MariaDB cannot run here. {@code required}:
     * {@value #BIN_ENV} is set, so a failure is an error, not a reason to skip.
     */
    record Lookup(Optional<Binaries> binaries, Optional<String> unavailableReason, boolean required) {

        static Lookup found(Binaries binaries, boolean required) {
            return new Lookup(Optional.of(binaries), Optional.empty(), required);
        }

        static Lookup missing(String reason, boolean required) {
            return new Lookup(Optional.empty(), Optional.of(reason), required);
        }
    }

    private static Lookup resolved;
    private static final Map<Path, String> versions = new ConcurrentHashMap<>();

    private MariaDbBinaries() {}

    static synchronized Lookup lookup() {
        if (resolved == null) {
            resolved = resolve(System.getenv(), SERVER_DIRS);
        }
        return resolved;
    }

    /**
     * The {@code mariadbd} named by {@value #BIN_ENV} (the binary itself, or the directory that
     * holds it), else the one on the PATH, else the first in {@code serverDirs}. {@code
     * mariadb-install-db} and {@code mariadb} are looked up beside it, then in the {@code bin}
     * directory next to its own (Debian's mariadbd is in {@code /usr/sbin}, the tools in {@code
     * /usr/bin}), then on the PATH.
     */
    static Lookup resolve(Map<String, String> env, List<Path> serverDirs) {
        String configured = env.get(BIN_ENV);
        boolean required = configured != null && !configured.isBlank();
        String path = env.get("PATH");
        Path server;
        if (required) {
            Path named = Path.of(configured.trim());
            server = Files.isDirectory(named) ? named.resolve(SERVER) : named;
            if (!isExecutableFile(server)) {
                return Lookup.missing(
                        BIN_ENV + " is set to '" + configured + "', which is neither an executable " + SERVER
                                + " nor a directory that holds one: point it at " + SERVER
                                + " (such as /usr/sbin/mariadbd) or its directory, or unset it and install the"
                                + " Debian package mariadb-server (apt-get install mariadb-server)",
                        true);
            }
        } else {
            Optional<Path> found = RedisBinary.findOnPath(SERVER, path)
                    .or(() -> serverDirs.stream()
                            .map(dir -> dir.resolve(SERVER))
                            .filter(MariaDbBinaries::isExecutableFile)
                            .findFirst());
            if (found.isEmpty()) {
                return Lookup.missing(
                        "MariaDB not found: no " + SERVER + " on the PATH nor in "
                                + String.join(
                                        ", ",
                                        serverDirs.stream().map(Path::toString).toList()) + "; " + INSTALL_HINT,
                        false);
            }
            server = found.get();
        }
        Optional<Path> installDb = companion(server, INSTALL_DB, path);
        Optional<Path> client = companion(server, CLIENT, path);
        if (installDb.isEmpty() || client.isEmpty()) {
            String name = installDb.isEmpty() ? INSTALL_DB : CLIENT;
            return Lookup.missing(
                    "MariaDB's " + name + " not found beside " + server + ", in " + binBeside(server)
                            + " nor on the PATH; install it with `apt-get install mariadb-server mariadb-client`"
                            + " (Debian, Ubuntu)",
                    required);
        }
        return Lookup.found(new Binaries(server, installDb.get(), client.get()), required);
    }

    /** A program of the installation: beside mariadbd, in the {@code bin} next to its directory, or on the PATH. */
    private static Optional<Path> companion(Path server, String name, String path) {
        Path dir = server.toAbsolutePath().getParent();
        return Stream.of(dir.resolve(name), binBeside(server).resolve(name))
                .filter(MariaDbBinaries::isExecutableFile)
                .findFirst()
                .or(() -> RedisBinary.findOnPath(name, path));
    }

    private static Path binBeside(Path server) {
        return server.toAbsolutePath().getParent().resolveSibling("bin");
    }

    private static boolean isExecutableFile(Path file) {
        return Files.isRegularFile(file) && Files.isExecutable(file);
    }

    /** The version of {@code mariadbd --version}, such as {@code 10.11.19}; "unknown" if it cannot be read. */
    static String version(Path server) {
        return versions.computeIfAbsent(server, MariaDbBinaries::readVersion);
    }

    private static String readVersion(Path server) {
        try {
            Process process = new ProcessBuilder(server.toString(), "--no-defaults", "--version")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return "unknown";
            }
            return parseVersion(out);
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /** "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu ..." gives "10.11.19". */
    static String parseVersion(String output) {
        Matcher matcher = Pattern.compile("Ver\\s+(\\d+(\\.\\d+)*)").matcher(output);
        return matcher.find() ? matcher.group(1) : output;
    }
}
