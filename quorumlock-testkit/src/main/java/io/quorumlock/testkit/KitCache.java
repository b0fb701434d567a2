package io.quorumlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/** The directory where the kit keeps files it builds once per machine, and how it fills it. */
final class KitCache {

    static final String CACHE_ENV = "QUORUMLOCK_CACHE";

    private KitCache() {}

    /** Returns {@code $QUORUMLOCK_CACHE}, else {@code ~/.cache/quorumlock}, creating it if needed. */
    static Path dir(Map<String, String> env) {
        String configured = env.get(CACHE_ENV);
        Path dir = configured != null && !configured.isBlank()
                ? Path.of(configured)
                : Path.of(System.getProperty("user.home"), ".cache", "quorumlock");
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "Cannot create the cache directory " + dir + " (set " + CACHE_ENV + " to a writable directory)", e);
        }
    }

    /** Writes a file into a temporary file in the target's directory. */
    interface Writer {
        void writeTo(Path temporary) throws IOException;
    }

    /**
     * Returns {@code target}, creating it first if it does not exist: written to a temporary file
     * beside it, then renamed, so that parallel JVMs never see half a file.
     */
    static Path installOnce(Path target, Writer writer) throws IOException {
        if (Files.exists(target)) {
            return target;
        }
        Path temporary = Files.createTempFile(target.getParent(), target.getFileName() + ".", ".tmp");
        try {
            writer.writeTo(temporary);
            moveAtomically(temporary, target);
        } finally {
            Files.deleteIfExists(temporary);
        }
        return target;
    }

    /** Replaces {@code target} with {@code source} in one step. */
    static void moveAtomically(Path source, Path target) throws IOException {
        try {
            Files.move(source, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(source, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
