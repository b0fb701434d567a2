package io.quorumlock.torture;

import io.quorumlock.testkit.Processes;
import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renders an HTML file (such as a {@link Report}) in headless Chromium: to a PNG, or to its DOM as
 * serialized after loading.
 *
 * <p>The binary is the file named by the environment variable {@code QUORUMLOCK_CHROMIUM}, else
 * the first of {@code chromium}, {@code chromium-browser} and {@code google-chrome} on the PATH
 * (Debian's {@code chromium} package installs {@code /usr/bin/chromium}). Each render is one
 * Chromium process with a new profile in a {@code quorumlock-chromium-*} temporary directory (also
 * its working directory and config home, so nothing lands in {@code $HOME}), without sandbox (it
 * runs as root in CI), GPU, QUIC or any background networking. A render that outlives its timeout
 * is killed with every process it started; the directory is deleted afterwards either way. A
 * render takes about 1 s on an idle machine, a few on a loaded one.
 */
public final class Screenshot {

    /** The environment variable naming the Chromium binary. */
    public static final String CHROMIUM_ENV = "QUORUMLOCK_CHROMIUM";

    /** What to do when there is no Chromium. */
    public static final String INSTALL_HINT =
            "install Debian's chromium package (apt-get install chromium) or set " + CHROMIUM_ENV;

    private static final Logger log = LoggerFactory.getLogger(Screenshot.class);
    private static final List<String> NAMES = List.of("chromium", "chromium-browser", "google-chrome");
    /** The window height of {@link #png(Path, Path, int, Duration)}, before the blank bottom is cut. */
    private static final int TALL = 8000;
    /** Blank rows kept below the page's content by {@link #png(Path, Path, int, Duration)}. */
    private static final int MARGIN = 16;

    private static final Duration GRACE = Duration.ofSeconds(5);
    private static final int STDERR_LINES = 15;

    private Screenshot() {}

    /**
     * Finds Chromium: {@code QUORUMLOCK_CHROMIUM} if set, else the first of {@code chromium},
     * {@code chromium-browser} and {@code google-chrome} on the PATH.
     *
     * @return the binary, or empty if there is none
     * @throws IllegalStateException if {@code QUORUMLOCK_CHROMIUM} is set to something that is not
     *     an executable file
     */
    public static Optional<Path> chromium() {
        return find(System.getenv());
    }

    static Optional<Path> find(Map<String, String> env) {
        String configured = env.get(CHROMIUM_ENV);
        if (configured != null && !configured.isBlank()) {
            Path binary = Path.of(configured);
            if (!Files.isRegularFile(binary) || !Files.isExecutable(binary)) {
                throw new IllegalStateException(CHROMIUM_ENV + " is set to '" + configured
                        + "', which is not an executable file: point it at a Chromium binary, or unset it and"
                        + " install Debian's chromium package (apt-get install chromium)");
            }
            return Optional.of(binary);
        }
        String path = env.getOrDefault("PATH", "");
        for (String name : NAMES) {
            for (String dir : path.split(File.pathSeparator)) {
                Path candidate = dir.isEmpty() ? null : Path.of(dir, name);
                if (candidate != null && Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return Optional.of(candidate);
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Renders {@code html} in a {@code width} x {@code height} window and writes what shows to
     * {@code png}, {@code width} x {@code height} pixels (device scale 1, no scrollbars).
     *
     * @throws IllegalStateException if there is no Chromium ({@link #INSTALL_HINT}), or it fails or
     *     outlives {@code timeout} (the message carries the end of its stderr)
     */
    public static void png(Path html, Path png, int width, int height, Duration timeout) {
        if (width <= 0 || height <= 0) {
            throw new IllegalArgumentException("width and height must be positive, were " + width + "x" + height);
        }
        Path target = png.toAbsolutePath();
        try {
            Files.deleteIfExists(target); // not to take an old screenshot for this one
        } catch (IOException e) {
            throw new UncheckedIOException("cannot replace " + target, e);
        }
        run(html, timeout, "--screenshot=" + target, "--window-size=" + width + "," + height);
        if (!Files.isRegularFile(target)) {
            throw new IllegalStateException("Chromium exited normally but wrote no screenshot to " + target);
        }
    }

    /**
     * Renders {@code html} {@code width} pixels wide and as tall as its content: in a window of
     * 8000 pixels, whose blank bottom (the rows the colour of the last one) is then cut to a
     * margin of 16 pixels. A page taller than the window is cut at 8000 pixels.
     *
     * @throws IllegalStateException as {@link #png(Path, Path, int, int, Duration)}
     */
    public static void png(Path html, Path png, int width, Duration timeout) {
        png(html, png, width, TALL, timeout);
        try {
            BufferedImage image = ImageIO.read(png.toFile());
            int background = image.getRGB(0, image.getHeight() - 1);
            int last = image.getHeight() - 1;
            while (last > 0 && blankRow(image, last, background)) {
                last--;
            }
            if (last == image.getHeight() - 1) {
                log.warn("{} is taller than {} pixels: its screenshot is cut there", html, TALL);
                return;
            }
            int height = Math.min(image.getHeight(), last + 1 + MARGIN);
            ImageIO.write(image.getSubimage(0, 0, image.getWidth(), height), "png", png.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot crop the screenshot " + png, e);
        }
    }

    private static boolean blankRow(BufferedImage image, int y, int background) {
        for (int x = 0; x < image.getWidth(); x++) {
            if (image.getRGB(x, y) != background) {
                return false;
            }
        }
        return true;
    }

    /**
     * Renders {@code html} and returns its DOM as Chromium serializes it once the page has loaded
     * ({@code --dump-dom}).
     *
     * @throws IllegalStateException as {@link #png(Path, Path, int, int, Duration)}
     */
    public static String dom(Path html, Duration timeout) {
        return run(html, timeout, "--dump-dom");
    }

    /** Runs Chromium on {@code html} with {@code extra} arguments; returns its stdout. */
    private static String run(Path html, Duration timeout, String... extra) {
        Path binary = chromium()
                .orElseThrow(() -> new IllegalStateException("No Chromium found: " + CHROMIUM_ENV
                        + " is not set and none of " + NAMES + " is on the PATH: " + INSTALL_HINT));
        if (!Files.isRegularFile(html)) {
            throw new IllegalArgumentException("no such file: " + html);
        }
        Path dir = createTempDir();
        Process process = null;
        try {
            List<String> command = new ArrayList<>(List.of(
                    binary.toString(),
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    // Debian's wrapper adds this only for a small /dev/shm, and its test of the size can fail.
                    "--disable-dev-shm-usage",
                    "--hide-scrollbars",
                    "--force-device-scale-factor=1",
                    "--user-data-dir=" + dir.resolve("profile")));
            command.addAll(List.of(extra));
            command.add(html.toAbsolutePath().toUri().toString());
            Path out = dir.resolve("stdout");
            Path err = dir.resolve("stderr");
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile());
            // The crash reporter's database and dconf go under the config home: keep them in dir.
            builder.environment().put("XDG_CONFIG_HOME", dir.toString());
            builder.environment().put("XDG_CACHE_HOME", dir.toString());
            long start = System.nanoTime();
            process = builder.start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(
                        "Chromium did not render " + html + " within " + timeout + " and was killed" + stderrTail(err));
            }
            long millis = (System.nanoTime() - start) / 1_000_000;
            if (process.exitValue() != 0) {
                throw new IllegalStateException("Chromium (" + binary + ") exited with " + process.exitValue()
                        + " rendering " + html + stderrTail(err));
            }
            log.debug("Chromium rendered {} ({}) in {} ms", html, String.join(" ", extra), millis);
            return Files.readString(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot run Chromium (" + binary + "): " + e.getMessage() + "; " + INSTALL_HINT, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while Chromium rendered " + html, e);
        } finally {
            boolean interrupted = Thread.interrupted(); // cleaning up waits a little
            if (process != null && process.isAlive()) {
                // Its descendants, collected before it dies and they are reparented.
                List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
                all.add(process.toHandle());
                kill(all);
            }
            // Helpers that outlive the browser (its crash handlers are not its descendants) name dir.
            String marker = dir.toString();
            kill(ProcessHandle.allProcesses()
                    .filter(p -> p.info().commandLine().orElse("").contains(marker))
                    .toList());
            delete(dir);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Path createTempDir() {
        try {
            return Files.createTempDirectory("quorumlock-chromium-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary directory for Chromium", e);
        }
    }

    /** SIGKILLs the processes and waits until they are gone, at most a few seconds. */
    private static void kill(List<ProcessHandle> processes) {
        if (processes.isEmpty()) {
            return;
        }
        log.debug("killing {} Chromium processes", processes.size());
        processes.forEach(ProcessHandle::destroyForcibly);
        long deadline = System.nanoTime() + GRACE.toNanos();
        for (ProcessHandle p : processes) {
            while (Processes.isRunning(p) && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            if (Processes.isRunning(p)) {
                log.warn("Chromium process {} survived SIGKILL for {}", p.pid(), GRACE);
            }
        }
    }

    private static String stderrTail(Path err) {
        try {
            List<String> lines = new String(Files.readAllBytes(err), StandardCharsets.UTF_8)
                    .lines()
                    .filter(line -> !line.isBlank() && !line.contains("dbus/")) // no D-Bus in CI
                    .toList();
            List<String> tail = lines.subList(Math.max(0, lines.size() - STDERR_LINES), lines.size());
            return tail.isEmpty() ? "; its stderr is empty" : "; the end of its stderr:\n" + String.join("\n", tail);
        } catch (IOException e) {
            return "; its stderr cannot be read: " + e.getMessage();
        }
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | UncheckedIOException e) {
            log.warn("cannot delete Chromium's temporary directory {}: {}", dir, e.toString());
        }
    }
}
