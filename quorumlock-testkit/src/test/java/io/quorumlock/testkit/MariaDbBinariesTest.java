package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MariaDbBinariesTest {

    @TempDir
    Path temp;

    @Test
    void findsDebiansLayoutTheServerInSbinTheToolsInBin() throws Exception {
        Path server = executable(temp.resolve("usr/sbin/mariadbd"));
        Path installDb = executable(temp.resolve("usr/bin/mariadb-install-db"));
        Path client = executable(temp.resolve("usr/bin/mariadb"));

        MariaDbBinaries.Lookup lookup = MariaDbBinaries.resolve(
                Map.of("PATH", temp.resolve("empty").toString()), List.of(temp.resolve("usr/sbin")));

        assertThat(lookup.binaries()).contains(new MariaDbBinaries.Binaries(server, installDb, client));
        assertThat(lookup.unavailableReason()).isEmpty();
        assertThat(lookup.required()).isFalse();
    }

    @Test
    void thePathComesBeforeTheUsualDirectoriesAndTheToolsBesideTheServerFirst() throws Exception {
        executable(temp.resolve("usr/sbin/mariadbd"));
        Path bin = temp.resolve("opt/mariadb/bin");
        Path server = executable(bin.resolve("mariadbd"));
        Path installDb = executable(bin.resolve("mariadb-install-db"));
        Path client = executable(bin.resolve("mariadb"));
        executable(temp.resolve("usr/bin/mariadb"));

        MariaDbBinaries.Lookup lookup =
                MariaDbBinaries.resolve(Map.of("PATH", bin.toString()), List.of(temp.resolve("usr/sbin")));

        assertThat(lookup.binaries()).contains(new MariaDbBinaries.Binaries(server, installDb, client));
    }

    @Test
    void theToolsMayComeFromThePath() throws Exception {
        Path server = executable(temp.resolve("libexec/mariadbd"));
        Path installDb = executable(temp.resolve("tools/mariadb-install-db"));
        Path client = executable(temp.resolve("tools/mariadb"));

        MariaDbBinaries.Lookup lookup = MariaDbBinaries.resolve(
                Map.of("PATH", temp.resolve("tools").toString()),
                List.of(temp.resolve("sbin"), temp.resolve("libexec")));

        assertThat(lookup.binaries()).contains(new MariaDbBinaries.Binaries(server, installDb, client));
    }

    @Test
    void withoutAnInstallationTheReasonNamesThePackageAndTheVariable() {
        MariaDbBinaries.Lookup lookup = MariaDbBinaries.resolve(
                Map.of("PATH", temp.resolve("empty").toString()), List.of(temp.resolve("sbin")));

        assertThat(lookup.binaries()).isEmpty();
        assertThat(lookup.required()).isFalse();
        assertThat(lookup.unavailableReason())
                .hasValueSatisfying(reason -> assertThat(reason)
                        .contains("MariaDB not found")
                        .contains("apt-get install mariadb-server")
                        .contains("QUORUMLOCK_MARIADB_BIN"));
    }

    @Test
    void aServerWithoutItsToolsIsNotEnough() throws Exception {
        executable(temp.resolve("usr/sbin/mariadbd"));
        executable(temp.resolve("usr/bin/mariadb-install-db"));

        MariaDbBinaries.Lookup lookup = MariaDbBinaries.resolve(
                Map.of("PATH", temp.resolve("empty").toString()), List.of(temp.resolve("usr/sbin")));

        assertThat(lookup.binaries()).isEmpty();
        assertThat(lookup.unavailableReason())
                .hasValueSatisfying(reason -> assertThat(reason)
                        .contains("mariadb not found")
                        .contains("apt-get install mariadb-server mariadb-client"));
    }

    @Test
    void theEnvironmentVariableNamesTheServerOrItsDirectoryAndMakesMariaDbRequired() throws Exception {
        executable(temp.resolve("usr/sbin/mariadbd"));
        Path bin = temp.resolve("custom/bin");
        Path server = executable(bin.resolve("mariadbd"));
        Path installDb = executable(bin.resolve("mariadb-install-db"));
        Path client = executable(bin.resolve("mariadb"));
        MariaDbBinaries.Binaries expected = new MariaDbBinaries.Binaries(server, installDb, client);

        for (Path named : List.of(server, bin)) {
            MariaDbBinaries.Lookup lookup = MariaDbBinaries.resolve(
                    Map.of(MariaDbBinaries.BIN_ENV, named.toString()), List.of(temp.resolve("usr/sbin")));

            assertThat(lookup.binaries()).contains(expected);
            assertThat(lookup.required()).isTrue();
            assertThat(lookup.unavailableReason()).isEmpty();
        }
    }

    @Test
    void aWrongEnvironmentVariableIsAnErrorNotASkip() throws Exception {
        executable(temp.resolve("usr/sbin/mariadbd"));
        executable(temp.resolve("usr/bin/mariadb-install-db"));
        executable(temp.resolve("usr/bin/mariadb"));
        String wrong = temp.resolve("missing").toString();

        MariaDbBinaries.Lookup lookup =
                MariaDbBinaries.resolve(Map.of(MariaDbBinaries.BIN_ENV, wrong), List.of(temp.resolve("usr/sbin")));

        assertThat(lookup.required()).isTrue();
        assertThat(lookup.binaries()).isEmpty();
        assertThat(lookup.unavailableReason())
                .hasValueSatisfying(reason ->
                        assertThat(reason).contains("QUORUMLOCK_MARIADB_BIN").contains(wrong));
    }

    @Test
    void readsTheVersionFromTheServersBanner() {
        assertThat(
                        MariaDbBinaries.parseVersion(
                                "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)"))
                .isEqualTo("10.11.19");
        assertThat(MariaDbBinaries.parseVersion("mariadbd  Ver 11.4.5-MariaDB for Linux on x86_64"))
                .isEqualTo("11.4.5");
    }

    @Test
    void quotesSqlLiterals() {
        assertThat(MariaDbServer.literal("it's a \\ test")).isEqualTo("'it''s a \\\\ test'");
    }

    private static Path executable(Path file) throws Exception {
        Files.createDirectories(file.getParent());
        Files.writeString(file, "#!/bin/sh\nexit 0\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
        return file;
    }
}
