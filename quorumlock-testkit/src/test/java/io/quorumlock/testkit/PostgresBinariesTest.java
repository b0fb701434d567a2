package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PostgresBinariesTest {

    @TempDir
    Path temp;

    @Test
    void picksTheHighestMajorThatHoldsTheServerBinaries() throws Exception {
        Path root = temp.resolve("postgresql");
        serverBinaries(root.resolve("9.6/bin"));
        serverBinaries(root.resolve("13/bin"));
        Files.createDirectories(root.resolve("16/bin")); // client only: no initdb, no postgres
        Files.createDirectories(root.resolve("notes"));

        PostgresBinaries.Lookup lookup = PostgresBinaries.resolve(Map.of(), root, false);

        assertThat(lookup.binDir()).contains(root.resolve("13/bin"));
        assertThat(lookup.runuser()).isEmpty();
        assertThat(lookup.unavailableReason()).isEmpty();
        assertThat(lookup.required()).isFalse();
    }

    @Test
    void withoutAnInstallationTheReasonNamesThePackage() {
        PostgresBinaries.Lookup lookup =
                PostgresBinaries.resolve(Map.of("PATH", temp.resolve("empty").toString()), temp.resolve("none"), false);

        assertThat(lookup.binDir()).isEmpty();
        assertThat(lookup.required()).isFalse();
        assertThat(lookup.unavailableReason())
                .hasValueSatisfying(reason -> assertThat(reason)
                        .contains("PostgreSQL not found")
                        .contains("apt-get install postgresql")
                        .contains("QUORUMLOCK_PG_BIN"));
    }

    @Test
    void findsInitdbOnThePath() throws Exception {
        Path bin = serverBinaries(temp.resolve("usr/bin"));
        PostgresBinaries.Lookup lookup =
                PostgresBinaries.resolve(Map.of("PATH", bin.toString()), temp.resolve("none"), false);
        assertThat(lookup.binDir()).contains(bin);
    }

    @Test
    void theEnvironmentVariableWinsAndMakesPostgresRequired() throws Exception {
        Path root = temp.resolve("postgresql");
        serverBinaries(root.resolve("15/bin"));
        Path chosen = serverBinaries(temp.resolve("custom/bin"));

        PostgresBinaries.Lookup lookup =
                PostgresBinaries.resolve(Map.of(PostgresBinaries.BIN_ENV, chosen.toString()), root, false);

        assertThat(lookup.binDir()).contains(chosen);
        assertThat(lookup.required()).isTrue();
        assertThat(lookup.unavailableReason()).isEmpty();
    }

    @Test
    void aWrongEnvironmentVariableIsAnErrorNotASkip() throws Exception {
        Path root = temp.resolve("postgresql");
        serverBinaries(root.resolve("15/bin"));
        String wrong = temp.resolve("missing").toString();

        PostgresBinaries.Lookup lookup = PostgresBinaries.resolve(Map.of(PostgresBinaries.BIN_ENV, wrong), root, false);

        assertThat(lookup.required()).isTrue();
        assertThat(lookup.binDir()).isEmpty();
        assertThat(lookup.unavailableReason())
                .hasValueSatisfying(reason ->
                        assertThat(reason).contains("QUORUMLOCK_PG_BIN").contains(wrong));
    }

    @Test
    void asRootItNeedsRunuser() throws Exception {
        Path root = temp.resolve("postgresql");
        serverBinaries(root.resolve("15/bin"));
        Path runuser = executable(Files.createDirectories(temp.resolve("sbin")).resolve("runuser"));

        PostgresBinaries.Lookup lookup =
                PostgresBinaries.resolve(Map.of("PATH", runuser.getParent().toString()), root, true);

        assertThat(lookup.binDir()).contains(root.resolve("15/bin"));
        assertThat(lookup.runuser()).contains(runuser);
    }

    private static Path serverBinaries(Path dir) throws Exception {
        Files.createDirectories(dir);
        executable(dir.resolve("initdb"));
        executable(dir.resolve("postgres"));
        return dir;
    }

    private static Path executable(Path file) throws Exception {
        Files.writeString(file, "#!/bin/sh\nexit 0\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
        return file;
    }
}
