package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;
import redis.clients.jedis.Jedis;

class RedisServersExtensionIT {

    @Test
    void startsTheNodesForTheClassResetsThemBeforeEachTestAndStopsThemAfterIt() {
        Events tests = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(ThreeNodes.class))
                .execute()
                .testEvents();

        tests.assertStatistics(stats -> stats.started(4).succeeded(3).failed(1));
        assertThat(ThreeNodes.pids).hasSize(4).allMatch(Clients::processGone);
        assertThat(ThreeNodes.dirs).hasSize(3).noneMatch(dir -> new java.io.File(dir).exists());
        assertThatThrownBy(ThreeNodes.redis::servers)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@RegisterExtension");
    }

    @Test
    void persistentMustBeChosenBeforeTheNodesStart() {
        assertThat(RedisServersExtension.nodes(1).persistent().size()).isEqualTo(1);
        assertThatThrownBy(() -> RedisServersExtension.nodes(0)).isInstanceOf(IllegalArgumentException.class);
    }

    /** Run by the test above through the JUnit engine, not by Maven (nested classes are excluded). */
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class ThreeNodes {
        @RegisterExtension
        static final RedisServersExtension redis =
                RedisServersExtension.nodes(3).persistent();

        static final List<Long> pids = new CopyOnWriteArrayList<>();
        static final List<String> dirs = new ArrayList<>();

        @Test
        @Order(1)
        void nodesRun() {
            assertThat(redis.size()).isEqualTo(3);
            assertThat(redis.uris()).hasSize(3).doesNotHaveDuplicates();
            for (RedisServer node : redis.servers()) {
                pids.add(node.pid());
                dirs.add(node.dir().toString());
                try (Jedis jedis = Clients.connect(node)) {
                    jedis.set("left-over", "x");
                }
            }
            redis.get(0).stop();
            redis.get(1).pause();
        }

        @Test
        @Order(2)
        void failingTestStillStopsTheNodes() {
            throw new AssertionError("fails on purpose");
        }

        @Nested
        class Inner {
            @Test
            void nodesAreResetAndSharedWithNestedClasses() {
                assertThat(redis.servers()).allMatch(node -> node.isRunning() && !node.isPaused());
                for (RedisServer node : redis.servers()) {
                    try (Jedis jedis = Clients.connect(node)) {
                        assertThat(jedis.get("left-over")).isNull();
                        assertThat(jedis.configGet("appendonly")).containsEntry("appendonly", "yes");
                    }
                }
                pids.add(redis.get(0).pid()); // started again by the reset
            }
        }

        @Test
        @Order(3)
        void keysOfEarlierTestsAreGone() {
            try (Jedis jedis = Clients.connect(redis.get(2))) {
                assertThat(jedis.get("left-over")).isNull();
            }
        }
    }
}
