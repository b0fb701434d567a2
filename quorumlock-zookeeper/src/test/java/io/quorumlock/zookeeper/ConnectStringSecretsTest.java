package io.quorumlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * ZooKeeper takes no credentials in a connect string (digest auth is set on the Curator client):
 * one written there anyway is refused before any client starts, and never shown.
 */
class ConnectStringSecretsTest {

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "user:S3cr3t-Xq9@zk1:2181|'***@zk1:2181'",
                "user:S3cr3t-Xq9@zk1|'***@zk1'",
                "zk1:2181,digest:S3cr3t/Xq9@zk2:2181|'***@zk2:2181'",
                "user:S3cr3t/Xq9@zk1:2181/app|'***@zk1:2181/app'",
                "user:S3cr3t,Xq9@zk1:2181|'***@zk1:2181'",
                "zookeeper://user:S3cr3t@Xq9@zk1:2181|'zookeeper://***@zk1:2181'",
                "zk1:2181?auth=S3cr3t-Xq9|'zk1:2181?***'",
            })
    void credentialsInAConnectStringAreNeverShown(String connectString, String shown) {
        Throwable thrown = catchThrowable(() ->
                ZooKeeperLock.builder().connectString(connectString).build().close());
        assertThat(thrown).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(shown);
        StringWriter printed = new StringWriter();
        thrown.printStackTrace(new PrintWriter(printed));
        assertThat(printed.toString()).doesNotContain("S3cr3t").doesNotContain("Xq9");
    }
}
