package io.quorumlock.redis;

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
    void passwordWithoutUserAndDefaults() {
        NodeAddress a = NodeAddress.parse("redis://:pw@localhost");
        assertThat(a.user()).isEmpty();
        assertThat(a.password()).contains("pw");
        assertThat(a.port()).isEqualTo(6379);
        assertThat(a.database()).isZero();
        assertThat(NodeAddress.parse("redis://h:1").password()).isEqualTo(Optional.empty());
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
                "localhost:6379|the scheme must be redis://",
                "http://h:1|the scheme must be redis://",
                "redis://h:99999|invalid node URI",
                "redis://h:1/x|the path must be a database number",
                "redis://h:1?timeout=3|query parameters",
                "redis:// bad host|not a URI",
            })
    void rejectsBadUris(String uri, String message) {
        assertThatThrownBy(() -> NodeAddress.parse(uri))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void errorsNeverShowThePassword() {
        assertThatThrownBy(() -> NodeAddress.parse("redis://u:topsecret@h:1/x"))
                .hasMessageNotContaining("topsecret")
                .hasMessageContaining("***");
    }
}
