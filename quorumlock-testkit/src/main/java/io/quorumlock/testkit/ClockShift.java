package io.quorumlock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clock-shift library: a tiny LD_PRELOAD library (source: {@code clockshift.c} beside this
 * class) that adds an offset, read from a per-node file, to a process's wall clock and leaves its
 * monotonic clock alone. Plain libfaketime deadlocks Debian's jemalloc-linked redis-server, which
 * is why the kit builds its own with gcc on first use.
 */
final class ClockShift {

    /** Names the offset file for the library; its content is signed nanoseconds as decimal text. */
    static final String OFFSET_FILE_ENV = "QUORUMLOCK_CLOCK_OFFSET_FILE";

    private static final String SOURCE = "clockshift.c";
    private static final Duration BUILD_TIMEOUT = Duration.ofSeconds(60);
    private static final Logger log = LoggerFactory.getLogger(ClockShift.class);

    private static Build build;

    /** Either the built library or the reason there is none. */
    record Build(Optional<Path> library, Optional<String> unavailableReason) {}

    private ClockShift() {}

    /** The library to preload into every node, if it could be built. */
    static Optional<Path> library() {
        return build().library();
    }

    /** Why clock jumps are not available on this machine, if they are not. */
    static Optional<String> unavailableReason() {
        return build().unavailableReason();
    }

    /** Writes an offset file in one step (temporary file + rename), so the library never reads half of it. */
    static void writeOffset(Path file, Duration offset) {
        try {
            Path temporary = Files.createTempFile(file.getParent(), file.getFileName() + ".", ".tmp");
            Files.writeString(temporary, Long.toString(offset.toNanos()), StandardCharsets.US_ASCII);
            KitCache.moveAtomically(temporary, file);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the clock offset file " + file, e);
        }
    }

    private static synchronized Build build() {
        if (build == null) {
            build = tryBuild(System.getenv(), System.getProperty("os.name"));
            build.unavailableReason().ifPresent(reason -> log.warn("Clock jumps are not available: {}", reason));
        }
        return build;
    }

    /** Finds the library for this source in the cache, else builds it there with gcc. */
    static Build tryBuild(Map<String, String> env, String osName) {
        if (!osName.toLowerCase(Locale.ROOT).startsWith("linux")) {
            return unavailable("clock jumps need Linux: the clock-shift library is loaded with LD_PRELOAD");
        }
        try {
            byte[] source = readSource();
            Path target =
                    KitCache.dir(env).resolve("clockshift-" + sha256(source).substring(0, 16) + ".so");
            if (target.toString().matches(".*[\\s:].*")) {
                return unavailable("the cache directory " + target.getParent() + " contains a space or a colon,"
                        + " which LD_PRELOAD cannot take: set " + KitCache.CACHE_ENV + " to another directory");
            }
            if (Files.exists(target)) {
                return new Build(Optional.of(target), Optional.empty());
            }
            Optional<Path> gcc = RedisBinary.findOnPath("gcc", env.get("PATH"));
            if (gcc.isEmpty()) {
                return unavailable("gcc not found on PATH: clock jumps need it to build the clock-shift library");
            }
            KitCache.installOnce(target, temporary -> compile(gcc.get(), source, temporary));
            return new Build(Optional.of(target), Optional.empty());
        } catch (IOException | UncheckedIOException e) {
            return unavailable("cannot build the clock-shift library: " + e.getMessage());
        }
    }

    private static void compile(Path gcc, byte[] source, Path output) throws IOException {
        Path sourceFile = Files.createTempFile("quorumlock-clockshift-", ".c");
        try {
            Files.write(sourceFile, source);
            List<String> command =
                    List.of(gcc.toString(), "-shared", "-fPIC", "-O2", "-o", output.toString(), sourceFile.toString());
            log.info("Building the clock-shift library: {}", String.join(" ", command));
            Process process =
                    new ProcessBuilder(command).redirectErrorStream(true).start();
            process.getOutputStream().close();
            Duration timeout = TestTime.scaled(BUILD_TIMEOUT);
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IOException("gcc did not finish within " + timeout.toMillis() + " ms");
            }
            String messages = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (process.exitValue() != 0) {
                throw new IOException("gcc exited with " + process.exitValue() + ": " + messages);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while gcc was running", e);
        } finally {
            Files.deleteIfExists(sourceFile);
        }
    }

    private static byte[] readSource() throws IOException {
        try (InputStream in = ClockShift.class.getResourceAsStream(SOURCE)) {
            if (in == null) {
                throw new IOException("the resource " + SOURCE + " is missing from the class path");
            }
            return in.readAllBytes();
        }
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    private static Build unavailable(String reason) {
        return new Build(Optional.empty(), Optional.of(reason));
    }
}
