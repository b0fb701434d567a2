package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EtcdBinaryTest {

    @TempDir
    Path temp;

    @Test
    void theEnvironmentVariableWinsOverThePathAndTheFallback() throws Exception {
        Path chosen = executable(temp.resolve("chosen"));
        Path onPath = executable(Files.createDirectory(temp.resolve("bin")).resolve("etcd"));
        Map<String, String> env = Map.of(
                EtcdBinary.BINARY_ENV,
                chosen.toString(),
                "PATH",
                onPath.getParent().toString());
        assertThat(EtcdBinary.resolve(env, executable(temp.resolve("fallback"))))
                .isEqualTo(chosen);
    }

    @Test
    void findsEtcdOnThePathBeforeTheFallback() throws Exception {
        Path onPath = executable(Files.createDirectory(temp.resolve("bin")).resolve("etcd"));
        Map<String, String> env = Map.of("PATH", temp.resolve("empty") + ":" + onPath.getParent());
        assertThat(EtcdBinary.resolve(env, executable(temp.resolve("fallback"))))
                .isEqualTo(onPath);
    }

    @Test
    void fallsBackToTheDebianPath() throws Exception {
        Path fallback = executable(temp.resolve("usr-bin-etcd"));
        assertThat(EtcdBinary.resolve(Map.of("PATH", temp.resolve("empty").toString()), fallback))
                .isEqualTo(fallback);
    }

    @Test
    void withoutABinaryTheMessageNamesThePackageToInstall() {
        assertThatThrownBy(() -> EtcdBinary.resolve(Map.of(), temp.resolve("missing")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("No etcd binary found")
                .hasMessageContaining("apt-get install etcd-server")
                .hasMessageContaining("QUORUMLOCK_ETCD_BIN");
    }

    @Test
    void anEnvironmentVariableNamingNoFileIsAClearError() {
        Map<String, String> env =
                Map.of(EtcdBinary.BINARY_ENV, temp.resolve("missing").toString());
        assertThatThrownBy(() -> EtcdBinary.resolve(env, temp.resolve("fallback")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("QUORUMLOCK_ETCD_BIN")
                .hasMessageContaining(temp.resolve("missing").toString());
    }

    @Test
    void availabilityAgreesWithTheReason() {
        assertThat(EtcdCluster.available())
                .isEqualTo(EtcdCluster.unavailableReason().isEmpty());
        EtcdCluster.unavailableReason().ifPresent(reason -> assertThat(reason).contains("apt-get install etcd-server"));
    }

    private static Path executable(Path file) throws Exception {
        Files.writeString(file, "#!/bin/sh\nexit 0\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
        return file;
    }
}
