package io.quorumlock.spring;

import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import io.quorumlock.LockListener;
import io.quorumlock.etcd.EtcdLock;
import io.quorumlock.etcd.EtcdLockBuilder;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.jdbc.JdbcLockBuilder;
import io.quorumlock.redis.Redlock;
import io.quorumlock.redis.RedlockBuilder;
import io.quorumlock.zookeeper.ZooKeeperLock;
import io.quorumlock.zookeeper.ZooKeeperLockBuilder;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.ConfigurationPropertiesBindHandlerAdvisor;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Fallback;
import org.springframework.core.env.Environment;

/**
 * The {@link DistributedLock} of the backend that the {@code quorumlock.*} properties configure,
 * as a bean of its own type ({@link Redlock}, {@link ZooKeeperLock}, {@link EtcdLock} or {@link
 * JdbcLock}) that the context closes, told of its events by every {@link LockListener} bean. A
 * fenced lock is a {@code DistributedLock<FencedLease>}; the bean {@value #LEASE_VIEW} gives it to
 * the injection points of {@code DistributedLock<Lease>} as well (a {@link Fallback} bean: where
 * both match, the lock itself is injected). An application's own {@code DistributedLock} bean
 * replaces them.
 */
@AutoConfiguration
@EnableConfigurationProperties(QuorumlockProperties.class)
public class QuorumlockAutoConfiguration {

    /** The name of the bean that gives a fenced lock to the injection points of {@code DistributedLock<Lease>}. */
    static final String LEASE_VIEW = "quorumlockLock";

    /** Refuses a {@code quorumlock.*} duration without a unit, naming the property. */
    @Bean
    static ConfigurationPropertiesBindHandlerAdvisor quorumlockDurationUnits() {
        return DurationUnits.advisor();
    }

    /** Every {@link LockListener} bean (such as the meters), in order, as the one listener of the lock. */
    static LockListener listener(ObjectProvider<LockListener> listeners) {
        List<LockListener> all = listeners.orderedStream().toList();
        return all.isEmpty()
                ? LockListener.NONE
                : all.size() == 1 ? all.get(0) : LockListener.composite(all.toArray(LockListener[]::new));
    }

    @Configuration(proxyBeanMethods = false)
    @Conditional(OnBackend.Redis.class)
    static class RedisLockConfiguration {

        /** The property of each setting of {@link RedlockBuilder} that the properties set. */
        static final Map<String, String> PROPERTIES = Map.of(
                "nodes", "quorumlock.redis.nodes[]",
                "password", "quorumlock.redis.password",
                "nodeTimeout", "quorumlock.redis.node-timeout",
                "connectTimeout", "quorumlock.redis.connect-timeout",
                "maxConnectionsPerNode", "quorumlock.redis.max-connections-per-node",
                "restartGuard", "quorumlock.redis.restart-guard",
                "waitForReplicas", "quorumlock.redis.wait-for-replicas",
                "tlsCaBundle", "quorumlock.redis.tls.ca",
                "tlsClientCertificate", "quorumlock.redis.tls.cert",
                "tlsClientCertificate[1]", "quorumlock.redis.tls.key");

        /** As {@link #PROPERTIES}, with the node the Sentinel properties make. */
        static final Map<String, String> SENTINEL_PROPERTIES = sentinelProperties();

        /** As {@link #PROPERTIES}, with the node the cluster properties make. */
        static final Map<String, String> CLUSTER_PROPERTIES = propertiesWithNodes("quorumlock.redis.cluster.nodes");

        private static Map<String, String> sentinelProperties() {
            return propertiesWithNodes("quorumlock.redis.sentinel.nodes");
        }

