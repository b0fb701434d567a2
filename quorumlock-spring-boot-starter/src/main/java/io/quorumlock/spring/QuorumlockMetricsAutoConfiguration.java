package io.quorumlock.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumlock.micrometer.QuorumlockMetrics;
import java.util.Map;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * The lock's meters ({@code quorumlock.acquire}, {@code quorumlock.extend}, {@code
 * quorumlock.leases.held}, {@code quorumlock.leases.lost}): with Boot's metrics (Actuator, on Spring
 * Boot 4 or 3.5) and a {@link MeterRegistry} bean, a {@link QuorumlockMetrics} bean, which Boot binds
 * to every registry (as it binds each {@code MeterBinder}) and the lock hears as its listener;
 * {@code quorumlock.metrics.tag-resources} and {@code quorumlock.metrics.max-tagged-resources}
 * set its resource tags.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
            // Spring Boot 3.5
            "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration"
        })
@ConditionalOnClass({QuorumlockMetrics.class, MeterRegistry.class})
@Conditional(QuorumlockMetricsAutoConfiguration.BootMetrics.class)
@ConditionalOnBean(MeterRegistry.class)
@EnableConfigurationProperties(QuorumlockProperties.class)
public class QuorumlockMetricsAutoConfiguration {

    /** Boot's metrics, of Spring Boot 4 or 3.5: what binds every {@code MeterBinder} bean to the registries. */
    static final class BootMetrics extends AnyNestedCondition {

        BootMetrics() {
            super(ConfigurationPhase.PARSE_CONFIGURATION);
        }

        @ConditionalOnClass(name = "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration")
        static final class Boot4 {}

        @ConditionalOnClass(name = "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration")
        static final class Boot35 {}
    }

    @Bean
    @ConditionalOnMissingBean
    QuorumlockMetrics quorumlockMetrics(QuorumlockProperties properties) {
        QuorumlockProperties.Metrics metrics = properties.getMetrics();
        return PropertyErrors.naming(
                "quorumlock.metrics.max-tagged-resources",
                Map.of(),
                () -> QuorumlockMetrics.builder()
                        .tagResources(metrics.isTagResources())
                        .maxTaggedResources(metrics.getMaxTaggedResources())
                        .build());
    }
}
