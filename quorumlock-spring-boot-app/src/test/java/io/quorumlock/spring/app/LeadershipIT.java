package io.quorumlock.spring.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.spring.LeaderElectedEvent;
import io.quorumlock.spring.LeaderRevokedEvent;
import io.quorumlock.spring.LeadershipEvent;
import io.quorumlock.spring.QuorumlockLeadership;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.EventListener;

/**
 * {@code quorumlock.leader.election} in a whole application over a real redis-server node: the
 * starter's {@link QuorumlockLeadership} bean leads, and the application's own {@code
 * @EventListener} hears the term begin and, when the application closes, end.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LeadershipIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(1);

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Application {
        final List<LeadershipEvent> heard = new CopyOnWriteArrayList<>();

        @EventListener
        void elected(LeaderElectedEvent event) {
            heard.add(event);
        }

        @EventListener
        void revoked(LeaderRevokedEvent event) {
            heard.add(event);
        }
    }

    @Test
    void theElectionPropertyMakesALeaderThatTheApplicationHearsOf() {
        List<LeadershipEvent> heard;
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class)
                .web(WebApplicationType.NONE)
                .properties("quorumlock.redis.nodes=" + redis.uris().get(0), "quorumlock.leader.election=nightly-jobs")
                .run()) {
            QuorumlockLeadership leadership = context.getBean(QuorumlockLeadership.class);
            assertThat(leadership.awaitLeadership(TestTime.scaled(Duration.ofSeconds(10))))
                    .as("the only instance leads")
                    .isPresent();
            heard = context.getBean(Application.class).heard;
            assertThat(heard).singleElement().isInstanceOf(LeaderElectedEvent.class);
            assertThat(heard.get(0).election()).isEqualTo("nightly-jobs");
        }
        assertThat(heard).hasSize(2);
        assertThat(heard.get(1)).isInstanceOf(LeaderRevokedEvent.class);
        assertThat(((LeaderRevokedEvent) heard.get(1)).cause())
                .as("a close is no loss")
                .isEmpty();
    }
}
