package io.quorumlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The meters' tags on a real Micrometer registry, fed the lock's events directly. */
class QuorumlockMetricsTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private Set<String> resourceTags() {
        return registry.getMeters().stream()
                .map(Meter::getId)
                .map(id -> id.getTag("resource"))
                .filter(tag -> tag != null)
                .collect(Collectors.toSet());
    }

    @Test
    void taggedResourcesAreBoundedByDefault() {
        QuorumlockMetrics metrics =
                QuorumlockMetrics.builder().tagResources(true).build();
        metrics.bindTo(registry);
        for (int order = 0; order < 1_000; order++) {
            metrics.acquired("redis", "order:" + order, Duration.ofMillis(1), 3, 5);
            metrics.released("redis", "order:" + order, Duration.ofMillis(2));
        }
        assertThat(resourceTags())
                .hasSize(101)
                .contains("order:0", "order:99", "other")
                .doesNotContain("order:100");
        assertThat(registry.get("quorumlock.acquire")
                        .tag("resource", "other")
                        .tag("outcome", "acquired")
                        .timer()
                        .count())
                .isEqualTo(900);
    }

    @Test
    void theBoundIsASettingAndEveryBackendHasItsOwn() {
        QuorumlockMetrics metrics = QuorumlockMetrics.builder()
                .tagResources(true)
                .maxTaggedResources(2)
                .build();
        metrics.bindTo(registry);
        for (String backend : List.of("redis", "etcd")) {
            for (String resource : List.of("a", "b", "c", "d")) {
                metrics.busy(backend, resource, Duration.ofMillis(1));
            }
        }
        assertThat(resourceTags()).containsExactlyInAnyOrder("a", "b", "other");
        assertThat(registry.get("quorumlock.acquire")
                        .tag("backend", "etcd")
                        .tag("resource", "other")
                        .tag("outcome", "busy")
                        .timer()
                        .count())
                .isEqualTo(2);
        assertThat(metrics.toString()).contains("at most 2");
    }

    @Test
    void concurrentResourcesStayWithinTheBound() throws Exception {
        QuorumlockMetrics metrics = QuorumlockMetrics.builder()
                .tagResources(true)
                .maxTaggedResources(10)
                .build();
        metrics.bindTo(registry);
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                done.add(threads.submit(() -> {
                    for (int i = 0; i < 500; i++) {
                        metrics.unavailable("redis", "r" + thread + ":" + i, Duration.ofMillis(1));
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(resourceTags()).hasSize(11).contains("other");
        assertThat(registry.find("quorumlock.acquire").timers().stream()
                        .mapToLong(Timer::count)
                        .sum())
                .isEqualTo(8 * 500);
    }

    @Test
    void aBoundBelowOneNamesTheSettingAndTheRemedy() {
        assertThatThrownBy(() -> QuorumlockMetrics.builder().maxTaggedResources(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxTaggedResources must be at least 1, was 0")
                .hasMessageContaining("tagResources(false)");
    }
}
