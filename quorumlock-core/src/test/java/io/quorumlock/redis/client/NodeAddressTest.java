package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NodeAddressTest {

    @Test
    void parsesFullUri() {
        NodeAddress a = NodeAddress.parse("redis://app:s3cret@Redis-1.example:6380/2");
        assertThat(a.host()).isEqualTo("redis-1.example");
        assertThat(a.port()).isEqualTo(6380);
        assertThat(a.database()).isEqualTo(2);
        assertThat(a.user()).contains("app");
        assertThat(a.password()).contains("s3cret");
        assertThat(a.toString()).isEqualTo("redis://redis-1.example:6380/2").doesNotContain("s3cret");
    }

    @Test
    void parsesASentinelAddress() {
        NodeAddress a =
                NodeAddress.parse("redis-sentinel://app:p@ss#1@S1.example:26380,s2.example,[::1]:26381/3#my-master");
        assertThat(a.sentinels()).isPresent();
        NodeAddress.Sentinels group = a.sentinels().get();
        assertThat(group.master()).isEqualTo("my-master");
        assertThat(group.nodes())
                .extracting(n -> n.getHostString() + " " + n.getPort())
                .containsExactly("s1.example 26380", "s2.example 26379", "[::1] 26381");
        assertThat(a.user()).contains("app");
        assertThat(a.password()).contains("p@ss#1");
        assertThat(a.database()).isEqualTo(3);
        assertThat(a.tls()).isFalse();
        assertThat(a.toString())
                .isEqualTo("redis-sentinel://s1.example:26380,s2.example:26379,[::1]:26381/3#my-master")
                .doesNotContain("p@ss");
        assertThat(a.server()).isEqualTo("the master s1.example:26380,s2.example:26379,[::1]:26381#my-master");
        NodeAddress tls = NodeAddress.parse("rediss-sentinel://h#m");
        assertThat(tls.tls()).isTrue();
        assertThat(tls.toString()).isEqualTo("rediss-sentinel://h:26379#m");
        NodeAddress master = a.at("10.0.0.7", 6390);
        assertThat(master.sentinels()).isEmpty();
        assertThat(master.toString()).isEqualTo("redis://10.0.0.7:6390/3");
        assertThat(master.password()).contains("p@ss#1");
    }

    @Test
    void parsesAClusterAddress() {
        NodeAddress a = NodeAddress.parse("redis-cluster://app:p@ss,1@N1.example:7000,n2.example,10.0.0.3:7002");
        assertThat(a.cluster()).isTrue();
        assertThat(a.sentinels()).isEmpty();
        assertThat(a.clusterSeeds())
                .extracting(n -> n.getHostString() + " " + n.getPort())
                .containsExactly("n1.example 7000", "n2.example 6379", "10.0.0.3 7002");
        assertThat(a.user()).contains("app");
        assertThat(a.password()).contains("p@ss,1");
        assertThat(a.toString())
                .isEqualTo("redis-cluster://n1.example:7000,n2.example:6379,10.0.0.3:7002")
                .doesNotContain("p@ss");
        assertThat(a.server()).isEqualTo("the cluster n1.example:7000,n2.example:6379,10.0.0.3:7002");
        assertThat(NodeAddress.parse("rediss-cluster://h:7000").toString()).isEqualTo("rediss-cluster://h:7000");
        assertThat(NodeAddress.parse("rediss-cluster://h:7000").tls()).isTrue();
        assertThat(NodeAddress.parse("redis://h:7000").cluster()).isFalse();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "redis-cluster://h:7000/1 | a Redis Cluster has database 0 only: leave the /db out",
                "redis-cluster://h:7000,h:7000 | the cluster node h:7000 is listed twice",
                "redis-cluster://h:7000#x | query parameters and fragments are not supported",
                "redis-cluster://h:99999 | the port must be between 1 and 65535",
                "redis-cluster://:pw@ | it names no host",
                "redis-cluster://h:7000,,h:7001 | a cluster node's address is not host:port"
            })
    void refusesABadClusterAddressSayingWhy(String uri, String why) {
        assertThatThrownBy(() -> NodeAddress.parse(uri))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(why)
                .hasMessageNotContaining("pw");
    }

    @Test
    void passwordWithoutUserAndDefaults() {
        NodeAddress a = NodeAddress.parse("redis://:pw@localhost");
        assertThat(a.user()).isEmpty();
        assertThat(a.password()).contains("pw");
        assertThat(a.port()).isEqualTo(6379);
        assertThat(a.database()).isZero();
        assertThat(NodeAddress.parse("redis://h:1").password()).isEqualTo(Optional.empty());
        assertThat(NodeAddress.parse("redis://[::1]:7000").host()).isEqualTo("[::1]");
    }

    /**
     * The userinfo is everything between {@code ://} and the last {@code @}; user and password
     * part at its first {@code :}; each is percent-decoded (UTF-8).
     */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            nullValues = "-",
            value = {
                "redis://pw@h:1|-|pw",
                "redis://:pw@h:1|-|pw",
                "redis://u:pw@h:1|u|pw",
                "redis://u:@h:1|u|-",
                "redis://@h:1|-|-",
                "redis://u:pa/ss@h:1|u|pa/ss",
                "redis://u:p@ss@h:1|u|p@ss",
                "redis://u:p:a:ss@h:1|u|p:a:ss",
                "redis://u:p/w@x:y@h:1/3|u|p/w@x:y",
                "redis://u:p%2Fw@h:1|u|p/w",
                "redis://u:p%25w@h:1|u|p%w",
                "redis://u%3Ax:p%40w@h:1|u:x|p@w",
                "redis://p%3Aw@h:1|-|p:w",
                "redis://u:p%C3%A9@h:1|u|pé",
                "redis://u:p?#w@h:1|u|p?#w",
            })
    void userInfoEndsAtTheLastAt(String uri, String user, String password) {
        NodeAddress a = NodeAddress.parse(uri);
        assertThat(a.host()).isEqualTo("h");
        assertThat(a.port()).isEqualTo(1);
        assertThat(a.user()).isEqualTo(Optional.ofNullable(user));
        assertThat(a.password()).isEqualTo(Optional.ofNullable(password));
        assertThat(a.toString()).doesNotContain("@").startsWith("redis://h:1");
    }

    @Test
    void redissTurnsTlsOn() {
        NodeAddress a = NodeAddress.parse("rediss://u:pw@Redis.example:6380/2");
        assertThat(a.tls()).isTrue();
        assertThat(a.host()).isEqualTo("redis.example");
        assertThat(a.toString()).isEqualTo("rediss://redis.example:6380/2");
        assertThat(NodeAddress.parse("redis://h:1").tls()).isFalse();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "localhost:6379|the scheme must be redis://, rediss://, redis-sentinel://, rediss-sentinel://, redis-cluster:// or rediss-cluster://",
                "http://h:1|the scheme must be redis://, rediss://, redis-sentinel://, rediss-sentinel://, redis-cluster:// or rediss-cluster://",
                "redis-sentinel://h:26379|it names no master: end it with #name",
                "redis-sentinel://h:26379#|it names no master",
                "redis-sentinel://h:26379#my master|the master's name must be",
                "redis-sentinel://h:26379,h:26379#m|the sentinel h:26379 is listed twice",
                "redis-sentinel://h:26379,#m|a sentinel's address is not host:port",
                "redis-sentinel://h:0#m|the port must be between 1 and 65535",
                "redis-sentinel://h:1/x#m|the path must be a database number",
                "redis://h:99999|the port must be between 1 and 65535",
                "redis://h:0|the port must be between 1 and 65535",
                "redis://h:abc|the port must be a number",
                "redis://h:1/x|the path must be a database number",
                "redis://h:1/-1|the path must be a database number",
                "redis://h:1?timeout=3|query parameters",
                "redis://h:1#top|query parameters",
                "redis:// bad host|not a URI",
                "redis://|names no host",
                "redis://u:p@|names no host",
                "redis://u:p%zz@h:1|write a literal % as %25",
                "redis://u:p%2@h:1|write a literal % as %25",
                "redis://u:p%C3@h:1|not UTF-8",
            })
    void rejectsBadUris(String uri, String message) {
        assertThatThrownBy(() -> NodeAddress.parse(uri))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message)
                .hasNoCause();
    }

    /**
     * Whatever is wrong with a node's address, the message lists the schemes accepted.
     */
    @ParameterizedTest
    @CsvSource({
        "redis-sentinel://h:26379",
        "redis+sentinel://h:26379",
        "redis-cluster://h:7000/1",
        "localhost:6379",
        "redis://h:99999",
        "rediss://h:1/x",
        "redis://",
        "redis://h:1?timeout=3",
    })
    void everyMessageListsTheSchemesAccepted(String uri) {
        assertThatThrownBy(() -> NodeAddress.parse(uri))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageEndingWith("(expected redis://[user:password@]host:port[/db], or rediss:// for TLS, or"
                        + " redis-sentinel://[user:password@]host:port[,host:port...][/db]#master for a master that"
                        + " Redis Sentinel manages (rediss-sentinel:// for TLS), or"
                        + " redis-cluster://[user:password@]host:port[,host:port...] for a Redis Cluster"
                        + " (rediss-cluster:// for TLS))");
    }

    @Test
    void anEmptyAddressNamesBothSchemes() {
        assertThatThrownBy(() -> NodeAddress.parse(" "))
                .hasMessage("node URI must not be empty: give redis://host:port, or rediss://host:port for TLS");
    }

    /** Every bad URI that carries a secret: the message names the problem and shows {@code ***} in its place. */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "rediss://S3cr3t-Xq9@h:99999|rediss://***@h:99999",
                "redis://S3cr3t-Xq9@h:99999|redis://***@h:99999",
                "redis://:S3cr3t-Xq9@h:99999|redis://***@h:99999",
                "redis://u:pa/S3cr3t-Xq9@h:1/x|redis://***@h:1/x",
                "redis://u:S3cr3t@Xq9@h:1/x|redis://***@h:1/x",
                "redis://u:S3cr3t:Xq9@h:abc|redis://***@h:abc",
                "redis://u:S3cr3t%2FXq9@h:1?a=b|redis://***@h:1?***",
                "redis://h:1?password=S3cr3t-Xq9|redis://h:1?***",
                "redis://h:1#S3cr3t-Xq9|redis://h:1#***",
                "redis://u:S3cr3t%zzXq9@h:1|redis://***@h:1",
                "redis://u:S3cr3t%C3Xq9@h:1|redis://***@h:1",
                "redis://u:S3cr3t-Xq9@|redis://***@",
                "redis://u:S3cr3t-Xq9@bad host:1|redis://***@bad host:1",
                "http://u:S3cr3t-Xq9@h:1|http://***@h:1",
                "u:S3cr3t-Xq9@h:1|***@h:1",
                "REDIS://u:S3cr3t/Xq9@h:1/-2|REDIS://***@h:1/-2",
            })
    void errorsShowTheUriWithItsSecretsReplaced(String uri, String shown) {
        assertThatThrownBy(() -> NodeAddress.parse(uri))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + shown + "'")
                .hasMessageNotContaining("S3cr3t")
                .hasMessageNotContaining("Xq9")
                .hasNoCause();
    }

    @Test
    void errorsNeverShowThePassword() {
        assertThatThrownBy(() -> NodeAddress.parse("redis://u:topsecret@h:1/x"))
                .hasMessageNotContaining("topsecret")
                .hasMessageContaining("***");
    }
}
