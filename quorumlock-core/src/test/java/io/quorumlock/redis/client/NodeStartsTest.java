package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.internal.FakeTicker;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a client learns of a node's start from the INFO server of each new connection. */
class NodeStartsTest {

    private static final long S = 1_000_000_000L;

    private final FakeTicker ticker = new FakeTicker();
    private final NodeStarts starts = new NodeStarts(List.of("redis://a:1", "redis://b:1"), ticker);

    private static final Reply FSYNC_ALWAYS = config("yes", "always");
    private static final Reply CONFIG_DENIED =
            new Reply.Error("NOPERM User default has no permissions to run the 'config|get' command");

    /** One new connection's set-up replies: its INFO server, then CONFIG GET append* denied. */
    private void reply(int node, Reply info) {
        reply(node, info, CONFIG_DENIED);
    }

    private void reply(int node, Reply info, Reply config) {
        Transport.ReplyHandler connection = starts.connection(node);
        connection.onReply(Command.info("server"), info, null);
        connection.onReply(Command.configGet("append*"), config, null);
    }

    private static Reply config(String appendonly, String appendfsync) {
        return new Reply.Array(List.of(
                new Reply.Bulk("appendonly"),
                new Reply.Bulk(appendonly),
                new Reply.Bulk("appendfilename"),
                new Reply.Bulk("appendonly.aof"),
                new Reply.Bulk("appendfsync"),
                new Reply.Bulk(appendfsync)));
    }

    private static Reply bulkInfo(String runId, long uptimeSeconds) {
        return new Reply.Bulk(info(runId, uptimeSeconds));
    }

    private static String info(String runId, long uptimeSeconds) {
        return "# Server\r\nredis_version:7.0.15\r\nrun_id:" + runId + "\r\nuptime_in_seconds:" + uptimeSeconds
                + "\r\n";
    }

    /** What the node's start logs on stderr (slf4j-simple) while {@code action} runs. */
    private static String logOf(Runnable action) {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setErr(err);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }

    @Test
    void estimatesTheStartFromTheUptime() {
        ticker.advance(100 * S);
        long now = ticker.nanos();
        reply(0, bulkInfo("r1", 40));
        // Redis counts the uptime from its start's whole second: up 40 s may be 39 s and a bit
        assertThat(starts.startNanos(0)).isEqualTo(now - 39 * S);
    }

    @Test
    void aNodeNotHeardFromCountsAsStartedNow() {
        assertThat(starts.startNanos(1)).isEqualTo(ticker.nanos());
        ticker.advance(S);
        assertThat(starts.startNanos(1)).isEqualTo(ticker.nanos());
    }

    @Test
    void aNewRunIdIsARestartAndIsLogged() {
        ticker.advance(100 * S);
        reply(0, bulkInfo("r1", 40));
        ticker.advance(5 * S);
        String log = logOf(() -> reply(0, bulkInfo("r2", 1)));
        assertThat(starts.startNanos(0)).as("when the change was seen").isEqualTo(ticker.nanos());
        assertThat(log).contains("WARN", "node redis://a:1 answered with run_id r2 where it had answered with r1");
        assertThat(logOf(() -> reply(0, bulkInfo("r2", 2))))
                .as("the same run_id again")
                .isEmpty();
    }

    @Test
    void aRefusedInfoCountsAsAStartAtEachConnectionAndIsLoggedOnce() {
        ticker.advance(100 * S);
        reply(0, bulkInfo("r1", 40));
        String first = logOf(() -> reply(0, new Reply.Error("ERR unknown command 'INFO'")));
        assertThat(starts.startNanos(0)).isEqualTo(ticker.nanos());
        ticker.advance(S);
        String second = logOf(() -> reply(0, new Reply.Error("ERR unknown command 'INFO'")));
        assertThat(starts.startNanos(0)).isEqualTo(ticker.nanos());
        assertThat(first).contains("node redis://a:1 gave no run_id and uptime", "ERR unknown command 'INFO'");
        assertThat(second).isEmpty();
        assertThat(starts.startNanos(1)).as("the other node's record").isEqualTo(ticker.nanos());
    }

    @Test
    void anInfoRefusedForAConfigurationMistakeIsLeftToTheLockToReport() {
        // NOAUTH is the lock's to report (once, with its remedy): a second warning would only repeat it.
        String log = logOf(() -> reply(0, new Reply.Error("NOAUTH Authentication required.")));
        assertThat(starts.startNanos(0)).isEqualTo(ticker.nanos());
        assertThat(log).isEmpty();
    }

