package io.quorumlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.LockHolder;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

/**
 * Leader election in whole Spring applications: two instances in one JVM, each a context of its
 * own with the starter's lock, on three real redis-server nodes and on a real PostgreSQL. One
 * leads; an {@code @EventListener} hears each term begin and end; stopping or closing the leader's
 * context hands the role to the other, the first told of its end before the second of its start;
 * on the database each term's fencing token is larger than the one before.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LeadershipIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    private static final String ELECTION = "billing-scheduler";
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(15));
    /** How long a follower may take to lead once the leader stopped: a release wakes it, well within this. */
    private static final Duration HANDOVER = TestTime.scaled(Duration.ofSeconds(10));

    /** What every instance's listener heard, in the order heard. */
    static final List<Told> TOLD = new CopyOnWriteArrayList<>();

    record Told(String instance, String kind, String election, String holder, OptionalLong token, boolean cause) {}

    private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

    @AfterEach
    void closeContexts() {
        contexts.forEach(ConfigurableApplicationContext::close);
        TOLD.clear();
    }

    /** An application with the starter's lock, election and health, and a listener of its own. */
    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({
        QuorumlockAutoConfiguration.class,
        QuorumlockLeaderAutoConfiguration.class,
        QuorumlockHealthAutoConfiguration.class
    })
    static class Application {

        @Bean
        Listener listener(@Value("${test.instance}") String instance) {
            return new Listener(instance);
        }

        @Bean
        @ConditionalOnProperty("test.jdbc-url")
        DataSource dataSource(@Value("${test.jdbc-url}") String url, @Value("${test.jdbc-user}") String user) {
            PGSimpleDataSource source = new PGSimpleDataSource();
            source.setUrl(url);
            source.setUser(user);
            return source;
        }
    }

    /** A user's listener: plain {@code @EventListener} methods. */
    static final class Listener {
        private final String instance;

        Listener(String instance) {
            this.instance = instance;
        }

        @EventListener
        void elected(LeaderElectedEvent event) {
            TOLD.add(new Told(instance, "elected", event.election(), event.holder(), event.fencingToken(), false));
        }

        @EventListener
        void revoked(LeaderRevokedEvent event) {
            TOLD.add(new Told(
                    instance,
                    "revoked",
                    event.election(),
                    event.holder(),
                    event.fencingToken(),
                    event.cause().isPresent()));
        }
    }

    private ConfigurableApplicationContext start(String instance, List<String> properties) {
        List<String> all = new ArrayList<>(properties);
        all.add("test.instance=" + instance);
        all.add("quorumlock.leader.election=" + ELECTION);
        all.add("quorumlock.leader.ttl=5s");
        ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class)
                .web(WebApplicationType.NONE)
                .properties(all.toArray(String[]::new))
                .run();
        contexts.add(context);
        return context;
    }

    private List<String> redisProperties() {
        return List.of(
                "quorumlock.redis.nodes=" + String.join(",", redis.uris()),
                "quorumlock.redis.restart-guard=false",
                "quorumlock.redis.node-timeout=200ms");
    }

    private List<String> jdbcProperties() {
        return List.of(
                "quorumlock.jdbc.enabled=true",
                "quorumlock.jdbc.create-table=true",
                "quorumlock.jdbc.table=leader_locks",
                "test.jdbc-url=" + postgres.jdbcUrl(),
                "test.jdbc-user=" + postgres.user());
    }

    private static QuorumlockLeadership leadership(ConfigurableApplicationContext context) {
        return context.getBean(QuorumlockLeadership.class);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> leaderDetail(ConfigurableApplicationContext context) {
        Health health = context.getBean(QuorumlockHealthAutoConfiguration.BEAN, HealthIndicator.class)
                .health();
        assertThat(health.getStatus()).isEqualTo(Status.UP);
        Map<String, Object> leader = (Map<String, Object>) health.getDetails().get("leader");
        System.out.println("health of " + context.getEnvironment().getProperty("test.instance") + ": "
                + health.getStatus() + ", leader " + leader);
        return leader;
    }

    private static List<String> told() {
        return TOLD.stream().map(t -> t.instance() + " " + t.kind()).toList();
    }

    /** Starts a, then b; a leads, b follows for as long as a leads. */
    private List<ConfigurableApplicationContext> aLeadsAndBFollows(List<String> properties) {
        ConfigurableApplicationContext a = start("a", properties);
        assertThat(leadership(a).awaitLeadership(WAIT)).as("a leads alone").isPresent();
        ConfigurableApplicationContext b = start("b", properties);
        assertThat(leadership(b).awaitLeadership(Duration.ofMillis(500)))
                .as("b while a leads")
                .isEmpty();
        assertThat(leadership(a).isLeader()).as("a still leads").isTrue();
        assertThat(told()).containsExactly("a elected");
        return List.of(a, b);
    }

    /** Waits for b to lead, and returns how long it took. */
    private static long handover(ConfigurableApplicationContext b) {
        long start = System.nanoTime();
        assertThat(leadership(b).awaitLeadership(HANDOVER)).as("b leads").isPresent();
        return (System.nanoTime() - start) / 1_000_000;
    }

    @Test
    void onRedisOneInstanceLeadsAndStoppingItsContextHandsTheRoleToTheOther() {
        List<ConfigurableApplicationContext> instances = aLeadsAndBFollows(redisProperties());
        ConfigurableApplicationContext a = instances.get(0);
        ConfigurableApplicationContext b = instances.get(1);

        Told elected = TOLD.get(0);
        assertThat(elected.election()).isEqualTo(ELECTION);
        assertThat(elected.holder()).isEqualTo(leadership(a).holder()).isNotBlank();
        assertThat(elected.token()).as("a Redis term's token").isEmpty();
        assertThat(leaderDetail(a))
                .containsEntry("election", ELECTION)
                .containsEntry("leading", true)
                .doesNotContainKey("fencingToken");
        assertThat(leaderDetail(b))
                .containsEntry("leading", false)
                .as("who leads, as the servers tell b (both instances of this JVM share the holder name)")
                .containsEntry("leader", leadership(a).holder());
        assertThat(leadership(b).leader())
                .map(LockHolder::name)
                .hasValue(leadership(a).holder());

        long start = System.nanoTime();
        a.stop(); // SmartLifecycle.stop: a steps down and leaves the election
        long stopMillis = (System.nanoTime() - start) / 1_000_000;
        long handoverMillis = handover(b);
        System.out.println("redis: a stopped in " + stopMillis + " ms, b led " + handoverMillis + " ms later");
        assertThat(leadership(a).isLeader()).isFalse();
        assertThat(leadership(a).isRunning()).isFalse();
        assertThat(told()).containsExactly("a elected", "a revoked", "b elected");
        assertThat(TOLD.get(1).cause()).as("a stop is no loss").isFalse();
        assertThat(leaderDetail(a)).containsEntry("leading", false);
        assertThat(leaderDetail(b)).containsEntry("leading", true);

        a.start(); // a candidate again, behind b
        assertThat(leadership(a).awaitLeadership(Duration.ofMillis(500)))
                .as("a while b leads")
                .isEmpty();
        b.close();
        assertThat(leadership(a).awaitLeadership(HANDOVER)).as("a again").isPresent();
        assertThat(told()).containsExactly("a elected", "a revoked", "b elected", "b revoked", "a elected");
    }

    @Test
    void onTheDatabaseTheNextTermHasALargerFencingTokenAndClosingTheLeaderHandsOver() {
        List<ConfigurableApplicationContext> instances = aLeadsAndBFollows(jdbcProperties());
        ConfigurableApplicationContext a = instances.get(0);
        ConfigurableApplicationContext b = instances.get(1);

        long first = TOLD.get(0).token().orElseThrow();
        assertThat(leadership(a).fencingToken()).hasValue(first);
        assertThat(leaderDetail(a))
                .containsEntry("election", ELECTION)
                .containsEntry("leading", true)
                .containsEntry("fencingToken", first);
        assertThat(leaderDetail(b)).containsEntry("leading", false).doesNotContainKey("fencingToken");

        a.close(); // the application shuts down
        long handoverMillis = handover(b);
        System.out.println("jdbc: b led " + handoverMillis + " ms after a closed");
        assertThat(told()).containsExactly("a elected", "a revoked", "b elected");
        Told revoked = TOLD.get(1);
        assertThat(revoked.token()).hasValue(first);
        assertThat(revoked.cause()).isFalse();
        long second = TOLD.get(2).token().orElseThrow();
        assertThat(second).as("the second term's token").isGreaterThan(first);
        assertThat(leaderDetail(b)).containsEntry("leading", true).containsEntry("fencingToken", second);
    }
}
