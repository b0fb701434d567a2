package io.quorumlock.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.EtcdTlsExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code quorumlock run --etcd https://...} against real etcd members that serve TLS, as a separate
 * process: the CA from --tls-ca, mutual TLS from the config file, and a member the JDK trust store
 * refuses.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RunEtcdTlsIT {

    @RegisterExtension
    static final EtcdTlsExtension etcd = new EtcdTlsExtension();

    @TempDir
    Path dir;

    /** run with {@code options}, then a TTL and a connect timeout a JVM just started has time in, and the command. */
    private RunProcess run(List<String> options, String... command) {
        return RunProcess.start(
                dir,
                Stream.of(
                                options.stream(),
                                Stream.of("--resource", "tls", "--ttl", "10s", "--connect-timeout", "5s", "--"),
                                Stream.of(command))
                        .flatMap(s -> s)
                        .toArray(String[]::new));
    }

    @Test
    void runsTheCommandOverTlsWithTheGivenCaAndAFencingToken() throws Exception {
        List<String> options = List.of(
                "--etcd",
                etcd.server().tls().endpoint(),
                "--tls-ca",
                etcd.server().material().caCertificate().toString());
        try (RunProcess run = run(options, "sh", "-c", "echo $QUORUMLOCK_FENCING_TOKEN")) {
            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(Long.parseLong(run.out().trim())).isPositive();
        }
    }

    @Test
    void mutualTlsFromTheConfigFile() throws Exception {
        Path config = Files.writeString(
                dir.resolve("config"),
                "etcd = " + etcd.server().mutual().endpoint()
                        + "\netcd.tls.ca = " + etcd.server().material().caCertificate()
                        + "\netcd.tls.cert = " + etcd.server().material().clientCertificate()
                        + "\netcd.tls.key = " + etcd.server().material().clientKey() + "\n");
        try (RunProcess run = run(List.of("--config", config.toString()), "true")) {
            assertThat(run.exitCode()).as(run.err()).isZero();
        }
    }

    @Test
    void withoutTheCaTheMemberIsUnreachableInOneLine() throws Exception {
        String endpoint = etcd.server().tls().endpoint();
        try (RunProcess run = RunProcess.start(
                dir, "--etcd", endpoint, "--resource", "tls", "--connect-timeout", "2s", "--", "true")) {
            assertThat(run.exitCode()).as(run.err()).isEqualTo(RunCommand.UNAVAILABLE);
            assertThat(run.err().lines().toList())
                    .singleElement()
                    .asString()
                    .startsWith("quorumlock run: lock 'tls' not acquired: the lock service is unreachable")
                    .contains("etcd " + endpoint)
                    .contains("TLS handshake failed")
                    .doesNotContain("Exception");
        }
    }
}
