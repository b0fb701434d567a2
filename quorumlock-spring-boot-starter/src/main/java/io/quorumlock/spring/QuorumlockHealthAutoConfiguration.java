package io.quorumlock.spring;

import io.quorumlock.etcd.EtcdLock;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.redis.Redlock;
import io.quorumlock.zookeeper.ZooKeeperLock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The health contributor {@code quorumlock} (bean {@code quorumlockHealthIndicator}) of the lock
 * bean, whether auto-configured or the application's own: the nodes' check for Redis, the
 * connection for ZooKeeper, a linearizable read for etcd, the lock's check for a database; with
 * {@code quorumlock.leader.election} set, the detail {@code leader} as well (the election, whether
 * this instance leads, the term's fencing token). Off with {@code
 * management.health.quorumlock.enabled=false}.
 */
@AutoConfiguration(after = {QuorumlockAutoConfiguration.class, QuorumlockLeaderAutoConfiguration.class})
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnEnabledHealthIndicator("quorumlock")
public class QuorumlockHealthAutoConfiguration {

    static final String BEAN = "quorumlockHealthIndicator";

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(Redlock.class)
    static class RedisHealthConfiguration {
        @Bean(name = BEAN)
        @ConditionalOnMissingBean(name = BEAN)
        HealthIndicator quorumlockHealthIndicator(Redlock lock, ObjectProvider<QuorumlockLeadership> leadership) {
            return LockHealth.withLeader(new LockHealth.Redis(lock), leadership);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ZooKeeperLock.class)
    @ConditionalOnSingleCandidate(ZooKeeperLock.class)
    static class ZooKeeperHealthConfiguration {
        @Bean(name = BEAN)
        @ConditionalOnMissingBean(name = BEAN)
        HealthIndicator quorumlockHealthIndicator(ZooKeeperLock lock, ObjectProvider<QuorumlockLeadership> leadership) {
            return LockHealth.withLeader(new LockHealth.ZooKeeper(lock), leadership);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(EtcdLock.class)
    @ConditionalOnSingleCandidate(EtcdLock.class)
    static class EtcdHealthConfiguration {
        @Bean(name = BEAN)
        @ConditionalOnMissingBean(name = BEAN)
        HealthIndicator quorumlockHealthIndicator(EtcdLock lock, ObjectProvider<QuorumlockLeadership> leadership) {
            return LockHealth.withLeader(new LockHealth.Etcd(lock), leadership);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(JdbcLock.class)
    @ConditionalOnSingleCandidate(JdbcLock.class)
    static class JdbcHealthConfiguration {
        @Bean(name = BEAN)
        @ConditionalOnMissingBean(name = BEAN)
        HealthIndicator quorumlockHealthIndicator(JdbcLock lock, ObjectProvider<QuorumlockLeadership> leadership) {
            return LockHealth.withLeader(new LockHealth.Jdbc(lock), leadership);
        }
    }
}
