package io.quorumlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.Lease;
import io.quorumlock.etcd.EtcdLock;
import io.quorumlock.micrometer.QuorumlockMetrics;
import io.quorumlock.redis.Redlock;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What the properties choose and refuse, before any node is reached: every lock builds lazily,
 * and a refused configuration never opens a connection.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class QuorumlockConfigurationTest {

    private static final String SECRET = "s3cret-Pa55";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(QuorumlockAutoConfiguration.class, QuorumlockHealthAutoConfiguration.class));

    @Test
    void withoutPropertiesThereIsNoLock() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(DistributedLock.class);
            assertThat(context).doesNotHaveBean(QuorumlockHealthAutoConfiguration.BEAN);
        });
    }

    @Test
    void twoBackendsWithoutPrimaryFailNamingBothPropertiesAndTheRemedy() {
        runner.withPropertyValues(
                        "quorumlock.redis.nodes=redis://127.0.0.1:1", "quorumlock.zookeeper.connect-string=127.0.0.1:2")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(messages(context.getStartupFailure()))
                            .contains("quorumlock.redis.nodes and quorumlock.zookeeper.connect-string are both set")
                            .contains("set quorumlock.primary to redis or zookeeper");
                });
    }

    @Test
    void primaryChoosesAmongConfiguredBackends() {
        runner.withPropertyValues(
                        "quorumlock.redis.nodes=redis://127.0.0.1:1",
                        "quorumlock.etcd.endpoints=http://127.0.0.1:2",
                        "quorumlock.primary=etcd")
                .run(context -> {
                    assertThat(context).hasSingleBean(EtcdLock.class);
                    assertThat(context.getBean(DistributedLock.class)).isSameAs(context.getBean(EtcdLock.class));
                    assertThat(context).doesNotHaveBean(Redlock.class);
                });
    }

    @Test
    void primaryThatIsNotConfiguredFails() {
        runner.withPropertyValues("quorumlock.redis.nodes=redis://127.0.0.1:1", "quorumlock.primary=zookeeper")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains(
                                "quorumlock.primary is zookeeper, but quorumlock.zookeeper.connect-string is not set"));
    }

    @Test
    void malformedNodeUriFailsNamingTheEntry() {
        runner.withPropertyValues(
                        "quorumlock.redis.nodes[0]=redis://127.0.0.1:1",
                        "quorumlock.redis.nodes[1]=redis://user:" + SECRET + "@127.0.0.1:notaport",
                        "quorumlock.redis.nodes[2]=redis://127.0.0.1:3",
                        "quorumlock.redis.password=" + SECRET)
                .run(context -> {
                    String messages = messages(context.getStartupFailure());
                    assertThat(messages).contains("quorumlock.redis.nodes[1]: invalid node URI");
                    assertThat(messages).doesNotContain(SECRET);
                });
    }

    @Test
    void nodeListedTwiceNamesTheSecondEntry() {
        runner.withPropertyValues("quorumlock.redis.nodes=redis://127.0.0.1:1,redis://127.0.0.1:2,redis://127.0.0.1:1")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("quorumlock.redis.nodes[2]: node 127.0.0.1:1 is listed twice"));
    }

    @Test
    void malformedNodeUriNamesItsOwnEntryWhenItQuotesALaterOne() {
        runner.withPropertyValues("quorumlock.redis.nodes=redis://127.0.0.1:1x,redis://127.0.0.1:1")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("quorumlock.redis.nodes[0]: invalid node URI 'redis://127.0.0.1:1x'"));
    }

    @Test
    void nodeWithCredentialsListedTwiceNamesTheSecondEntry() {
        runner.withPropertyValues(
                        "quorumlock.redis.nodes[0]=redis://:" + SECRET + "@127.0.0.1:1",
                        "quorumlock.redis.nodes[1]=redis://127.0.0.1:2",
                        "quorumlock.redis.nodes[2]=redis://:" + SECRET + "@127.0.0.1:1")
                .run(context -> {
                    String messages = messages(context.getStartupFailure());
                    assertThat(messages).contains("quorumlock.redis.nodes[2]: node 127.0.0.1:1 is listed twice");
                    assertThat(messages).doesNotContain(SECRET);
                });
    }

    @Test
    void clientCertificateWithoutKeyNamesTheKeyProperty() {
        runner.withPropertyValues(
                        "quorumlock.redis.nodes=rediss://127.0.0.1:1",
                        "quorumlock.redis.tls.cert=/nonexistent/cert.pem")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("quorumlock.redis.tls.key: tlsClientCertificate needs both files"));
    }

    @Test
    void badEtcdEndpointNamesItsOwnEntryWhenItQuotesALaterOne() {
        runner.withPropertyValues("quorumlock.etcd.endpoints=http://127.0.0.1:2379x,http://127.0.0.1:2379")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("quorumlock.etcd.endpoints[0]: endpoint 'http://127.0.0.1:2379x'"));
    }

    @Test
    void negativeNodeTimeoutFailsNamingTheProperty() {
        runner.withPropertyValues("quorumlock.redis.nodes=redis://127.0.0.1:1", "quorumlock.redis.node-timeout=-5ms")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("quorumlock.redis.node-timeout: nodeTimeout must be positive, was -5 ms"));
    }

    @Test
    void connectTimeoutBelowTheNodeTimeoutFailsNamingTheProperty() {
        runner.withPropertyValues(
                        "quorumlock.redis.nodes=redis://127.0.0.1:1",
                        "quorumlock.redis.node-timeout=100ms",
                        "quorumlock.redis.connect-timeout=10ms")
                .run(
                        context -> assertThat(messages(context.getStartupFailure()))
                                .contains(
                                        "quorumlock.redis.connect-timeout: connectTimeout must be at least nodeTimeout (100 ms)"));
    }

    @Test
    void noConnectionsPerNodeFailsNamingTheProperty() {
        runner.withPropertyValues(
                        "quorumlock.redis.nodes=redis://127.0.0.1:1", "quorumlock.redis.max-connections-per-node=0")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains(
                                "quorumlock.redis.max-connections-per-node: maxConnectionsPerNode must be at least 1"));
    }

    @Test
    void unreadableCaBundleFailsNamingTheProperty() {
        runner.withPropertyValues(
                        "quorumlock.redis.nodes=rediss://127.0.0.1:1", "quorumlock.redis.tls.ca=/nonexistent/ca.pem")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("quorumlock.redis.tls.ca: tlsCaBundle"));
    }

    @Test
    void negativeSessionTimeoutFailsNamingTheProperty() {
        runner.withPropertyValues(
                        "quorumlock.zookeeper.connect-string=127.0.0.1:2181",
                        "quorumlock.zookeeper.session-timeout=-1s")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("quorumlock.zookeeper.session-timeout: sessionTimeout must be positive"));
    }

    @Test
    void badEtcdEndpointFailsNamingTheEntry() {
        runner.withPropertyValues("quorumlock.etcd.endpoints=http://127.0.0.1:2379,127.0.0.1:2380")
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("quorumlock.etcd.endpoints[1]: endpoint '127.0.0.1:2380' must start with http://"));
    }

    @Test
    void unparsableDurationFailsNamingTheProperty() {
        runner.withPropertyValues("quorumlock.redis.nodes=redis://127.0.0.1:1", "quorumlock.redis.node-timeout=soon")
                .run(context ->
                        assertThat(messages(context.getStartupFailure())).contains("quorumlock.redis.node-timeout"));
    }

    /** The runner with the election's auto-configuration; each refusal comes before the election starts. */
    private ApplicationContextRunner electing(String... properties) {
        return runner.withConfiguration(AutoConfigurations.of(QuorumlockLeaderAutoConfiguration.class))
                .withPropertyValues(properties);
    }

    /** What Boot reports for the failure: the analyzer's description. */
    private static String reported(Throwable failure) {
        FailureAnalysis analysis = new QuorumlockFailureAnalyzer().analyze(failure);
        assertThat(analysis).as("the analysis of " + failure).isNotNull();
        return analysis.getDescription();
    }

    @Test
    void withoutAnElectionThereIsNoLeadership() {
        electing("quorumlock.redis.nodes=redis://127.0.0.1:1")
                .run(context -> assertThat(context).doesNotHaveBean(QuorumlockLeadership.class));
    }

    @Test
    void anElectionWithoutALockFailsInOneLineNamingTheBackends() {
        electing("quorumlock.leader.election=billing-scheduler")
                .run(
                        context -> assertThat(reported(context.getStartupFailure()))
                                .isEqualTo(
                                        "quorumlock.leader.election is set, but the context has no single lock: configure a"
                                                + " backend (quorumlock.redis.nodes, quorumlock.zookeeper.connect-string,"
                                                + " quorumlock.etcd.endpoints or quorumlock.jdbc.enabled), or define one DistributedLock bean"));
    }

    @Test
    void aLeaderTtlTheLockCannotUseFailsInOneLineNamingTheProperty() {
        electing(
                        "quorumlock.redis.nodes=redis://127.0.0.1:1",
                        "quorumlock.leader.election=billing-scheduler",
                        "quorumlock.leader.ttl=-1s")
                .run(context -> assertThat(reported(context.getStartupFailure()))
                        .isEqualTo("quorumlock.leader.ttl: ttl must be positive, was -1000 ms (the default is 30 s)"));
        electing(
                        "quorumlock.redis.nodes=redis://127.0.0.1:1",
                        "quorumlock.redis.node-timeout=100ms",
                        "quorumlock.leader.election=billing-scheduler",
                        "quorumlock.leader.ttl=200ms")
                .run(context -> assertThat(reported(context.getStartupFailure()))
                        .isEqualTo("quorumlock.leader.ttl: ttl must be longer than 3 x nodeTimeout (300 ms), was"
                                + " 200 ms: raise the ttl or lower nodeTimeout"));
        electing(
                        "quorumlock.jdbc.enabled=true",
                        "quorumlock.leader.election=billing-scheduler",
                        "quorumlock.leader.ttl=100ms")
                .withBean(DataSource.class, QuorumlockConfigurationTest::nowhere)
                .run(context -> assertThat(reported(context.getStartupFailure()))
                        .startsWith(
                                "quorumlock.leader.ttl: ttl must be at least a tenth of requestTimeout (500 ms), was"
                                        + " 100 ms"));
    }

    @Test
    void anEmptyElectionNameFailsNamingTheProperty() {
        electing("quorumlock.redis.nodes=redis://127.0.0.1:1", "quorumlock.leader.election=")
                .run(context -> assertThat(reported(context.getStartupFailure()))
                        .startsWith("quorumlock.leader.election: resource must not be empty"));
    }

    @Test
    void anUnsetPlaceholderInTheElectionNameFailsNamingTheProperty() {
        electing("quorumlock.redis.nodes=redis://127.0.0.1:1", "quorumlock.leader.election=${QUORUMLOCK_TEST_UNSET}")
                .run(context -> assertThat(reported(context.getStartupFailure()))
                        .startsWith("quorumlock.leader.election: the placeholder ${QUORUMLOCK_TEST_UNSET} is not set"));
    }

    @Test
    void anApplicationsOwnLockBacksTheAutoConfigurationOff() {
        runner.withUserConfiguration(OwnLock.class)
                .withPropertyValues("quorumlock.redis.nodes=redis://127.0.0.1:1")
                .run(context -> {
                    assertThat(context).hasSingleBean(DistributedLock.class);
                    assertThat(context).hasBean("ownLock");
                    assertThat(context).doesNotHaveBean("quorumlockRedlock");
                });
    }

    @Test
    void thePropertiesNeverShowThePassword() {
        runner.withPropertyValues(
                        "quorumlock.redis.nodes=redis://:" + SECRET + "@127.0.0.1:1",
                        "quorumlock.redis.password=" + SECRET)
                .run(context -> {
                    assertThat(context).hasSingleBean(Redlock.class);
                    assertThat(context.getBean(QuorumlockProperties.class).toString())
                            .contains("127.0.0.1:1")
                            .doesNotContain(SECRET);
                    assertThat(context.getBean(Redlock.class).nodes().toString())
                            .doesNotContain(SECRET);
                });
    }

    @Test
    void eachBackendGivesItsOwnTypeAndZooKeeperTheLockWithoutReachingTheEnsemble() {
        runner.withPropertyValues("quorumlock.zookeeper.connect-string=127.0.0.1:1")
                .run(context -> {
                    assertThat(context).hasSingleBean(ZooKeeperLock.class);
                    assertThat(context.getBean(DistributedLock.class)).isSameAs(context.getBean(ZooKeeperLock.class));
                    assertThat(context).hasBean(QuorumlockHealthAutoConfiguration.BEAN);
                });
    }

    /** Classes that need the lock as each of its types. */
    record Needs(
            DistributedLock<Lease> lease,
            DistributedLock<FencedLease> fenced,
            DistributedLock<?> any,
            ObjectProvider<DistributedLock<?>> unique) {}

    @Test
    void aFencedLockInjectsAsDistributedLockOfLeaseAndOfFencedLease() {
        for (String backend : List.of(
                "quorumlock.zookeeper.connect-string=127.0.0.1:1", "quorumlock.etcd.endpoints=http://127.0.0.1:2")) {
            runner.withBean(Needs.class).withPropertyValues(backend).run(context -> {
                assertThat(context).as(backend).hasNotFailed();
                Needs needs = context.getBean(Needs.class);
                DistributedLock<?> lock = needs.fenced();
                assertThat(lock).isInstanceOfAny(ZooKeeperLock.class, EtcdLock.class);
                assertThat(needs.lease()).isNotSameAs(lock).hasToString(lock.toString());
                assertThat(needs.any()).isSameAs(lock);
                assertThat(needs.unique().getIfUnique()).isSameAs(lock);
            });
        }
    }

    @Test
    void aDurationWithoutAUnitFailsNamingThePropertyAndTheUnit() {
        runner.withPropertyValues("quorumlock.redis.nodes=redis://127.0.0.1:1", "quorumlock.redis.node-timeout=50")
                .run(context -> assertThat(reported(context.getStartupFailure()))
                        .isEqualTo("quorumlock.redis.node-timeout=50 has no unit, and would be read as 50 ms: write the"
                                + " unit, such as 50s for seconds (ms, s, m, h and d are understood)"));
        electing(
                        "quorumlock.zookeeper.connect-string=127.0.0.1:1",
                        "quorumlock.leader.election=billing-scheduler",
                        "quorumlock.leader.ttl=10")
                .run(context -> assertThat(reported(context.getStartupFailure()))
                        .startsWith("quorumlock.leader.ttl=10 has no unit"));
        runner.withPropertyValues("quorumlock.redis.nodes=redis://127.0.0.1:1", "quorumlock.redis.node-timeout=50ms")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void anyJdbcPropertyTurnsTheDatabaseLockOnAndEnabledFalseKeepsItOff() {
        runner.withPropertyValues("quorumlock.jdbc.create-table=true")
                .run(context -> assertThat(reported(context.getStartupFailure()))
                        .startsWith("quorumlock.jdbc.create-table puts the lock in the application's database, but the"
                                + " context has no single DataSource bean"));
        runner.withBean(DataSource.class, QuorumlockConfigurationTest::nowhere)
                .withPropertyValues("quorumlock.jdbc.table=app_locks", "quorumlock.jdbc.request-timeout=2s")
                .run(context -> assertThat(reported(context.getStartupFailure()))
                        .as("the lock meets its database at start")
                        .startsWith("quorumlock.jdbc: the database lock cannot start: the database did not answer ("));
        runner.withBean(DataSource.class, QuorumlockConfigurationTest::nowhere)
                .withPropertyValues("quorumlock.jdbc.enabled=false", "quorumlock.jdbc.table=app_locks")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(DistributedLock.class);
                });
    }

    /** A database that nothing answers at. */
    private static DataSource nowhere() {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl("jdbc:postgresql://127.0.0.1:1/app");
        return dataSource;
    }

    @Test
    void theMetadataDocumentsEveryProperty() throws IOException {
        String json;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("META-INF/spring-configuration-metadata.json").isNotNull();
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Map<String, Object> metadata = JsonParserFactory.getJsonParser().parseMap(json);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> properties = (List<Map<String, Object>>) metadata.get("properties");
        List<String> undocumented = new ArrayList<>();
        for (String name : List.of(
                "quorumlock.primary",
                "quorumlock.redis.nodes",
                "quorumlock.redis.password",
                "quorumlock.redis.node-timeout",
                "quorumlock.redis.connect-timeout",
                "quorumlock.redis.max-connections-per-node",
                "quorumlock.redis.restart-guard",
                "quorumlock.redis.tls.ca",
                "quorumlock.redis.tls.cert",
                "quorumlock.redis.tls.key",
                "quorumlock.zookeeper.connect-string",
                "quorumlock.zookeeper.session-timeout",
                "quorumlock.etcd.endpoints",
                "quorumlock.leader.election",
                "quorumlock.leader.ttl")) {
            boolean documented = properties.stream()
                    .anyMatch(p ->
                            name.equals(p.get("name")) && p.get("description") instanceof String d && d.length() > 20);
            if (!documented) {
                undocumented.add(name);
            }
        }
        assertThat(undocumented).as("properties without a description").isEmpty();
        assertThat(properties)
                .filteredOn(p -> "quorumlock.redis.node-timeout".equals(p.get("name")))
                .singleElement()
                .satisfies(p -> assertThat(p.get("defaultValue")).isEqualTo("50ms"));
    }

    /** A context with a meter registry and resource tags, at most {@code max}. */
    private ApplicationContextRunner taggingResources(int max) {
        return runner.withConfiguration(AutoConfigurations.of(QuorumlockMetricsAutoConfiguration.class))
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues(
                        "quorumlock.redis.nodes=redis://127.0.0.1:1",
                        "quorumlock.metrics.tag-resources=true",
                        "quorumlock.metrics.max-tagged-resources=" + max);
    }

    @Test
    void theMetersTagResourcesAsThePropertiesSay() {
        taggingResources(2).run(context -> {
            assertThat(context).hasNotFailed();
            QuorumlockMetrics metrics = context.getBean(QuorumlockMetrics.class);
            assertThat(metrics.toString()).contains("tagResources true (at most 2)");
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            metrics.bindTo(registry);
            for (String resource : List.of("a", "b", "c")) {
                metrics.busy("redis", resource, Duration.ofMillis(1));
            }
            assertThat(registry.find("quorumlock.acquire")
                            .tag("resource", "other")
                            .timers())
                    .isNotEmpty();
        });
    }

    @Test
    void aMaxTaggedResourcesBelowOneFailsTheStartNamingTheProperty() {
        taggingResources(0).run(context -> {
            assertThat(context).hasFailed();
            assertThat(messages(context.getStartupFailure()))
                    .contains("quorumlock.metrics.max-tagged-resources: maxTaggedResources must be at least 1");
        });
    }

    @Test
    void withoutAMeterRegistryThereAreNoMeters() {
        runner.withConfiguration(AutoConfigurations.of(QuorumlockMetricsAutoConfiguration.class))
                .withPropertyValues("quorumlock.redis.nodes=redis://127.0.0.1:1")
                .run(context -> {
                    assertThat(context).hasSingleBean(Redlock.class);
                    assertThat(context).doesNotHaveBean(QuorumlockMetrics.class);
                });
    }

    @Test
    void theSanitizerMasksThePasswordAndTheCredentialsInUris() {
        assertThat(sanitized("quorumlock.redis.password", SECRET)).isEqualTo(SanitizableData.SANITIZED_VALUE);
        assertThat(sanitized("QUORUMLOCK_REDIS_PASSWORD", SECRET)).isEqualTo(SanitizableData.SANITIZED_VALUE);
        assertThat(sanitized("quorumlock.redis.nodes[0]", "redis://u:" + SECRET + "@h:1"))
                .isEqualTo("redis://***@h:1");
        assertThat(sanitized("quorumlock.redis.nodes", List.of("redis://:" + SECRET + "@h:1", "redis://h:2")))
                .isEqualTo(List.of("redis://***@h:1", "redis://h:2"));
        assertThat(sanitized("spring.application.name", "redis://u:p@h:1")).isEqualTo("redis://u:p@h:1");
    }

    private static Object sanitized(String key, Object value) {
        return QuorumlockSanitizingAutoConfiguration.sanitize(new SanitizableData(null, key, value))
                .getValue();
    }

    /** Every message in a failure's chain of causes, one a line. */
    static String messages(Throwable failure) {
        assertThat(failure).as("start-up failure").isNotNull();
        StringBuilder text = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            text.append(t.getMessage()).append('\n');
        }
        return text.toString();
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnLock {
        @Bean(destroyMethod = "close")
        DistributedLock<?> ownLock() {
            return Redlock.builder().node("redis://127.0.0.1:9").build();
        }
    }
}
