package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.TlsMaterial;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code quorumlock run} over TLS nodes, as a separate process: --tls-ca, mutual TLS from the config file. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunTlsIT {

    private static TlsMaterial material;
    private static RedisServer node;
    private static RedisServer mutual;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        material = TlsMaterial.generate();
        node = RedisServer.startTls(material, false);
        mutual = RedisServer.startTls(material, true);
    }

    @AfterAll
    static void stop() {
        mutual.close();
        node.close();
        material.close();
    }

    @Test
    void runsTheCommandOverTlsWithTheGivenCa() throws Exception {
        try (RunProcess run = RunProcess.start(
                dir,
                "--redis",
                node.uri(),
                "--tls-ca",
                material.caCertificate().toString(),
                "--resource",
                "tls",
                "--",
                "true")) {
            assertThat(run.exitCode()).as(run.err()).isZero();
        }
    }

    @Test
    void mutualTlsFromTheConfigFile() throws Exception {
        Path config = Files.writeString(
                dir.resolve("config"),
                "redis = " + mutual.uri() + "\nredis.tls.ca = " + material.caCertificate() + "\nredis.tls.cert = "
                        + material.clientCertificate() + "\nredis.tls.key = " + material.clientKey() + "\n");
        try (RunProcess run = RunProcess.start(dir, "--config", config.toString(), "--resource", "tls", "--", "true")) {
            assertThat(run.exitCode()).as(run.err()).isZero();
        }
    }

    @Test
    void withoutTheCaTheJdkTrustStoreRefusesTheNodeInOneLine() throws Exception {
        try (RunProcess run = RunProcess.start(dir, "--redis", node.uri(), "--resource", "tls", "--", "true")) {
            assertThat(run.exitCode()).isNotZero();
            assertThat(run.err())
                    .contains("TLS: untrusted certificate (subject CN=127.0.0.1, issuer CN=" + material.caName());
        }
    }
}
