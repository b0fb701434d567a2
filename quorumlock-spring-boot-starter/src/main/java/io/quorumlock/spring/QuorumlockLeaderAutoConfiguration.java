package io.quorumlock.spring;

import io.quorumlock.DistributedLock;
import io.quorumlock.internal.Holders;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * With {@code quorumlock.leader.election} set, a {@link QuorumlockLeadership} bean: this instance
 * a candidate in that election over the context's lock (the auto-configured one or the
 * application's own), from the context's start to its stop.
 */
@AutoConfiguration(after = QuorumlockAutoConfiguration.class)
@Conditional(QuorumlockLeaderAutoConfiguration.OnElection.class)
@EnableConfigurationProperties(QuorumlockProperties.class)
public class QuorumlockLeaderAutoConfiguration {

    /** The property of each setting of {@code LeaderElectionBuilder} that the properties set. */
    static final Map<String, String> PROPERTIES =
            Map.of("resource", "quorumlock.leader.election", "ttl", "quorumlock.leader.ttl");

    @Bean
    @ConditionalOnMissingBean
    QuorumlockLeadership quorumlockLeadership(
            QuorumlockProperties properties,
            ObjectProvider<DistributedLock<?>> locks,
            ApplicationEventPublisher events) {
        QuorumlockProperties.Leader leader = properties.getLeader();
        Placeholders.check("quorumlock.leader.election", leader.getElection());
        DistributedLock<?> lock = locks.getIfUnique();
        if (lock == null) {
            throw new QuorumlockPropertyException("quorumlock.leader.election is set, but the context has no single"
                    + " lock: configure a backend (quorumlock.redis.nodes, quorumlock.zookeeper.connect-string,"
                    + " quorumlock.etcd.endpoints or quorumlock.jdbc.enabled), or define one DistributedLock bean");
        }
        if (leader.getTtl() == null) {
            throw new QuorumlockPropertyException(
                    "quorumlock.leader.ttl is empty: give the leader's lease a TTL, such as 30s, or remove the property");
        }
        return PropertyErrors.naming(
                "quorumlock.leader",
                PROPERTIES,
                () -> new QuorumlockLeadership(
                        lock, leader.getElection(), leader.getTtl(), Holders.defaultName(), events));
    }

    /**
     * Matches when {@code quorumlock.leader.election} is set, empty or not, placeholder or not: the
     * bean refuses what it cannot use, naming the property, where a condition would fail without it.
     */
    static final class OnElection extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return Binder.get(context.getEnvironment())
                            .bind("quorumlock.leader.election", String.class)
                            .isBound()
                    ? ConditionOutcome.match("quorumlock.leader.election is set")
                    : ConditionOutcome.noMatch("quorumlock.leader.election is not set");
        }
    }
}
