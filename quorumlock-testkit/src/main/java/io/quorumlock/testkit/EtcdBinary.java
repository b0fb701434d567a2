package io.quorumlock.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Finds the {@code etcd} binary to run; see {@link EtcdCluster#binary()}. */
final class EtcdBinary {

    static final String BINARY_ENV = "QUORUMLOCK_ETCD_BIN";
    static final Path DEBIAN_PATH = Path.of("/usr/bin/etcd");
    static final String INSTALL_HINT = "install the Debian package etcd-server (apt-get install etcd-server) or set "
            + BINARY_ENV + " to an etcd 3.4+ binary";

    private static final Pattern VERSION = Pattern.compile("etcd Version: (\\S+)");

    /** The outcome of the one resolution per JVM: a binary, or why there is none. */
    private record Resolution(Path binary, String problem) {}

    private static Resolution resolved;
    private static String version;

    private EtcdBinary() {}

    /** The binary for this JVM, or why there is none; resolved once. */
    private static synchronized Resolution resolution() {
        if (resolved == null) {
            try {
                resolved = new Resolution(resolve(System.getenv(), DEBIAN_PATH), null);
            } catch (IllegalStateException e) {
                resolved = new Resolution(null, e.getMessage());
            }
        }
        return resolved;
    }

    /** The binary, resolved once per JVM. */
    static Path path() {
        Resolution resolution = resolution();
        if (resolution.binary() == null) {
            throw new IllegalStateException(resolution.problem());
        }
        return resolution.binary();
    }

    /** Why there is no binary, or empty if there is one. */
    static Optional<String> unavailableReason() {
        return Optional.ofNullable(resolution().problem());
    }

    /** The environment variable, else {@code etcd} on the PATH, else {@code fallback} (Debian's /usr/bin/etcd). */
    static Path resolve(Map<String, String> env, Path fallback) {
        String configured = env.get(BINARY_ENV);
        if (configured != null && !configured.isBlank()) {
            Path binary = Path.of(configured);
            if (!Files.isRegularFile(binary) || !Files.isExecutable(binary)) {
                throw new IllegalStateException(BINARY_ENV + " is set to '" + configured
                        + "', which is not an executable file: point it at an etcd binary, or unset it and "
                        + INSTALL_HINT.substring(0, INSTALL_HINT.indexOf(" or set")));
            }
            return binary;
        }
        Optional<Path> onPath = RedisBinary.findOnPath("etcd", env.get("PATH"));
        if (onPath.isPresent()) {
            return onPath.get();
        }
        if (Files.isRegularFile(fallback) && Files.isExecutable(fallback)) {
            return fallback;
        }
        throw new IllegalStateException(
                "No etcd binary found: it is not on the PATH nor at " + fallback + ": " + INSTALL_HINT);
    }

    /** {@code etcd --version}'s version number, asked once; "unknown" if it cannot be read. */
    static synchronized String version() {
        if (version == null) {
            version = askVersion(path());
        }
        return version;
    }

    private static String askVersion(Path binary) {
        try {
            Process process = new ProcessBuilder(binary.toString(), "--version")
                    .redirectErrorStream(true)
                    .start();
            byte[] out = process.getInputStream().readAllBytes();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return "unknown";
            }
            Matcher matcher = VERSION.matcher(new String(out, StandardCharsets.UTF_8));
            return matcher.find() ? matcher.group(1) : "unknown";
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }
}
