package io.quorumlock.spring.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import io.quorumlock.testkit.RedisServers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The meters of an application that has the starter and Spring Boot Actuator, and no other
 * quorumlock artifact, over a real redis-server node: Actuator's meter registry has the lock's
 * meters.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.NONE,
        properties = {"quorumlock.redis.node-timeout=200ms"})
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetricsIT {

    static RedisServers redis;

    @DynamicPropertySource
    static void nodes(DynamicPropertyRegistry registry) {
        redis = RedisServers.start(1);
        registry.add("quorumlock.redis.nodes", () -> redis.uris().get(0));
    }

    @AfterAll
    static void stopNodes() {
        if (redis != null) {
            redis.close();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Application {}

    @Autowired
    MeterRegistry registry;

    @Autowired
    DistributedLock<Lease> lock;

    @Test
    void actuatorsRegistryCountsTheAcquires() {
        lock.acquire("invoice-run", Duration.ofSeconds(10), Duration.ofSeconds(5))
                .release();
        Timer acquired = registry.find("quorumlock.acquire")
                .tag("backend", "redis")
                .tag("outcome", "acquired")
                .timer();
        assertThat(acquired)
                .as("the timer quorumlock.acquire of Actuator's registry")
                .isNotNull();
        assertThat(acquired.count()).isEqualTo(1);
        assertThat(registry.find("quorumlock.leases.held").gauge()).isNotNull();
    }
}
