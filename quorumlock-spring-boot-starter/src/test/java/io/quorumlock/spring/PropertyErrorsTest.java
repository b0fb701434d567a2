package io.quorumlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.IllegalSettingException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A refused setting is named by its property, found by the setting's name and index, never by the message. */
class PropertyErrorsTest {

    private static final Map<String, String> REDIS = QuorumlockAutoConfiguration.RedisLockConfiguration.PROPERTIES;

    private static String property(Map<String, String> table, String setting, int index) {
        return PropertyErrors.property(table, new IllegalSettingException(setting, index, "any words at all"));
    }

    @Test
    void eachRedisSettingHasItsProperty() {
        assertThat(property(REDIS, "nodeTimeout", -1)).isEqualTo("quorumlock.redis.node-timeout");
        assertThat(property(REDIS, "connectTimeout", -1)).isEqualTo("quorumlock.redis.connect-timeout");
        assertThat(property(REDIS, "maxConnectionsPerNode", -1)).isEqualTo("quorumlock.redis.max-connections-per-node");
        assertThat(property(REDIS, "nodes", 1)).isEqualTo("quorumlock.redis.nodes[1]");
        assertThat(property(REDIS, "nodes", -1)).isEqualTo("quorumlock.redis.nodes");
        assertThat(property(REDIS, "tlsCaBundle", -1)).isEqualTo("quorumlock.redis.tls.ca");
        assertThat(property(REDIS, "tlsClientCertificate", -1)).isEqualTo("quorumlock.redis.tls.cert");
        assertThat(property(REDIS, "tlsClientCertificate", 0)).isEqualTo("quorumlock.redis.tls.cert");
        assertThat(property(REDIS, "tlsClientCertificate", 1)).isEqualTo("quorumlock.redis.tls.key");
    }

    @Test
    void theOtherBackendsHaveTheirOwnTables() {
        assertThat(property(QuorumlockAutoConfiguration.ZooKeeperLockConfiguration.PROPERTIES, "sessionTimeout", -1))
                .isEqualTo("quorumlock.zookeeper.session-timeout");
        assertThat(property(QuorumlockAutoConfiguration.ZooKeeperLockConfiguration.PROPERTIES, "connectString", -1))
                .isEqualTo("quorumlock.zookeeper.connect-string");
        assertThat(property(QuorumlockAutoConfiguration.EtcdLockConfiguration.PROPERTIES, "endpoints", 2))
                .isEqualTo("quorumlock.etcd.endpoints[2]");
    }

    @Test
    void aSettingWithoutPropertyIsNamedAsTheBuilderNamesIt() {
        assertThat(property(REDIS, "holder", -1)).isEqualTo("holder");
        assertThat(property(QuorumlockAutoConfiguration.ZooKeeperLockConfiguration.PROPERTIES, "connectTimeout", -1))
                .isEqualTo("connectTimeout");
    }

    @Test
    void aRefusalBecomesAPropertyExceptionWithTheMessageAfterTheProperty() {
        QuorumlockPropertyException named = catchThrowableOfType(
                QuorumlockPropertyException.class,
                () -> PropertyErrors.naming("quorumlock.redis", REDIS, () -> {
                    throw new IllegalSettingException("nodeTimeout", "the timeout is too long");
                }));
        assertThat(named).hasMessage("quorumlock.redis.node-timeout: the timeout is too long");
        QuorumlockPropertyException unnamed = catchThrowableOfType(
                QuorumlockPropertyException.class,
                () -> PropertyErrors.naming("quorumlock.redis", REDIS, () -> {
                    throw new IllegalArgumentException("nodeTimeout is wrong");
                }));
        assertThat(unnamed).hasMessage("quorumlock.redis: nodeTimeout is wrong");
    }
}