    @Test
    void aConnectionThatBrokeBeforeTheReplyTeachesNothing() {
        ticker.advance(100 * S);
        reply(0, bulkInfo("r1", 40));
        long start = starts.startNanos(0);
        ticker.advance(S);
        reply(0, new Reply.Failure(Reply.Kind.BROKEN, "connection lost"));
        assertThat(starts.startNanos(0)).isEqualTo(start);
    }

    @Test
    void aStaleInfoReplyDoesNotMakeARestartedNodeLookOld() {
        ticker.advance(100_000 * S);
        reply(0, bulkInfo("r1", 86_400)); // lane 1, long ago
        ticker.advance(10 * S);
        // The node restarts empty; lane 1's new connection learns it, then lane 2's old INFO,
        // sent before the restart and read only now, arrives.
        reply(0, bulkInfo("r2", 0));
        long restart = ticker.nanos();
        ticker.advance(S);
        reply(0, bulkInfo("r1", 86_410));
        assertThat(starts.startNanos(0)).as("the newest start estimate").isGreaterThanOrEqualTo(restart);
    }

    @Test
    void anOlderEstimateForTheSameRunIdDoesNotMoveTheStartBack() {
        ticker.advance(100 * S);
        reply(0, bulkInfo("r1", 5)); // read late: the start looks later than it was
        long start = starts.startNanos(0);
        reply(0, bulkInfo("r1", 40));
        assertThat(starts.startNanos(0)).isEqualTo(start);
    }

    @Test
    void aChangedRunIdWithALongUptimeCountsAsAStartWhenTheChangeWasSeen() {
        ticker.advance(100_000 * S);
        reply(0, bulkInfo("r1", 86_400));
        ticker.advance(10 * S);
        long seen = ticker.nanos();
        // A failover behind a proxy: another server, up for days, without this client's keys.
        reply(0, bulkInfo("r2", 90_000));
        assertThat(starts.startNanos(0)).isEqualTo(seen);
    }

    @Test
    void fsyncOnEverySecondOrWithoutAppendOnlyOrDeniedIsNoFsync() {
        ticker.advance(100 * S);
        reply(0, bulkInfo("r1", 0), config("yes", "everysec"));
        reply(1, bulkInfo("r2", 0), config("no", "always"));
        assertThat(starts.start(0).fsyncs()).isFalse();
        assertThat(starts.start(1).fsyncs()).isFalse();
        NodeStarts denied = new NodeStarts(List.of("redis://c:1"), ticker);
        Transport.ReplyHandler connection = denied.connection(0);
        connection.onReply(Command.info("server"), bulkInfo("r3", 0), null);
        connection.onReply(Command.configGet("append*"), new Reply.Error("ERR unknown command 'CONFIG'"), null);
        assertThat(denied.start(0).fsyncs()).isFalse();
    }

    @Test
    void oneConnectionWithoutFsyncIsEnoughToCountTheServerAsNotFsyncing() {
        ticker.advance(100 * S);
        reply(0, bulkInfo("r1", 0), FSYNC_ALWAYS);
        reply(0, bulkInfo("r1", 0), config("yes", "everysec"));
        reply(0, bulkInfo("r1", 0), FSYNC_ALWAYS);
        assertThat(starts.start(0).fsyncs()).isFalse();
    }

    @Test
    void twoEntriesThatAnswerWithTheSameRunIdAreOneServerAndAreLogged() {
        ticker.advance(100 * S);
        reply(0, bulkInfo("r1", 40));
        assertThat(starts.sameServer(0, 1)).isFalse();
        String log = logOf(() -> reply(1, bulkInfo("r1", 40)));
        assertThat(starts.sameServer(0, 1)).isTrue();
        assertThat(starts.sameServer(1, 0)).isTrue();
        assertThat(starts.sameServer(1, 1)).isFalse();
        assertThat(log).contains("WARN", "nodes redis://a:1 and redis://b:1 are the same server (run_id r1)");
        reply(1, bulkInfo("r9", 1));
        assertThat(starts.sameServer(0, 1))
                .as("after a failover behind the second")
                .isFalse();
    }

    @Test
    void anInfoWhoseConnectionBrokeBeforeTheConfigReplyStillCountsWithoutFsync() {
        ticker.advance(100 * S);
        reply(0, bulkInfo("r1", 40), new Reply.Failure(Reply.Kind.BROKEN, "connection lost"));
        assertThat(starts.start(0)).isEqualTo(new NodeStart(ticker.nanos() - 39 * S, false, false));
    }
}
