package io.quorumlock.testkit;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Finds the {@code redis-server} binary to run; see {@link RedisServer#binary()}. */
final class RedisBinary {

    static final String BINARY_ENV = "QUORUMLOCK_REDIS_SERVER";
    static final String EMBEDDED_RESOURCE = "redis-server-6.2.6-v5-linux-amd64";

    private static final Logger log = LoggerFactory.getLogger(RedisBinary.class);
    private static Path resolved;

    private RedisBinary() {}

    /** Resolves the binary for this JVM once; a failure is thrown again on every call. */
    static synchronized Path path() {
        if (resolved == null) {
            resolved = resolve(System.getenv(), System.getProperty("os.name"), System.getProperty("os.arch"));
        }
        return resolved;
    }

    /** The environment variable, else the PATH, else the embedded binary (Linux x86-64 only). */
    static Path resolve(Map<String, String> env, String osName, String osArch) {
        String configured = env.get(BINARY_ENV);
        if (configured != null && !configured.isBlank()) {
            Path binary = Path.of(configured);
            if (!Files.isRegularFile(binary) || !Files.isExecutable(binary)) {
                throw new IllegalStateException(BINARY_ENV + " is set to '" + configured
                        + "', which is not an executable file: point it at a redis-server binary or unset it");
            }
            return binary;
        }
        Optional<Path> onPath = findOnPath("redis-server", env.get("PATH"));
        if (onPath.isPresent()) {
            return onPath.get();
        }
        if (isLinuxX86(osName, osArch)) {
            return extractEmbedded(KitCache.dir(env));
        }
        throw new IllegalStateException(
                "No redis-server found: it is not on the PATH, and the embedded binary only runs on"
                        + " Linux x86-64 (this is " + osName + " " + osArch + "). Install redis-server or set "
                        + BINARY_ENV
                        + " to its path.");
    }

    /** The first executable file named {@code program} in the directories of a PATH value. */
    static Optional<Path> findOnPath(String program, String path) {
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    private static boolean isLinuxX86(String osName, String osArch) {
        String arch = osArch.toLowerCase(Locale.ROOT);
        return osName.toLowerCase(Locale.ROOT).startsWith("linux") && (arch.equals("amd64") || arch.equals("x86_64"));
    }

    private static Path extractEmbedded(Path cacheDir) {
        Path target = cacheDir.resolve(EMBEDDED_RESOURCE);
        try {
            KitCache.installOnce(target, temporary -> {
                log.info("Extracting the embedded {} to {}", EMBEDDED_RESOURCE, target);
                try (InputStream in = RedisBinary.class.getClassLoader().getResourceAsStream(EMBEDDED_RESOURCE)) {
                    if (in == null) {
                        throw new IllegalStateException("No redis-server on the PATH, and the class-path resource "
                                + EMBEDDED_RESOURCE + " (from com.github.codemonstur:embedded-redis) is missing."
                                + " Install redis-server or set " + BINARY_ENV + " to its path.");
                    }
                    Files.copy(in, temporary, StandardCopyOption.REPLACE_EXISTING);
                }
                if (!temporary.toFile().setExecutable(true)) {
                    throw new IOException("Cannot make " + temporary + " executable");
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot extract " + EMBEDDED_RESOURCE + " to " + target, e);
        }
        return target;
    }
}
