package io.quorumlock.spring.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.Lease;
import io.quorumlock.testkit.RedisServersExtension;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.support.GenericApplicationContext;

/**
 * What a user sees when the application does not start: a whole {@code SpringApplication} over a
 * real redis-server node, its output captured. One line names the property and the remedy (or, for
 * a lock the context does not have, the reason and what to set); no stack trace, no line twice, no
 * secret.
 */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StartupFailureIT {

    private static final String SECRET = "n0de-uri-Secr3t";

    /** A variable no environment sets. */
    private static final String UNSET = "QUORUMLOCK_TEST_UNSET_PASSWORD";

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(1);

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Application {}

    /** A class of the application that needs the lock as the Spring Boot notes inject it. */
    static class Report {
        Report(DistributedLock<Lease> lock) {}
    }

    /** A class that needs a fenced lock. */
    static class Invoices {
        Invoices(DistributedLock<FencedLease> lock) {}
    }

    private static Throwable start(String... properties) {
        return start(List.of(), null, properties);
    }

    /** Starts the application with {@code classes} and the application's {@code dataSource}, if any; the failure. */
    private static Throwable start(List<Class<?>> classes, DataSource dataSource, String... properties) {
        List<Class<?>> sources = new ArrayList<>(classes);
        sources.add(0, Application.class);
        SpringApplicationBuilder application = new SpringApplicationBuilder(sources.toArray(Class<?>[]::new))
                .web(WebApplicationType.NONE)
                .properties(properties);
        if (dataSource != null) {
            application.initializers(context -> ((GenericApplicationContext) context)
                    .registerBean("dataSource", DataSource.class, () -> dataSource));
        }
        return catchThrowable(() -> application.run().close());
    }

    @Test
    void anUnsetPasswordVariableStopsTheStartNamingThePropertyAndTheRemedy(CapturedOutput output) {
        assertThat(System.getenv(UNSET)).as(UNSET).isNull();
        assertThat(refused(
                        output,
                        "quorumlock.redis.password",
                        "quorumlock.redis.nodes=" + redis.uris().get(0),
                        "quorumlock.redis.restart-guard=false",
                        "quorumlock.redis.password=${" + UNSET + "}"))
                .contains("${" + UNSET + "}")
                .contains("set the environment variable " + UNSET)
                .contains("${" + UNSET + ":}");
    }

    @Test
    void anUnsetVariableInANodeUriStopsTheStartWithoutShowingTheUrisPassword(CapturedOutput output) {
        assertThat(refused(
                        output,
                        "quorumlock.redis.nodes[0]",
                        "quorumlock.redis.nodes=redis://:" + SECRET + "@${QUORUMLOCK_TEST_UNSET_HOST}:6379"))
                .contains("${QUORUMLOCK_TEST_UNSET_HOST}")
                .contains("set the environment variable");
        assertThat(output.toString()).doesNotContain(SECRET);
    }

    @Test
    void aBadValueStopsTheStartWithOneLineNamingThePropertyAndNoStackTrace(CapturedOutput output) {
        assertThat(refused(
                        output,
                        "quorumlock.redis.node-timeout",
                        "quorumlock.redis.nodes=" + redis.uris().get(0),
                        "quorumlock.redis.node-timeout=-5ms"))
                .contains("quorumlock.redis.node-timeout: nodeTimeout must be positive, was -5 ms");
    }

    @Test
    void aLeaderTtlTheLockCannotUseStopsTheStartWithOneLineNamingTheProperty(CapturedOutput output) {
        assertThat(refused(
                        output,
                        "quorumlock.leader.ttl",
                        "quorumlock.redis.nodes=" + redis.uris().get(0),
                        "quorumlock.leader.election=nightly-jobs",
                        "quorumlock.leader.ttl=0s"))
                .contains("quorumlock.leader.ttl: ttl must be positive, was 0 ms (the default is 30 s)");
    }

    /** Boot reads a bare number as milliseconds: 10 would be a TTL of 10 ms. */
    @Test
    void aLeaderTtlWithoutAUnitStopsTheStartNamingTheUnit(CapturedOutput output) {
        assertThat(refused(
                        output,
                        "quorumlock.leader.ttl",
                        "quorumlock.redis.nodes=" + redis.uris().get(0),
                        "quorumlock.leader.election=nightly-jobs",
                        "quorumlock.leader.ttl=10"))
                .contains("quorumlock.leader.ttl=10 has no unit, and would be read as 10 ms: write the unit, such as"
                        + " 10s for seconds");
    }

    @Test
    void twoBackendsStopTheStartWithOneLineAndTheRemedy(CapturedOutput output) {
        assertThat(refused(
                        output,
                        "quorumlock.zookeeper.connect-string",
                        "quorumlock.redis.nodes=" + redis.uris().get(0),
                        "quorumlock.zookeeper.connect-string=127.0.0.1:1"))
                .contains("set quorumlock.primary to redis or zookeeper");
    }

    @Test
    void aLockInjectedWithoutABackendSaysWhichPropertiesGiveOne(CapturedOutput output) {
        assertThat(start(List.of(Report.class), null)).as("the start fails").isNotNull();
        assertThat(output.toString())
                .contains(Report.class.getName() + " needs a DistributedLock<Lease>, and no quorumlock backend is"
                        + " configured.")
                .contains("Configure one: quorumlock.redis.nodes, quorumlock.zookeeper.connect-string or"
                        + " quorumlock.etcd.endpoints, or quorumlock.jdbc.enabled=true with a DataSource")
                .doesNotContain("could not be found");
        assertOneReportWithoutStackTrace(output);
    }

    @Test
    void aLockInjectedBesideADataSourceWithoutJdbcPropertiesNamesTheProperty(CapturedOutput output) {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl("jdbc:postgresql://127.0.0.1:1/app");
        assertThat(start(List.of(Report.class), dataSource))
                .as("the start fails")
                .isNotNull();
        assertThat(output.toString())
                .contains("no quorumlock backend is configured, though the context has a DataSource.")
                .contains("Set quorumlock.jdbc.enabled=true to lock in that database");
        assertOneReportWithoutStackTrace(output);
    }

    @Test
    void aFencedLockAskedOfRedisSaysWhy(CapturedOutput output) {
        Throwable failure = start(
                List.of(Invoices.class),
                null,
                "quorumlock.redis.nodes=" + redis.uris().get(0),
                "quorumlock.redis.restart-guard=false");
        assertThat(failure).as("the start fails").isNotNull();
        assertThat(output.toString())
                .contains("needs a DistributedLock<FencedLease>, and the lock is a Redlock (quorumlock.redis.nodes),"
                        + " whose leases carry no fencing token.")
                .contains("Inject DistributedLock<Lease> or Redlock, or configure a fenced backend");
        assertOneReportWithoutStackTrace(output);
    }

    /**
     * Starts the application with {@code properties}, which must stop the start with one report
     * without a stack trace; the report's line naming {@code property}.
     */
    static String refused(CapturedOutput output, String property, String... properties) {
        return refused(output, property, (DataSource) null, properties);
    }

    /** As {@link #refused(CapturedOutput, String, String...)}, with the application's {@code dataSource}. */
    static String refused(CapturedOutput output, String property, DataSource dataSource, String... properties) {
        assertThat(start(List.of(), dataSource, properties))
                .as("the start fails")
                .isNotNull();
        String line = theOneLineNaming(property, output);
        assertOneReportWithoutStackTrace(output);
        return line;
    }

    /**
     * The report's line naming {@code property}. Spring Framework's own warning that it cancels the
     * refresh may repeat it in a line of its own; no other line does.
     */
    private static String theOneLineNaming(String property, CapturedOutput output) {
        List<String> naming = lines(output).stream()
                .filter(l -> l.contains(property))
                .filter(l -> !l.contains("Exception encountered during context initialization"))
                .toList();
        assertThat(naming).as("lines naming " + property).hasSize(1);
        return naming.get(0);
    }

    private static void assertOneReportWithoutStackTrace(CapturedOutput output) {
        List<String> lines = lines(output);
        assertThat(lines)
                .filteredOn(l -> l.contains("APPLICATION FAILED TO START"))
                .hasSize(1);
        assertThat(lines).as("stack trace lines").noneMatch(l -> l.startsWith("\tat ") || l.startsWith("Caused by:"));
        assertThat(lines).noneMatch(l -> l.contains("Application run failed"));
        List<String> logged =
                lines.stream().filter(l -> !l.isBlank() && !l.matches("\\*+")).toList();
        assertThat(logged).as("lines logged twice").doesNotHaveDuplicates();
    }

    private static List<String> lines(CapturedOutput output) {
        return Arrays.asList(output.toString().split("\\R"));
    }
}
