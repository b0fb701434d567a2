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

class PostgresServerExtensionIT {

    @Test
    void startsTheServerOnFirstUseSharesItWithNestedClassesAndClosesItAfterTheClass() {
        Events tests = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(WithPostgres.class))
                .execute()
                .testEvents();

        if (PostgresServer.available()) {
            tests.assertStatistics(stats -> stats.started(4).succeeded(3).failed(1));
            assertThat(WithPostgres.servers).hasSize(2).allMatch(server -> server == WithPostgres.servers.get(0));
            assertThat(WithPostgres.pids).hasSize(1).allMatch(Clients::processGone);
            assertThat(new File(WithPostgres.servers.get(0).dir().toString())).doesNotExist();
        } else {
            // Without PostgreSQL the tests that ask for it are skipped with the reason; the others run.
            tests.assertStatistics(
                    stats -> stats.started(4).aborted(2).succeeded(1).failed(1));
            assertThat(tests.aborted().stream()
                            .map(event -> event.getPayload(org.junit.platform.engine.TestExecutionResult.class)
                                    .flatMap(org.junit.platform.engine.TestExecutionResult::getThrowable)
                                    .map(Throwable::getMessage)
                                    .orElse(""))
                            .toList())
                    .allMatch(message -> message.contains("apt-get install postgresql"));
        }
    }

    /** Run by the test above through the JUnit engine, not by Maven (nested classes are excluded). */
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class WithPostgres {
        @RegisterExtension
        static final PostgresServerExtension postgres = new PostgresServerExtension();

        static final List<PostgresServer> servers = new CopyOnWriteArrayList<>();
        static final List<Long> pids = new CopyOnWriteArrayList<>();

        @Test
        @Order(1)
        void connects() throws Exception {
            try (Connection connection = DriverManager.getConnection(postgres.jdbcUrl(), postgres.user(), "")) {
                assertThat(connection.isValid(5)).isTrue();
            }
            servers.add(postgres.server());
            pids.add(postgres.server().pid());
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
                servers.add(postgres.server());
                assertThat(postgres.server().isRunning()).isTrue();
            }
        }
    }
}
