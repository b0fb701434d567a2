package io.quorumlock.spring.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.TestTime;
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
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@code /actuator/health/quorumlock} over HTTP, on three real redis-server nodes, with the one
 * property that opens the components' paths, {@code show-components}, and no details: the status
 * alone, 200 when UP and 503 when DOWN, for a load balancer or a probe. (Under Actuator's
 * defaults every component's path answers 404, {@code /actuator/health/ping} as well.)
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "server.address=127.0.0.1",
            "management.endpoint.health.show-components=always",
            "quorumlock.redis.restart-guard=false",
            "quorumlock.redis.node-timeout=200ms"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HealthPathIT {

    static RedisServers redis;

    @DynamicPropertySource
    static void nodes(DynamicPropertyRegistry registry) {
        redis = RedisServers.start(3);
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

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void theLocksHealthHasAPathOfItsOwnThatIsUpThenDownWithTheMajorityFrozen() throws Exception {
        HttpResponse<String> all = get("/actuator/health");
        System.out.println("GET /actuator/health: " + all.statusCode() + " " + all.body());
        assertThat(all.statusCode()).isEqualTo(200);
        assertThat(all.body()).contains("\"quorumlock\":{\"status\":\"UP\"}").doesNotContain("\"quorum\"");

        HttpResponse<String> up = get("/actuator/health/quorumlock");
        System.out.println("GET /actuator/health/quorumlock: " + up.statusCode() + " " + up.body());
        assertThat(up.statusCode()).isEqualTo(200);
        assertThat(up.body()).contains("\"status\":\"UP\"").doesNotContain("\"nodes\"");

        try {
            redis.get(0).pause();
            redis.get(1).pause();
            HttpResponse<String> down = get("/actuator/health/quorumlock");
            System.out.println(
                    "GET /actuator/health/quorumlock (2 of 3 nodes frozen): " + down.statusCode() + " " + down.body());
            assertThat(down.statusCode()).isEqualTo(503);
            assertThat(down.body()).contains("\"status\":\"DOWN\"");
        } finally {
            for (RedisServer node : redis) {
                node.resume();
            }
        }
        TestTime.await(
                Duration.ofSeconds(10),
                () -> {
                    try {
                        return get("/actuator/health/quorumlock").statusCode() == 200;
                    } catch (IOException e) {
                        return false;
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                },
                "the lock's health to be up again once the nodes are resumed");
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