        private static Map<String, String> propertiesWithNodes(String nodes) {
            Map<String, String> properties = new java.util.HashMap<>(PROPERTIES);
            properties.put("nodes", nodes);
            return Map.copyOf(properties);
        }

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(DistributedLock.class)
        Redlock quorumlockRedlock(QuorumlockProperties properties, ObjectProvider<LockListener> listeners) {
            QuorumlockProperties.Redis redis = properties.getRedis();
            QuorumlockProperties.Tls tls = redis.getTls();
            Placeholders.check("quorumlock.redis.nodes", redis.getNodes());
            QuorumlockProperties.Sentinel sentinel = redis.getSentinel();
            boolean sentinels = sentinel.getMaster() != null;
            if (sentinels) {
                Placeholders.check("quorumlock.redis.sentinel.master", sentinel.getMaster());
                Placeholders.check("quorumlock.redis.sentinel.nodes", sentinel.getNodes());
                if (!redis.getNodes().isEmpty()) {
                    throw new QuorumlockPropertyException("quorumlock.redis.nodes and quorumlock.redis.sentinel.master"
                            + " are both set: the lock is on the master the sentinels name, or on the nodes listed;"
                            + " remove one of them");
                }
                if (sentinel.getNodes().isEmpty()) {
                    throw new QuorumlockPropertyException("quorumlock.redis.sentinel.nodes is empty: list the"
                            + " sentinels that watch the master " + sentinel.getMaster() + ", such as"
                            + " quorumlock.redis.sentinel.nodes=10.0.0.5:26379,10.0.0.6:26379,10.0.0.7:26379");
                }
            }
            QuorumlockProperties.Cluster cluster = redis.getCluster();
            boolean clustered = !cluster.getNodes().isEmpty();
            if (clustered) {
                Placeholders.check("quorumlock.redis.cluster.nodes", cluster.getNodes());
                if (!redis.getNodes().isEmpty() || sentinels) {
                    throw new QuorumlockPropertyException("quorumlock.redis.cluster.nodes and "
                            + (sentinels ? "quorumlock.redis.sentinel.master" : "quorumlock.redis.nodes")
                            + " are both set: the lock is on the cluster, or on "
                            + (sentinels ? "the master the sentinels name" : "the nodes listed")
                            + "; remove one of them");
                }
            }
            Placeholders.check("quorumlock.redis.password", redis.getPassword());
            Placeholders.check("quorumlock.redis.tls.ca", Objects.toString(tls.getCa(), null));
            Placeholders.check("quorumlock.redis.tls.cert", Objects.toString(tls.getCert(), null));
            Placeholders.check("quorumlock.redis.tls.key", Objects.toString(tls.getKey(), null));
            Map<String, String> named = sentinels ? SENTINEL_PROPERTIES : clustered ? CLUSTER_PROPERTIES : PROPERTIES;
            return PropertyErrors.naming("quorumlock.redis", named, () -> {
                RedlockBuilder builder = Redlock.builder()
                        .nodes(
                                sentinels
                                        ? List.of(sentinel.uri())
                                        : clustered ? List.of(cluster.uri()) : redis.getNodes())
                        .password(redis.getPassword())
                        .nodeTimeout(redis.getNodeTimeout())
                        .maxConnectionsPerNode(redis.getMaxConnectionsPerNode())
                        .listener(listener(listeners));
                if (redis.getConnectTimeout() != null) {
                    builder.connectTimeout(redis.getConnectTimeout());
                }
                if (redis.getRestartGuard() != null) {
                    builder.restartGuard(redis.getRestartGuard());
                }
                if (redis.getWaitForReplicas() != null || redis.getReplicaTimeout() != null) {
                    builder.waitForReplicas(
                            redis.getWaitForReplicas() != null ? redis.getWaitForReplicas() : 1,
                            redis.getReplicaTimeout() != null
                                    ? redis.getReplicaTimeout()
                                    : redis.getNodeTimeout().dividedBy(2));
                }
                if (tls.getCa() != null) {
                    builder.tlsCaBundle(tls.getCa());
                }
                if (tls.getCert() != null || tls.getKey() != null) {
                    builder.tlsClientCertificate(tls.getCert(), tls.getKey());
                }
                return builder.build();
            });
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Conditional(OnBackend.ZooKeeper.class)
    static class ZooKeeperLockConfiguration {

        /** The property of each setting of {@link ZooKeeperLockBuilder} that the properties set. */
        static final Map<String, String> PROPERTIES = Map.of(
                "connectString", "quorumlock.zookeeper.connect-string",
                "sessionTimeout", "quorumlock.zookeeper.session-timeout");

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(DistributedLock.class)
        ZooKeeperLock quorumlockZooKeeperLock(QuorumlockProperties properties, ObjectProvider<LockListener> listeners) {
            QuorumlockProperties.ZooKeeper zookeeper = properties.getZookeeper();
            Placeholders.check("quorumlock.zookeeper.connect-string", zookeeper.getConnectString());
            return PropertyErrors.naming("quorumlock.zookeeper", PROPERTIES, () -> {
                ZooKeeperLockBuilder builder = ZooKeeperLock.builder()
                        .connectString(zookeeper.getConnectString())
                        .listener(listener(listeners));
                if (zookeeper.getSessionTimeout() != null) {
                    builder.sessionTimeout(zookeeper.getSessionTimeout());
                }
                return builder.build();
            });
        }

        @Bean(name = LEASE_VIEW, destroyMethod = "")
        @Fallback
        @ConditionalOnBean(name = "quorumlockZooKeeperLock")
        DistributedLock<Lease> quorumlockLock(ZooKeeperLock lock) {
            return new LeaseView(lock);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Conditional(OnBackend.Etcd.class)
    static class EtcdLockConfiguration {

        /** The property of each setting of {@link EtcdLockBuilder} that the properties set. */
        static final Map<String, String> PROPERTIES = Map.of("endpoints", "quorumlock.etcd.endpoints[]");

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(DistributedLock.class)
        EtcdLock quorumlockEtcdLock(QuorumlockProperties properties, ObjectProvider<LockListener> listeners) {
            QuorumlockProperties.Etcd etcd = properties.getEtcd();
            Placeholders.check("quorumlock.etcd.endpoints", etcd.getEndpoints());
            return PropertyErrors.naming(
                    "quorumlock.etcd",
                    PROPERTIES,
                    () -> EtcdLock.builder()
                            .endpoints(etcd.getEndpoints())
                            .listener(listener(listeners))
                            .build());
        }

        @Bean(name = LEASE_VIEW, destroyMethod = "")
        @Fallback
        @ConditionalOnBean(name = "quorumlockEtcdLock")
        DistributedLock<Lease> quorumlockLock(EtcdLock lock) {
            return new LeaseView(lock);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Conditional(OnBackend.Jdbc.class)
    static class JdbcLockConfiguration {

        /** The property of each setting of {@link JdbcLockBuilder} that the properties set. */
        static final Map<String, String> PROPERTIES = Map.of(
                "table", "quorumlock.jdbc.table",
                "requestTimeout", "quorumlock.jdbc.request-timeout");

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(DistributedLock.class)
        JdbcLock quorumlockJdbcLock(
                QuorumlockProperties properties,
                Environment environment,
                ObjectProvider<DataSource> dataSources,
                ObjectProvider<LockListener> listeners) {
            QuorumlockProperties.Jdbc jdbc = properties.getJdbc();
            DataSource dataSource = dataSources.getIfUnique();
            if (dataSource == null) {
                String setBy = OnBackend.configured(Binder.get(environment), Backend.JDBC)
                        .orElse(Backend.JDBC.property);
                throw new QuorumlockPropertyException(setBy + " puts the lock in the application's database, but the"
                        + " context has no single DataSource bean: configure spring.datasource.url (with"
                        + " spring-boot-starter-jdbc), or mark one DataSource @Primary");
            }
            JdbcLock lock = PropertyErrors.naming(
                    "quorumlock.jdbc",
                    PROPERTIES,
                    () -> JdbcLock.builder()
                            .dataSource(dataSource)
                            .table(jdbc.getTable())
                            .requestTimeout(jdbc.getRequestTimeout())
                            .listener(listener(listeners))
                            .build());
            if (jdbc.isCreateTable()) {
                try {
                    DatabaseStart.createTable(lock, jdbc.getTable());
                } catch (RuntimeException e) {
                    lock.close();
                    throw e;
                }
            }
            return lock;
        }

        /** The database's check once the context's singletons, migrations included, are up. */
        @Bean
        @ConditionalOnBean(name = "quorumlockJdbcLock")
        DatabaseStart quorumlockDatabaseStart(JdbcLock lock, QuorumlockProperties properties) {
            return new DatabaseStart(lock, properties.getJdbc().getRequestTimeout());
        }

        @Bean(name = LEASE_VIEW, destroyMethod = "")
        @Fallback
        @ConditionalOnBean(name = "quorumlockJdbcLock")
        DistributedLock<Lease> quorumlockLock(JdbcLock lock) {
            return new LeaseView(lock);
        }
    }
}
