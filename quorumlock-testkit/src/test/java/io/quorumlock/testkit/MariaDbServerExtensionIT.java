package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.File;
import java.sql.Connection;
import java.sql.DriverManager;
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

class MariaDbServerExtensionIT {

    @Test
    void startsTheServerOnFirstUseSharesItWithNestedClassesAndClosesItAfterTheClass() {
        Events tests = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(WithMariaDb.class))
                .execute()
                .testEvents();

        if (MariaDbServer.available()) {
            tests.assertStatistics(stats -> stats.started(4).succeeded(3).failed(1));
            assertThat(WithMariaDb.servers).hasSize(2).allMatch(server -> server == WithMariaDb.servers.get(0));
            assertThat(WithMariaDb.pids).hasSize(1).allMatch(Clients::processGone);
            assertThat(new File(WithMariaDb.servers.get(0).dir().toString())).doesNotExist();
        } else {
            // Without MariaDB the tests that ask for it are skipped with the reason; the others run.
            tests.assertStatistics(
                    stats -> stats.started(4).aborted(2).succeeded(1).failed(1));
            assertThat(tests.aborted().stream()
                            .map(event -> event.getPayload(org.junit.platform.engine.TestExecutionResult.class)
                                    .flatMap(org.junit.platform.engine.TestExecutionResult::getThrowable)
                                    .map(Throwable::getMessage)
                                    .orElse(""))
                            .toList())
                    .allMatch(message -> message.contains("apt-get install mariadb-server"));
        }
    }

    /** Run by the test above through the JUnit engine, not by Maven (nested classes are excluded). */
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class WithMariaDb {
        @RegisterExtension
        static final MariaDbServerExtension mariadb = new MariaDbServerExtension();

        static final List<MariaDbServer> servers = new CopyOnWriteArrayList<>();
        static final List<Long> pids = new CopyOnWriteArrayList<>();

        @Test
        @Order(1)
        void connects() throws Exception {
            try (Connection connection =
                    DriverManager.getConnection(mariadb.jdbcUrl(), mariadb.user(), mariadb.password())) {
                assertThat(connection.isValid(5)).isTrue();
            }
            servers.add(mariadb.server());
            pids.add(mariadb.server().pid());
        }

        @Test
        @Order(2)
        void doesNotNeedTheServer() {
            assertThat(1 + 1).isEqualTo(2);
        }

        @Test
        @Order(3)
        void failingTestStillClosesTheServer() {
            throw new AssertionError("fails on purpose");
        }

        @Nested
        class Inner {
            @Test
            void sharesTheServer() {
                servers.add(mariadb.server());
                assertThat(mariadb.server().isRunning()).isTrue();
            }
        }
    }
}
