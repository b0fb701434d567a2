package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RedisBinaryTest {

    @TempDir
    Path temp;

    @Test
    void anEnvironmentVariableNamingNoFileIsAClearError() {
        Map<String, String> env =
                Map.of(RedisBinary.BINARY_ENV, temp.resolve("missing").toString());
        assertThatThrownBy(() -> RedisBinary.resolve(env, "Linux", "amd64"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("QUORUMLOCK_REDIS_SERVER")
                .hasMessageContaining(temp.resolve("missing").toString());
    }

    @Test
    void theEnvironmentVariableWinsOverThePath() throws Exception {
        Path chosen = executable(temp.resolve("chosen"));
        Path onPath = executable(Files.createDirectory(temp.resolve("bin")).resolve("redis-server"));
        Map<String, String> env = Map.of(
                RedisBinary.BINARY_ENV,
                chosen.toString(),
                "PATH",
                onPath.getParent().toString());
        assertThat(RedisBinary.resolve(env, "Linux", "amd64")).isEqualTo(chosen);
    }

    @Test
    void findsRedisServerOnThePath() throws Exception {
        Path onPath = executable(Files.createDirectory(temp.resolve("bin")).resolve("redis-server"));
        Map<String, String> env = Map.of("PATH", temp.resolve("empty") + ":" + onPath.getParent());
        assertThat(RedisBinary.resolve(env, "Mac OS X", "aarch64")).isEqualTo(onPath);
    }

    @Test
    void extractsTheEmbeddedBinaryOnLinuxX86WithoutAnInstalledOne() throws Exception {
        Map<String, String> env = Map.of("PATH", temp.resolve("empty").toString(), KitCache.CACHE_ENV, temp.toString());

        Path binary = RedisBinary.resolve(env, "Linux", "amd64");

        assertThat(binary)
                .isEqualTo(temp.resolve(RedisBinary.EMBEDDED_RESOURCE))
                .isExecutable();
        assertThat(RedisBinary.resolve(env, "Linux", "amd64")).isEqualTo(binary); // cached
        try (var files = Files.list(temp)) {
            assertThat(files).containsExactly(binary); // no temporary file left
        }
        Process version = new ProcessBuilder(binary.toString(), "--version")
                .redirectErrorStream(true)
                .start();
        assertThat(version.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                .contains("v=6.2");
    }

    @Test
    void elsewhereWithoutAnInstalledBinaryTheErrorSaysWhatToDo() {
        Map<String, String> env = Map.of("PATH", temp.toString());
        assertThatThrownBy(() -> RedisBinary.resolve(env, "Mac OS X", "aarch64"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Install redis-server or set QUORUMLOCK_REDIS_SERVER");
    }

    private static Path executable(Path file) throws Exception {
        Files.writeString(file, "#!/bin/sh\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }
}
