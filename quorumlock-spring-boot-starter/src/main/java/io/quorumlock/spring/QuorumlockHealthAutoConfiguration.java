package io.quorumlock.spring;

import java.util.function.Supplier;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * The health contributor {@code quorumlock} (bean {@code quorumlockHealthIndicator}) of the lock
 * bean, whether auto-configured or the application's own: the nodes' check for Redis, the
 * connection for ZooKeeper, a linearizable read for etcd, the lock's check for a database; with
 * {@code quorumlock.leader.election} set, the detail {@code leader} as well (the election, whether
 * this instance leads, the term's fencing token). Off with {@code
 * management.health.quorumlock.enabled=false}. This is Boot 4's; {@link
 * QuorumlockBoot3HealthAutoConfiguration} gives the same on Boot 3.5.
 */
@AutoConfiguration(after = {QuorumlockAutoConfiguration.class, QuorumlockLeaderAutoConfiguration.class})
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnEnabledHealthIndicator("quorumlock")
@Conditional(LockHealth.OnLock.class)
public class QuorumlockHealthAutoConfiguration {

    static final String BEAN = LockHealth.BEAN;

    @Bean(name = BEAN)
    @ConditionalOnMissingBean(name = BEAN)
    HealthIndicator quorumlockHealthIndicator(ListableBeanFactory beans) {
        Supplier<LockHealth.Report> lock = LockHealth.of(beans);
        return () -> {
            LockHealth.Report report = lock.get();
            return (report.up() ? Health.up() : Health.down())
                    .withDetails(report.details())
                    .build();
        };
    }
}
