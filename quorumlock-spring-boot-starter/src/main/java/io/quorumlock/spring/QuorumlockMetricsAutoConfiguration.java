package io.quorumlock.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumlock.micrometer.QuorumlockMetrics;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * The lock's meters ({@code quorumlock.acquire}, {@code quorumlock.extend}, {@code
 * quorumlock.leases.held}, {@code quorumlock.leases.lost}): with quorumlock-micrometer on the
 * class path and a {@link MeterRegistry} bean, a {@link QuorumlockMetrics} bean, which Boot binds
 * to every registry (as it binds each {@code MeterBinder}) and the lock hears as its listener;
 * {@code quorumlock.metrics.tag-resources} and {@code quorumlock.metrics.max-tagged-resources}
 * set its resource tags.
 */
@AutoConfiguration(
        after = {MetricsAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class},
        afterName =
                "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration")
@ConditionalOnClass({QuorumlockMetrics.class, MeterRegistry.class, MetricsAutoConfiguration.class})
@ConditionalOnBean(MeterRegistry.class)
@EnableConfigurationProperties(QuorumlockProperties.class)
public class QuorumlockMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    QuorumlockMetrics quorumlockMetrics(QuorumlockProperties properties) {
        QuorumlockProperties.Metrics metrics = properties.getMetrics();
        return PropertyErrors.naming(
                message -> "quorumlock.metrics.max-tagged-resources",
                () -> QuorumlockMetrics.builder()
                        .tagResources(metrics.isTagResources())
                        .maxTaggedResources(metrics.getMaxTaggedResources())
                        .build());
    }
}
