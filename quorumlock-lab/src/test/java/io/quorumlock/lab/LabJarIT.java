package io.quorumlock.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/** The lab's jar, which {@code ./quorumlock torture} and {@code nodes} run from. */
class LabJarIT {

    @Test
    void theJarCarriesTheDriversOfTheDatabaseStrategies() throws Exception {
        Path jar =
                Path.of(System.getProperty("basedir", System.getProperty("user.dir")), "target", "quorumlock-lab.jar");
        assertThat(jar)
                .as("run the integration tests after 'package' (mvn verify)")
                .satisfies(Files::isRegularFile);
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            assertThat(zip.getEntry("org/postgresql/Driver.class")).as("pgjdbc").isNotNull();
            assertThat(zip.getEntry("org/mariadb/jdbc/Driver.class"))
                    .as("MariaDB Connector/J")
                    .isNotNull();
            assertThat(zip.getEntry("org/h2/Driver.class"))
                    .as("H2, the torture's record")
                    .isNotNull();
        }
    }
}
