package io.quorumlock.lab.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.cli.CliRun;
import io.quorumlock.lab.Lab;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import org.junit.jupiter.api.Test;

/** The demo run in-process, as {@code quorumlock demo} with small settings. */
class DemoCommandIT {

    @Test
    void sellsThroughAFrozenAndAKilledNodeWithoutOversellingAndStopsEveryNode() {
        CliRun run = CliRun.of(
                Lab.commandLine(), "demo", "--clients", "4", "--stock", "300", "--duration", "3s", "--seed", "7");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out())
                .startsWith("Started 5 Redis nodes")
                .containsPattern(
                        "(?m)^[0-9.]+ m?s: froze node \\d \\(127\\.0\\.0\\.1:\\d+\\) and killed node \\d \\(127\\.0\\.0\\.1:\\d+\\);"
                                + " 3 of 5 nodes answer, quorum 3$")
                .containsPattern("(?m)^nodes\\s+5\\s+quorum 3; node \\d frozen, node \\d killed$")
                .containsPattern("(?m)^oversold\\s+0\\s")
                .contains("OK: no unit oversold or lost")
                .as("no progress line when the output is not a terminal")
                .doesNotContain("\r");

        assertThat(run.out())
                .containsPattern("(?m)^Redlock alone\\s+10\\s+5\\s+0$")
                .containsPattern("(?m)^ZooKeeper \\+ JdbcFence\\s+10\\s+0\\s+5$")
                .contains("the fencing token and the fence did");

        DemoCommand demo =
                (DemoCommand) run.commandLine().getSubcommands().get("demo").getCommand();
        assertThat(demo.pause()).extracting(r -> r.lostUpdates()).containsExactly(5, 0);
        assertThat(demo.leader().tokenB()).isGreaterThan(demo.leader().tokenA());
        assertThat(run.out())
                .containsSubsequence(
                        "A elected", "A pauses", "B elected", "B writes stock 999", "the fence refuses A's write")
                .as("a paused leader learns of its loss only when it wakes, whenever the ensemble ended its session")
                .contains("A revoked: its lease is lost")
                .contains("the fence refused its write.");
        assertThat(demo.failover().bothHeld()).as(run.out()).isTrue();
        assertThat(demo.failover().refusedWithWait()).as(run.out()).isTrue();
        assertThat(run.out())
                .containsSubsequence(
                        "A locks 'stock' on the master",
                        "the master dies (SIGKILL)",
                        "the sentinels promote the replica",
                        "B locks 'stock' on the new master: A and B both hold it",
                        "with WAIT for one replica, its link cut: A's grant does not count (NOREPLICAS 0 of 1"
                                + " replica(s) acknowledged the write within 100 ms",
                        "no key is left",
                        "WAIT narrows the window; a fenced lock closes it.");
        DemoResult result = demo.result();
        assertThat(result.counts().reserved()).isPositive();
        assertThat(result.counts().unitsSold()).isEqualTo(300L - result.finalStock());
        assertThat(result.nodes())
                .hasSize(5)
                .allSatisfy(
                        node -> assertThat(isGone(node)).as(node + " is gone").isTrue());
    }

    /**
     * Whether nothing listens on the node's port any more (a frozen node would still accept the
     * connection) and no redis-server process serves it.
     */
    private static boolean isGone(String node) {
        URI uri = URI.create(node);
        boolean refused;
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 500);
            refused = false;
        } catch (ConnectException e) {
            refused = true;
        } catch (IOException e) {
            refused = false;
        }
        String title = uri.getHost() + ":" + uri.getPort();
        boolean noProcess = ProcessHandle.allProcesses()
                .map(process -> process.info().commandLine().orElse(""))
                .noneMatch(command -> command.contains("redis-server") && command.matches(".*" + title + "(\\D.*)?"));
        return refused && noProcess;
    }
}
