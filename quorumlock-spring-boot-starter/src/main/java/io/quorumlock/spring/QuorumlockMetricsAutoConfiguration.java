package io.quorumlock.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumlock.micrometer.QuorumlockMetrics;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * The lock's meters ({@code quorumlock.acquire}, {@code quorumlock.extend}, {@code
 * quorumlock.leases.held}, {@code quorumlock.leases.lost}): with quorumlock-micrometer on the
 * class path and a {@link MeterRegistry} bean, a {@link QuorumlockMetrics} bean, which Boot binds
 * to every registry (as it binds each {@code MeterBinder}) and the lock hears as its listener.
 */
@AutoConfiguration(
        after = {MetricsAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class},
        afterName =
                "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration")
@ConditionalOnClass({QuorumlockMetrics.class, MeterRegistry.class, MetricsAutoConfiguration.class})
@ConditionalOnBean(MeterRegistry.class)
public class QuorumlockMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    QuorumlockMetrics quorumlockMetrics() {
        return new QuorumlockMetrics();
    }
}
