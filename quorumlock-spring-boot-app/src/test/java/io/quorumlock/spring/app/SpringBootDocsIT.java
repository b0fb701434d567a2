package io.quorumlock.spring.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import io.quorumlock.etcd.EtcdLock;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.EtcdClusterExtension;
import io.quorumlock.testkit.PostgresServerExtension;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import io.quorumlock.testkit.ZooKeeperServers;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.io.DefaultResourceLoader;

/**
 * The classes of docs/spring-boot.md, compiled from the page as they are and run in a whole
 * application (the starter, Actuator, Spring MVC) on each backend: the report job and the leader's
 * listener on Redis, ZooKeeper, etcd and PostgreSQL, the invoice numbers on the fenced ones, the
 * ShedLock job on three redis-server nodes. Each class gets its lock injected as the page says,
 * and the lock's health answers over HTTP.
 */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class SpringBootDocsIT {

    private static final String PAGE = "docs/spring-boot.md";

    private static final String REPORT_SENT = "nightly report sent";

    private static final Pattern TOKEN = Pattern.compile("numbering under fencing token (\\d+)");

    private static final Pattern LEADS = Pattern.compile(" leads billing-scheduler, fencing token (-?\\d+)");

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.members(1);

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    @TempDir
    static Path work;

    private static DocsPage docs;

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Application {}

    @BeforeAll
    static void compileThePage() throws Exception {
        docs = DocsPage.compile(PAGE, work.resolve("classes"));
    }

    @Test
    void onRedisTheReportJobAndTheLeaderRun(CapturedOutput output) throws Exception {
        try (ConfigurableApplicationContext context = start(
                false,
                null,
                "quorumlock.redis.nodes=" + String.join(",", redis.uris()),
                "quorumlock.redis.restart-guard=false",
                "quorumlock.redis.node-timeout=200ms")) {
            theClassesRun(context, output, Redlock.class, "redis");
            assertThat(leadersToken(output)).as("a Redis term has no token").isEqualTo(-1);
        }
    }

    @Test
    void onZooKeeperEveryClassOfThePageRuns(@TempDir Path dir, CapturedOutput output) throws Exception {
        try (TestingServer zookeeper = ZooKeeperServers.server(dir);
                ConfigurableApplicationContext context =
                        start(true, null, "quorumlock.zookeeper.connect-string=" + zookeeper.getConnectString())) {
            theClassesRun(context, output, ZooKeeperLock.class, "zookeeper");
            theInvoiceNumbersGrow(context, output);
        }
    }

    @Test
    void onEtcdEveryClassOfThePageRuns(CapturedOutput output) throws Exception {
        try (ConfigurableApplicationContext context =
                start(true, null, "quorumlock.etcd.endpoints=" + String.join(",", etcd.endpoints()))) {
            theClassesRun(context, output, EtcdLock.class, "etcd");
            theInvoiceNumbersGrow(context, output);
        }
    }

    /** The database lock turned on by create-table alone, beside the application's DataSource. */
    @Test
    void onPostgresEveryClassOfThePageRuns(CapturedOutput output) throws Exception {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(postgres.jdbcUrl());
        dataSource.setUser(postgres.user());
        try (ConfigurableApplicationContext context =
                start(true, dataSource, "quorumlock.jdbc.create-table=true", "quorumlock.jdbc.table=docs_locks")) {
            theClassesRun(context, output, JdbcLock.class, "jdbc");
            theInvoiceNumbersGrow(context, output);
        }
    }

    @Test
    void theShedLockJobRunsOnceWhileItsLockIsKept(CapturedOutput output) throws Exception {
        Map<String, String> swaps = new LinkedHashMap<>();
        for (int i = 0; i < 3; i++) {
            swaps.put("redis://redis-" + (i + 1) + ":6379", redis.uris().get(i));
        }
        // Nodes started a moment ago: the restart guard would keep them out for the TTL.
        swaps.put(".build();", ".restartGuard(false).nodeTimeout(java.time.Duration.ofMillis(200)).build();");
        DocsPage shed = docs.swapped(PAGE, swaps, work.resolve("shedlock"));
        Class<?> jobs = shed.type("ScheduledJobs");
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class, jobs)
                        .resourceLoader(new DefaultResourceLoader(shed.loader()))
                        .web(WebApplicationType.NONE)
                        .run();
                Redlock other = Redlock.builder()
                        .nodes(redis.uris())
                        .restartGuard(false)
                        .nodeTimeout(Duration.ofMillis(200))
                        .build()) {
            Method dailyReport = jobs.getMethod("dailyReport");
            Object bean = context.getBean(jobs);
            dailyReport.invoke(bean);
            assertThat(other.holder("daily-report"))
                    .as("the lock ShedLock keeps for lockAtLeastFor, as another instance sees it")
                    .isPresent();
            dailyReport.invoke(bean);
            assertThat(count(output, "one instance sends the daily report"))
                    .as("runs of the job while its lock is kept")
                    .isEqualTo(1);
        }
    }

    /** An application of the page's classes with the starter, on a random port of 127.0.0.1, electing a leader. */
    private static ConfigurableApplicationContext start(boolean fenced, DataSource dataSource, String... properties) {
        List<Class<?>> sources = new ArrayList<>(List.of(
                Application.class, docs.type("NightlyReport"), docs.type("BillingScheduler"), docs.type("Backups")));
        if (fenced) {
            sources.add(docs.type("InvoiceNumbers"));
        }
        SpringApplicationBuilder application = new SpringApplicationBuilder(sources.toArray(Class<?>[]::new))
                .resourceLoader(new DefaultResourceLoader(docs.loader()))
                .properties(
                        "server.address=127.0.0.1",
                        "server.port=0",
                        "management.endpoint.health.show-details=always",
                        "quorumlock.leader.election=billing-scheduler")
                .properties(properties);
        if (dataSource != null) {
            application.initializers(context -> ((GenericApplicationContext) context)
                    .registerBean("dataSource", DataSource.class, () -> dataSource));
        }
        return application.run();
    }

    /**
     * The report runs, does not while the lock's own type holds its resource, and runs again; the
     * report got the context's lock; the leader's listener hears its term; the lock's health is UP
     * over HTTP, with the leader.
     */
    private void theClassesRun(
            ConfigurableApplicationContext context,
            CapturedOutput output,
            Class<? extends DistributedLock<?>> own,
            String backend)
            throws Exception {
        Class<?> type = docs.type("NightlyReport");
        Object report = context.getBean(type);
        Method run = type.getMethod("run");
        DistributedLock<?> lock = context.getBean(own);
        Field injected = type.getDeclaredField("lock");
        injected.setAccessible(true);
        assertThat(injected.get(report)).as("the report's lock").hasToString(lock.toString());
        assertThat(context.getBean(DistributedLock.class))
                .as("a DistributedLock without its lease type")
                .isSameAs(lock);

        run.invoke(report);
        assertThat(count(output, REPORT_SENT)).as("reports sent").isEqualTo(1);
        try (Lease held = lock.acquire("nightly-report", Duration.ofSeconds(30), Duration.ofSeconds(10))) {
            run.invoke(report);
            assertThat(count(output, REPORT_SENT))
                    .as("reports sent while " + held + " is held")
                    .isEqualTo(1);
        }
        run.invoke(report);
        assertThat(count(output, REPORT_SENT)).as("reports sent").isEqualTo(2);

        Class<?> backups = docs.type("Backups");
        backups.getMethod("backUp", String.class).invoke(context.getBean(backups), "orders");
        assertThat(output.toString()).containsPattern("backing up orders under permit [123]\\b");

        TestTime.await(
                Duration.ofSeconds(20), () -> LEADS.matcher(output.toString()).find(), "the leader's line");
        HttpResponse<String> health = get(context, "/actuator/health/quorumlock");
        System.out.println(backend + " health: " + health.statusCode() + " " + health.body());
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body())
                .contains("\"status\":\"UP\"", "\"backend\":\"" + backend + "\"", "\"election\":\"billing-scheduler\"");
    }

    /** Two runs of the invoice numbers, each under a larger token. */
    private static void theInvoiceNumbersGrow(ConfigurableApplicationContext context, CapturedOutput output)
            throws Exception {
        Class<?> type = docs.type("InvoiceNumbers");
        Object numbers = context.getBean(type);
        Method numberInvoices = type.getMethod("numberInvoices");
        numberInvoices.invoke(numbers);
        numberInvoices.invoke(numbers);
        List<Long> tokens = new ArrayList<>();
        Matcher m = TOKEN.matcher(output.toString());
        while (m.find()) {
            tokens.add(Long.parseLong(m.group(1)));
        }
        assertThat(tokens).hasSize(2);
        assertThat(tokens.get(1)).isGreaterThan(tokens.get(0));
        assertThat(leadersToken(output)).as("a fenced term's token").isPositive();
    }

    private static long leadersToken(CapturedOutput output) {
        Matcher m = LEADS.matcher(output.toString());
        assertThat(m.find()).as("the leader's line").isTrue();
        return Long.parseLong(m.group(1));
    }

    private static int count(CapturedOutput output, String line) {
        return (int) output.toString().lines().filter(line::equals).count();
    }

    private HttpResponse<String> get(ConfigurableApplicationContext context, String path) throws Exception {
        String port = context.getEnvironment().getProperty("local.server.port");
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
