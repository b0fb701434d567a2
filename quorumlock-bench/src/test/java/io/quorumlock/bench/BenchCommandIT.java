package io.quorumlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.PostgresServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The smoke test of {@code quorumlock bench}: a {@code --smoke} run, in this JVM and without JMH
 * forks, starts its nodes, runs two short JMH cases, the resource probe and a short contention,
 * and on a PostgreSQL of its own (skipped where PostgreSQL cannot run) a few cycles and hand-offs
 * of the three database locks, and on a ZooKeeper ensemble and an etcd cluster of its own (etcd
 * skipped where it cannot run) a few cycles and one hand-off of ZooKeeperLock and Curator's
 * mutex, EtcdLock and jetcd's lock, and a queue of a few threads of one process on each (the Redis
 * hand-off is left out: {@link RedisLocksIT}); it prints the table and the targets, and writes a well-formed
 * results file and chart. It measures nothing worth quoting. (Jackson comes with Redisson, the
 * benchmark-only dependency.)
 */
// It starts 5 Redis nodes, PostgreSQL, a ZooKeeper ensemble and an etcd cluster one after the
// other: about 40 s on an idle machine, more beside other work.
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BenchCommandIT {

    private static final List<String> CASE_FIELDS =
            List.of("case", "library", "nodes", "threads", "ops_per_s", "p50_us", "p99_us", "alloc_bytes_per_op");

    @TempDir
    Path dir;

    @Test
    void smokeRunPrintsTheTableAndWritesItsResults() throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine command =
                BenchCommand.commandLine().setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true));

        int exitCode = command.execute("--smoke", "--out", dir.toString());

        assertThat(exitCode).as("exit code; stdout:%n%s%nstderr:%n%s", out, err).isZero();
        assertThat(out.toString())
                .contains("case", "ops/s", "p50 µs", "p99 µs", "alloc B/op")
                .contains("raw-jedis", "quorumlock", "TARGETS", BenchCommand.JSON_FILE)
                .contains(Plan.DB_CYCLE, Plan.DB_HAND_OFF, Plan.SHEDLOCK, Plan.SPRING_INTEGRATION)
                .contains(
                        Plan.ZK_CYCLE, Plan.ZK_HAND_OFF, Plan.CURATOR, Plan.ETCD_CYCLE, Plan.ETCD_HAND_OFF, Plan.JETCD)
                .contains(Plan.ZK_QUEUE, Plan.ETCD_QUEUE)
                .contains("9. ZooKeeper and etcd hand-off at most 1.2x their own clients'")
                .contains("10. ZooKeeperLock and EtcdLock cycles at least 0.9x their own clients'")
                .contains("11. Redis hand-off p50 at most 3 round trips of a PING after idle to the same nodes")
                .contains("   why: A hand-off is a release that wakes an idle server")
                .contains("12. Threads of one process queued on one resource");

        JsonNode root =
                new ObjectMapper().readTree(dir.resolve(BenchCommand.JSON_FILE).toFile());
        assertThat(root.path("mode").asText()).isEqualTo("smoke");
        JsonNode cases = root.path("cases");
        assertThat(cases.isArray()).isTrue();
        List<String> names = new ArrayList<>();
        for (JsonNode c : cases) {
            assertThat(CASE_FIELDS)
                    .allSatisfy(field -> assertThat(c.has(field))
                            .as("field %s in %s", field, c)
                            .isTrue());
            assertThat(c.has("error")).as("a case failed: %s", c).isFalse();
            names.add(c.path("case").asText() + "/" + c.path("library").asText());
        }
        assertThat(names)
                .contains(
                        "single-node/raw-jedis",
                        "single-node/quorumlock",
                        "contention/quorumlock",
                        "contention/quorumlock-waiting");
        List<String> database = new ArrayList<>();
        for (String caseId : List.of(Plan.DB_CYCLE, Plan.DB_HAND_OFF)) {
            for (String library : List.of(Plan.QUORUMLOCK, Plan.SHEDLOCK, Plan.SPRING_INTEGRATION)) {
                database.add(caseId + "/" + library);
            }
        }
        assertThat(names).containsAll(database);
        List<String> etcd = new ArrayList<>();
        for (String caseId : List.of(Plan.ZK_CYCLE, Plan.ZK_HAND_OFF)) {
            assertThat(names).contains(caseId + "/" + Plan.QUORUMLOCK, caseId + "/" + Plan.CURATOR);
        }
        assertThat(names).contains(Plan.ZK_QUEUE + "/" + Plan.QUORUMLOCK);
        for (String caseId : List.of(Plan.ETCD_CYCLE, Plan.ETCD_HAND_OFF)) {
            etcd.add(caseId + "/" + Plan.QUORUMLOCK);
            etcd.add(caseId + "/" + Plan.JETCD);
        }
        etcd.add(Plan.ETCD_QUEUE + "/" + Plan.QUORUMLOCK);
        assertThat(names).containsAll(etcd);
        // the Redis hand-off is RedisLocksIT's, apart, to keep this run short
        assertThat(names).noneMatch(name -> name.startsWith("redis-"));
        for (JsonNode c : cases) {
            if (c.path("library").asText().equals(Plan.QUORUMLOCK_WAITING)) {
                // 8 clients that wait, woken by releases: wins, each with its wait, and no overlap
                assertThat(c.path("wins").asLong()).as("wins in %s", c).isPositive();
                assertThat(c.path("wait_p99_us").asLong())
                        .isGreaterThanOrEqualTo(c.path("wait_p50_us").asLong());
                assertThat(c.path("wait_p99_hand_offs").asDouble()).isPositive();
                assertThat(c.path("overlaps").asInt()).isZero();
            }
        }
        boolean postgres = PostgresServer.available();
        for (JsonNode c : cases) {
            String name = c.path("case").asText() + "/" + c.path("library").asText();
            if ((database.contains(name) && !postgres) || (etcd.contains(name) && !EtcdCluster.available())) {
                assertThat(c.path("skipped").asText())
                        .as("why %s was skipped", name)
                        .isNotEmpty();
                continue;
            }
            if (Plan.queue(c.path("case").asText())) {
                // every thread queued, then granted in turn
                assertThat(c.path("threads").asInt()).isEqualTo(Plan.smoke().queuedThreads());
                assertThat(c.path("hand_offs").asInt()).isEqualTo(Plan.smoke().queuedThreads());
                assertThat(c.path("p50_us").asDouble()).as("queue p50 of %s", c).isPositive();
                assertThat(c.path("hand_off_max_us").asDouble())
                        .isGreaterThanOrEqualTo(c.path("p99_us").asDouble());
                assertThat(c.path("total_ms").asDouble())
                        .as("total of %s", c)
                        .isGreaterThanOrEqualTo(c.path("p50_us").asDouble() / 1000);
                assertThat(c.path("overlaps").asInt()).as("overlaps in %s", c).isZero();
                continue;
            }
            if (Plan.handOff(c.path("case").asText())) {
                // latencies from the release call to the waiter's grant, no rate
                assertThat(c.path("ops_per_s").isNull()).as("ops/s of %s", c).isTrue();
                assertThat(c.path("p50_us").asDouble())
                        .as("hand-off p50 of %s", c)
                        .isPositive();
                assertThat(c.path("p99_us").asDouble())
                        .isGreaterThanOrEqualTo(c.path("p50_us").asDouble());
                assertThat(c.path("hand_offs").asInt())
                        .isEqualTo(
                                c.path("case").asText().equals(Plan.DB_HAND_OFF)
                                        ? Plan.smoke().handOffs()
                                        : Plan.smoke().consensusHandOffs());
                assertThat(c.path("overlaps").asInt())
                        .as("grants before the release in %s", c)
                        .isZero();
                continue;
            }
            assertThat(c.path("ops_per_s").asDouble()).as("ops/s of %s", c).isPositive();
            if (List.of(Plan.DB_CYCLE, Plan.ZK_CYCLE, Plan.ETCD_CYCLE)
                    .contains(c.path("case").asText())) {
                assertThat(c.path("p50_us").asDouble()).as("cycle p50 of %s", c).isPositive();
                assertThat(c.path("failures").asLong())
                        .as("free locks refused in %s", c)
                        .isZero();
                assertThat(c.path("errors").asLong()).as("errors in %s", c).isZero();
            }
            if (c.path("case").asText().equals("single-node")) {
                assertThat(c.path("p50_us").asDouble()).isPositive();
                assertThat(c.path("p99_us").asDouble())
                        .isGreaterThanOrEqualTo(c.path("p50_us").asDouble());
                assertThat(c.path("alloc_bytes_per_op").isNumber())
                        .as("allocation of %s", c)
                        .isTrue();
            }
        }
        JsonNode targets = root.path("targets");
        assertThat(targets.size()).isEqualTo(13);
        assertThat(targets.get(8).path("title").asText()).startsWith("ZooKeeper and etcd hand-off");
        assertThat(targets.get(9).path("title").asText()).startsWith("ZooKeeperLock and EtcdLock cycles");
        for (JsonNode target : List.of(targets.get(8), targets.get(9))) {
            // real bounds, a verdict per backend (smoke figures: pass or fail, not quoted)
            assertThat(target.path("checks").get(0).path("bound").asText()).isNotEmpty();
            assertThat(target.path("checks").get(1).path("bound").asText()).isNotEmpty();
            assertThat(target.path("checks").get(0).path("ratio").isNumber())
                    .as("ZooKeeper check of %s", target)
                    .isTrue();
            if (EtcdCluster.available()) {
                assertThat(target.path("checks").get(1).path("ratio").isNumber())
                        .as("etcd check of %s", target)
                        .isTrue();
            }
        }
        assertThat(targets.get(10).path("verdict").asText()).isEqualTo("NOT MEASURED");
        JsonNode queues = targets.get(11);
        assertThat(queues.path("verdict").asText()).isEqualTo("REPORTED");
        assertThat(queues.path("checks").get(0).path("value").isNumber())
                .as("ZooKeeper check of %s", queues)
                .isTrue();
        if (EtcdCluster.available()) {
            assertThat(queues.path("checks").get(1).path("value").isNumber())
                    .as("etcd check of %s", queues)
                    .isTrue();
        }
        for (JsonNode target : targets) {
            assertThat(target.has("verdict")).isTrue();
            assertThat(target.path("checks").size()).isPositive();
        }
        assertThat(root.path("resources").path("connections_per_node").asInt()).isEqualTo(1);

        Path svg = dir.resolve(BenchCommand.SVG_FILE);
        assertThat(DocumentBuilderFactory.newInstance()
                        .newDocumentBuilder()
                        .parse(svg.toFile())
                        .getDocumentElement()
                        .getNodeName())
                .isEqualTo("svg");
        assertThat(Files.readString(svg)).contains("quorumlock", "raw-jedis");
    }
}
