package io.quorumlock.torture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Finding the binary; the renders themselves are in {@link ReportRenderIT}. */
class ScreenshotTest {

    @TempDir
    Path temp;

    @Test
    void theEnvironmentVariableWinsOverThePath() throws Exception {
        Path chosen = executable(temp.resolve("my-chrome"));
        Path onPath = executable(Files.createDirectory(temp.resolve("bin")).resolve("chromium"));
        Map<String, String> env = Map.of(
                Screenshot.CHROMIUM_ENV,
                chosen.toString(),
                "PATH",
                onPath.getParent().toString());

        assertThat(Screenshot.find(env)).contains(chosen);
    }

    @Test
    void prefersChromiumThenChromiumBrowserThenGoogleChromeOnThePath() throws Exception {
        Path first = Files.createDirectory(temp.resolve("first"));
        Path second = Files.createDirectory(temp.resolve("second"));
        Path chrome = executable(first.resolve("google-chrome"));
        Path browser = executable(second.resolve("chromium-browser"));
        Map<String, String> env = Map.of("PATH", temp.resolve("missing") + ":" + first + "::" + second);

        assertThat(Screenshot.find(env)).contains(browser);
        Files.delete(browser);
        assertThat(Screenshot.find(env)).contains(chrome);
        Files.writeString(first.resolve("chromium"), "not executable");
        assertThat(Screenshot.find(env)).contains(chrome);
    }

    @Test
    void withoutVariableNorBinaryThereIsNone() {
        assertThat(Screenshot.find(Map.of("PATH", temp.toString()))).isEmpty();
        assertThat(Screenshot.find(Map.of())).isEmpty();
        assertThat(Screenshot.INSTALL_HINT).contains("apt-get install chromium").contains("QUORUMLOCK_CHROMIUM");
    }

    @Test
    void aVariableNamingNoExecutableIsAClearErrorNotAnEmptyResult() {
        Path missing = temp.resolve("missing");
        Map<String, String> env = Map.of(Screenshot.CHROMIUM_ENV, missing.toString());

        assertThatThrownBy(() -> Screenshot.find(env))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("QUORUMLOCK_CHROMIUM")
                .hasMessageContaining(missing.toString())
                .hasMessageContaining("chromium package");
    }

    private static Path executable(Path file) throws Exception {
        Files.writeString(file, "#!/bin/sh\nexit 0\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
        return file;
    }
}
