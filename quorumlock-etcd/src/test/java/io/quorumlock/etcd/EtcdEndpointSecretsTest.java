package io.quorumlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** An endpoint that carries credentials is refused, and neither the message nor its causes show them. */
class EtcdEndpointSecretsTest {

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "http://root:S3cr3t-Xq9@h:2379|'http://***@h:2379'",
                "http://root:S3cr3t/Xq9@h:2379|'http://***@h:2379'",
                "http://root:S3cr3t@Xq9@h:2379|'http://***@h:2379'",
                "http://S3cr3t-Xq9@h:2379|'http://***@h:2379'",
                "https://root:S3cr3t-Xq9@h:2379|'https://***@h:2379'",
                "ftp://root:S3cr3t-Xq9@h:2379|'ftp://***@h:2379'",
                "http://root:S3cr3t-Xq9@bad host:2379|'http://***@bad host:2379'",
                "http://root:S3cr3t-Xq9@h|'http://***@h'",
                "root:S3cr3t-Xq9@h:2379|'***@h:2379'",
                "http://h:2379?token=S3cr3t-Xq9|'http://h:2379?***'",
                "http://h:2379#S3cr3t-Xq9|'http://h:2379#***'",
            })
    void credentialsInAnEndpointAreNeverShown(String endpoint, String shown) {
        Throwable thrown = catchThrowable(() -> EtcdLock.builder()
                .endpoints("http://127.0.0.1:2379", endpoint)
                .build()
                .close());
        assertThat(thrown).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(shown);
        StringWriter printed = new StringWriter();
        thrown.printStackTrace(new PrintWriter(printed));
        assertThat(printed.toString()).doesNotContain("S3cr3t").doesNotContain("Xq9");
    }
}
