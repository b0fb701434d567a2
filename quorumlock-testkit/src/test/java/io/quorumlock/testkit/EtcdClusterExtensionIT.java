package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
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

class EtcdClusterExtensionIT {

    @Test
    void startsTheClusterForTheClassResetsItBeforeEachTestAndStopsItAfterIt() {
        assumeTrue(
                EtcdCluster.available(),
                () -> "etcd tests skipped: " + EtcdCluster.unavailableReason().orElse(""));
        Events tests = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(ThreeMembers.class))
                .execute()
                .testEvents();

        tests.assertStatistics(stats -> stats.started(4).succeeded(3).failed(1));
        assertThat(ThreeMembers.pids).hasSize(4).allMatch(Clients::processGone);
        assertThat(ThreeMembers.dirs).hasSize(3).noneMatch(dir -> new java.io.File(dir).exists());
        assertThatThrownBy(ThreeMembers.etcd::cluster)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@RegisterExtension");
    }

    @Test
    void rejectsMemberCountsOutOfRange() {
        assertThat(EtcdClusterExtension.members(1).size()).isEqualTo(1);
        assertThatThrownBy(() -> EtcdClusterExtension.members(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EtcdClusterExtension.members(8)).isInstanceOf(IllegalArgumentException.class);
    }

    /** Run by the test above through the JUnit engine, not by Maven (nested classes are excluded). */
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class ThreeMembers {
        @RegisterExtension
        static final EtcdClusterExtension etcd = EtcdClusterExtension.members(3);

        static final List<Long> pids = new CopyOnWriteArrayList<>();
        static final List<String> dirs = new ArrayList<>();

        @Test
        @Order(1)
        void membersRun() {
            assertThat(etcd.size()).isEqualTo(3);
            assertThat(etcd.endpoints()).hasSize(3).doesNotHaveDuplicates();
            for (EtcdServer member : etcd.cluster()) {
                pids.add(member.pid());
                dirs.add(member.dir().toString());
            }
            EtcdClusterIT.put(etcd.get(2), "left-over", "x");
            etcd.get(0).stop();
            etcd.get(1).pause();
        }

        @Test
        @Order(2)
        void failingTestStillStopsTheCluster() {
            throw new AssertionError("fails on purpose");
        }

        @Nested
        class Inner {
            @Test
            void theClusterIsResetAndSharedWithNestedClasses() {
                assertThat(etcd.cluster().members()).allMatch(m -> m.isRunning() && !m.isPaused() && m.isHealthy());
                assertThat(EtcdClusterIT.get(etcd.get(0), "left-over")).isEmpty();
                pids.add(etcd.get(0).pid()); // started again by the reset
            }
        }

        @Test
        @Order(3)
        void keysOfEarlierTestsAreGone() {
            assertThat(EtcdClusterIT.get(etcd.get(2), "left-over")).isEmpty();
        }
    }
}
