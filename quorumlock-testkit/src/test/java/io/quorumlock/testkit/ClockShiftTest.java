package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClockShiftTest {

    @TempDir
    Path cache;

    @Test
    void withoutGccTheReasonSaysSo() {
        Map<String, String> env =
                Map.of("PATH", cache.resolve("empty").toString(), KitCache.CACHE_ENV, cache.toString());

        ClockShift.Build build = ClockShift.tryBuild(env, "Linux");

        assertThat(build.library()).isEmpty();
        assertThat(build.unavailableReason())
                .hasValue("gcc not found on PATH: clock jumps need it to build the clock-shift library");
    }

    @Test
    void needsLinux() {
        ClockShift.Build build = ClockShift.tryBuild(Map.of(KitCache.CACHE_ENV, cache.toString()), "Mac OS X");

        assertThat(build.unavailableReason())
                .hasValueSatisfying(reason -> assertThat(reason).contains("Linux"));
    }

    @Test
    void buildsTheLibraryOnceIntoTheCache() throws Exception {
        String path = System.getenv("PATH");
        assumeTrue(RedisBinary.findOnPath("gcc", path).isPresent(), "gcc not found on PATH");
        Map<String, String> env = Map.of("PATH", path, KitCache.CACHE_ENV, cache.toString());

        Path library = ClockShift.tryBuild(env, "Linux").library().orElseThrow();

        assertThat(library.getParent()).isEqualTo(cache);
        assertThat(library.getFileName().toString()).matches("clockshift-[0-9a-f]{16}\\.so");
        try (var files = Files.list(cache)) {
            assertThat(files).containsExactly(library); // no temporary file left
        }
        Map<String, String> withoutGcc = Map.of("PATH", "", KitCache.CACHE_ENV, cache.toString());
        assertThat(ClockShift.tryBuild(withoutGcc, "Linux").library()).hasValue(library); // cached: gcc not needed
    }

    @Test
    void offsetFileHoldsSignedNanoseconds() throws Exception {
        Path file = cache.resolve("clock-offset");
        ClockShift.writeOffset(file, Duration.ofMinutes(-10));
        assertThat(Files.readString(file)).isEqualTo("-600000000000");
        ClockShift.writeOffset(file, Duration.ofMillis(1500));
        assertThat(Files.readString(file)).isEqualTo("1500000000");
        try (var files = Files.list(cache)) {
            assertThat(files).containsExactly(file);
        }
    }
}
