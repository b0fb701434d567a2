package io.quorumlock.examples.readme;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.quorumlock.testkit.PostgresServer;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.TlsMaterial;
import io.quorumlock.testkit.ZooKeeperServers;
import java.io.IOException;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The documentation's code is tested code: every java block of README.md and docs/*.md is a whole
 * class that compiles against the project's artifacts, the Quick start, the fenced example and the
 * TLS example run as pasted against real servers (only their addresses swapped for the test's),
 * wherever they are, the test kit's examples run as JUnit tests, and the README's dependency block
 * names this build's version.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReadmeIT {

    private static final Readme DOCS = Readme.load();

    @TempDir
    static Path classes;

    private static URLClassLoader loader;

    @BeforeAll
    static void compileEveryJavaBlock() throws IOException {
        List<Readme.Block> blocks = DOCS.blocks("java");
        assertThat(blocks).as("java blocks in README.md and docs/*.md").hasSizeGreaterThanOrEqualTo(5);
        loader = SnippetCompiler.compile(blocks, classes);
    }

    @Test
    void theQuickStartRunsAsPastedAgainstThreeFreshNodes() throws Exception {
        assertThat(runOnThreeFreshNodes("QuickStart")).isEqualTo("daily report sent\ncache rebuilt\n");
    }

    @Test
    void theReadWriteExampleRunsAsPastedAgainstThreeFreshNodes() throws Exception {
        assertThat(runOnThreeFreshNodes("ReadWriteQuickStart"))
                .matches("reading beside up to 7 other readers\nrebuilding alone, valid for \\d+ s\n");
    }

    @Test
    void theAsyncExampleRunsAsPastedAgainstThreeFreshNodes() throws Exception {
        assertThat(runOnThreeFreshNodes("AsyncQuickStart")).matches("locked, valid for \\d+ s\n");
    }

    /** What the page's class {@code name} prints against three fresh nodes in place of the page's. */
    private static String runOnThreeFreshNodes(String name) throws Exception {
        try (RedisServers nodes = RedisServers.start(3, false)) {
            // The pages' nodes are those of 'quorumlock nodes --count 3 --port 7001'.
            Map<String, String> addresses = new LinkedHashMap<>();
            for (int i = 0; i < 3; i++) {
                addresses.put(
                        "127.0.0.1:" + (7001 + i), "127.0.0.1:" + nodes.get(i).port());
            }
            return run(DOCS.java(name), addresses);
        }
    }

    @Test
    void theFencedExampleRunsAsPastedAndSellsOneUnitPerRun(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(
                PostgresServer.available(),
                () -> PostgresServer.unavailableReason().orElse("no PostgreSQL"));
        Readme.Block fenced = DOCS.java("FencedQuickStart");
        try (TestingServer zookeeper = ZooKeeperServers.server(dir);
                PostgresServer postgres = PostgresServer.start()) {
            Map<String, String> addresses = new LinkedHashMap<>();
            addresses.put("127.0.0.1:2181", zookeeper.getConnectString());
            addresses.put("jdbc:postgresql://127.0.0.1:5432/postgres", postgres.jdbcUrl());
            addresses.put("\"postgres\"", "\"" + postgres.user() + "\"");

            assertThat(run(fenced, addresses)).startsWith("sold one, 9 left; token ");
            assertThat(run(fenced, addresses)).startsWith("sold one, 8 left; token ");
        }
    }

    @Test
    void theSemaphoreExampleRunsAsPastedUnderAPermitWithItsToken() throws Exception {
        Assumptions.assumeTrue(
                PostgresServer.available(),
                () -> PostgresServer.unavailableReason().orElse("no PostgreSQL"));
        Readme.Block semaphore = DOCS.java("SemaphoreQuickStart");
        try (PostgresServer postgres = PostgresServer.start()) {
            Map<String, String> addresses = new LinkedHashMap<>();
            addresses.put("jdbc:postgresql://127.0.0.1:5432/postgres", postgres.jdbcUrl());
            addresses.put("\"postgres\"", "\"" + postgres.user() + "\"");
            String out = run(semaphore, addresses);
            assertThat(out).matches("backed up under permit [123] of 3, token \\d+\n");
            // The table and the fence's table exist now: a second run takes a permit again.
            assertThat(run(semaphore, addresses)).startsWith("backed up under permit ");
        }
    }

    @Test
    void theDatabaseLockExampleRunsAsPastedWithGrowingTokens() throws Exception {
        Assumptions.assumeTrue(
                PostgresServer.available(),
                () -> PostgresServer.unavailableReason().orElse("no PostgreSQL"));
        Readme.Block databaseLock = DOCS.java("DatabaseLockQuickStart");
        try (PostgresServer postgres = PostgresServer.start()) {
            Map<String, String> addresses = new LinkedHashMap<>();
            addresses.put("jdbc:postgresql://127.0.0.1:5432/postgres", postgres.jdbcUrl());
            String first = run(databaseLock, addresses);
            String second = run(databaseLock, addresses);
            assertThat(first).startsWith("sold one under token ");
            assertThat(second).startsWith("sold one under token ");
            assertThat(Long.parseLong(second.trim().replaceAll("\\D", "")))
                    .isGreaterThan(Long.parseLong(first.trim().replaceAll("\\D", "")));
        }
    }

    @Test
    void theTlsExampleRunsAsPastedAgainstThreeNodesThatRequireClientCertificates() throws Exception {
        Readme.Block tls = DOCS.java("TlsQuickStart");
        List<RedisServer> nodes = new ArrayList<>();
        try (TlsMaterial material = TlsMaterial.generate("127.0.0.1")) {
            for (int i = 0; i < 3; i++) {
                nodes.add(RedisServer.startTls(material, true));
            }
            Map<String, String> swaps = new LinkedHashMap<>();
            for (int i = 0; i < 3; i++) {
                swaps.put(
                        "redis-" + (i + 1) + ":6380",
                        "127.0.0.1:" + nodes.get(i).port());
            }
            swaps.put("/etc/quorumlock/redis-ca.pem", material.caCertificate().toString());
            swaps.put("/etc/quorumlock/client.pem", material.clientCertificate().toString());
            swaps.put("/etc/quorumlock/client.key", material.clientKey().toString());
            // The nodes were started a moment ago: the restart guard would keep them out for the TTL.
            swaps.put(".build();", ".restartGuard(false).build();");
            assertThat(run(tls, swaps)).startsWith("locked over TLS, valid for ");
        } finally {
            nodes.forEach(RedisServer::close);
        }
    }

    @Test
    void theTestKitExamplesRunAsJUnitTests() {
        for (String name : List.of("NodeFaultsTest", "TlsNodeTest", "PartitionTest")) {
            Readme.Block testKit = DOCS.java(name);
            SummaryGeneratingListener listener = new SummaryGeneratingListener();
            Class<?> test = SnippetCompiler.load(loader, testKit);
            LauncherFactory.create()
                    .execute(
                            LauncherDiscoveryRequestBuilder.request()
                                    .selectors(selectClass(test))
                                    .build(),
                            listener);
            TestExecutionSummary summary = listener.getSummary();
            summary.getFailures().forEach(f -> f.getException().printStackTrace());
            assertThat(summary.getTestsSucceededCount()).as(testKit + " passed").isEqualTo(1);
            assertThat(summary.getTotalFailureCount()).isZero();
        }
    }

    @Test
    void theDependencyBlockNamesThisBuildsVersions() throws IOException {
        String pom = Files.readString(DOCS.root().resolve("pom.xml"));
        String version = tag(pom, "version"); // the parent's own, the first in its pom
        String slf4j = tag(pom, "slf4j.version");
        Readme.Page readme = DOCS.readme();
        List<Readme.Block> xml = readme.blocks("xml");
        assertThat(xml).as("the README's dependency block").isNotEmpty();
        String dependencies = xml.get(0).text();
        assertThat(dependencies)
                .contains("<artifactId>quorumlock-core</artifactId>\n  <version>" + version + "</version>")
                .contains("<artifactId>slf4j-simple</artifactId>")
                .contains("<version>" + slf4j + "</version>");
        assertThat(readme.blocks("sh"))
                .as("the Quick start's install line")
                .anySatisfy(sh -> assertThat(sh.text()).contains("mvn -B install -DskipTests", version));
    }

    private static String tag(String xml, String name) {
        Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</").matcher(xml);
        assertThat(m.find()).as("<" + name + "> in pom.xml").isTrue();
        return m.group(1);
    }

    /**
     * Compiles the block again with its addresses swapped, runs its {@code main}, and returns what
     * it printed.
     */
    private static String run(Readme.Block block, Map<String, String> addresses) throws Exception {
        return SnippetCompiler.run(block, addresses, Files.createTempDirectory(classes, "run"));
    }
}
