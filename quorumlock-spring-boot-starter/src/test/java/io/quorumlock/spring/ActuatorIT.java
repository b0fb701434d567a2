package io.quorumlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A whole application over HTTP: Actuator's health and metrics endpoints for the auto-configured
 * Redlock over three real redis-server nodes.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "server.address=127.0.0.1",
            "management.endpoints.web.exposure.include=health,metrics,configprops,env",
            "management.endpoint.env.show-values=always",
            "management.endpoint.health.show-details=always",
            "management.endpoint.configprops.show-values=always",
            "quorumlock.redis.restart-guard=false",
            "quorumlock.redis.node-timeout=200ms",
            "quorumlock.redis.password=" + ActuatorIT.SECRET
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ActuatorIT {

    static final String SECRET = "actuat0r-never-shows-this";

    /** Three nodes that require the password, started before the context and stopped after it. */
    static RedisServers redis;

    @DynamicPropertySource
    static void nodes(DynamicPropertyRegistry registry) {
        redis = RedisServers.start(3);
        for (RedisServer node : redis) {
            try (var jedis = node.connect(Duration.ofSeconds(5))) {
                jedis.configSet("requirepass", SECRET);
            }
        }
        registry.add("quorumlock.redis.nodes", () -> String.join(",", redis.uris()));
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

    @Value("${local.server.port}")
    int port;

    @Autowired
    DistributedLock<Lease> lock;

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void healthIsUpThenDownWithTheMajorityFrozenAndTheMetricsCountTheAcquire() throws Exception {
        HttpResponse<String> up = get("/actuator/health");
        System.out.println("GET /actuator/health (3 nodes): " + up.statusCode() + "\n" + up.body());
        assertThat(up.statusCode()).isEqualTo(200);
        assertThat(up.body())
                .contains("\"quorumlock\":{")
                .contains("\"status\":\"UP\"")
                .doesNotContain(SECRET);

        HttpResponse<String> own = get("/actuator/health/quorumlock");
        System.out.println("GET /actuator/health/quorumlock: " + own.statusCode() + "\n" + own.body());
        assertThat(own.statusCode()).isEqualTo(200);
        assertThat(own.body()).contains("\"status\":\"UP\"").contains("\"quorum\":2");

        lock.acquire("nightly-report", Duration.ofSeconds(10), Duration.ofSeconds(5))
                .release();
        HttpResponse<String> metrics = get("/actuator/metrics/quorumlock.acquire");
        System.out.println("GET /actuator/metrics/quorumlock.acquire: " + metrics.statusCode() + "\n" + metrics.body());
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body())
                .contains("\"COUNT\"")
                .contains("\"value\":1.0")
                .contains("acquired");

        HttpResponse<String> configprops = get("/actuator/configprops");
        assertThat(configprops.body())
                .contains("\"quorumlock\"")
                .contains("\"password\":\"******\"")
                .doesNotContain(SECRET);
        assertThat(get("/actuator/env").body()).doesNotContain(SECRET);

        try {
            redis.get(0).pause();
            redis.get(1).pause();
            HttpResponse<String> down = get("/actuator/health");
            System.out.println("GET /actuator/health (2 of 3 nodes frozen): " + down.statusCode() + "\n" + down.body());
            assertThat(down.statusCode()).isEqualTo(503);
            assertThat(down.body()).contains("\"status\":\"DOWN\"").doesNotContain(SECRET);
        } finally {
            redis.get(0).resume();
            redis.get(1).resume();
        }
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
