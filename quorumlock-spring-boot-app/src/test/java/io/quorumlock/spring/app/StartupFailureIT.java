package io.quorumlock.spring.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.quorumlock.testkit.RedisServersExtension;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * What a user sees when the application does not start: a whole {@code SpringApplication} over a
 * real redis-server node, its output captured. One line names the property and the remedy; no
 * stack trace, no line twice, no secret.
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

    private static Throwable start(String... properties) {
        return catchThrowable(() -> {
            ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class)
                    .web(WebApplicationType.NONE)
                    .properties(properties)
                    .run();
            context.close();
        });
    }

    @Test
    void anUnsetPasswordVariableStopsTheStartNamingThePropertyAndTheRemedy(CapturedOutput output) {
        assertThat(System.getenv(UNSET)).as(UNSET).isNull();
        Throwable failure = start(
                "quorumlock.redis.nodes=" + redis.uris().get(0),
                "quorumlock.redis.restart-guard=false",
                "quorumlock.redis.password=${" + UNSET + "}");
        assertThat(failure).as("the start fails").isNotNull();
        String line = theOneLineNaming("quorumlock.redis.password", output);
        assertThat(line)
                .contains("${" + UNSET + "}")
                .contains("set the environment variable " + UNSET)
                .contains("${" + UNSET + ":}");
        assertOneReportWithoutStackTrace(output);
    }

    @Test
    void anUnsetVariableInANodeUriStopsTheStartWithoutShowingTheUrisPassword(CapturedOutput output) {
        Throwable failure = start("quorumlock.redis.nodes=redis://:" + SECRET + "@${QUORUMLOCK_TEST_UNSET_HOST}:6379");
        assertThat(failure).as("the start fails").isNotNull();
        String line = theOneLineNaming("quorumlock.redis.nodes[0]", output);
        assertThat(line).contains("${QUORUMLOCK_TEST_UNSET_HOST}").contains("set the environment variable");
        assertThat(output.toString()).doesNotContain(SECRET);
        assertOneReportWithoutStackTrace(output);
    }

    @Test
    void aBadValueStopsTheStartWithOneLineNamingThePropertyAndNoStackTrace(CapturedOutput output) {
        Throwable failure =
                start("quorumlock.redis.nodes=" + redis.uris().get(0), "quorumlock.redis.node-timeout=-5ms");
        assertThat(failure).as("the start fails").isNotNull();
        assertThat(theOneLineNaming("quorumlock.redis.node-timeout", output))
                .contains("quorumlock.redis.node-timeout: nodeTimeout must be positive, was -5 ms");
        assertOneReportWithoutStackTrace(output);
    }

    @Test
    void aLeaderTtlTheLockCannotUseStopsTheStartWithOneLineNamingTheProperty(CapturedOutput output) {
        Throwable failure = start(
                "quorumlock.redis.nodes=" + redis.uris().get(0),
                "quorumlock.leader.election=nightly-jobs",
                "quorumlock.leader.ttl=0s");
        assertThat(failure).as("the start fails").isNotNull();
        assertThat(theOneLineNaming("quorumlock.leader.ttl", output))
                .contains("quorumlock.leader.ttl: ttl must be positive, was 0 ms (the default is 30 s)");
        assertOneReportWithoutStackTrace(output);
    }

    @Test
    void twoBackendsStopTheStartWithOneLineAndTheRemedy(CapturedOutput output) {
        Throwable failure = start(
                "quorumlock.redis.nodes=" + redis.uris().get(0), "quorumlock.zookeeper.connect-string=127.0.0.1:1");
        assertThat(failure).as("the start fails").isNotNull();
        assertThat(theOneLineNaming("quorumlock.zookeeper.connect-string", output))
                .contains("set quorumlock.primary to redis or zookeeper");
        assertOneReportWithoutStackTrace(output);
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
