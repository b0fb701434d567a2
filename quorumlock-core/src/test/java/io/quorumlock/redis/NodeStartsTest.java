package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

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

    private void reply(int node, Reply reply) {
        starts.of(node).onReply(Request.info("server"), reply, null);
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
        assertThat(starts.startNanos(0)).isEqualTo(now - 40 * S);
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
        assertThat(starts.startNanos(0)).isEqualTo(ticker.nanos() - S);
        assertThat(log).contains("WARN", "node redis://a:1 has restarted: run_id r1 is now r2");
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
    void aConnectionThatBrokeBeforeTheReplyTeachesNothing() {
        ticker.advance(100 * S);
        reply(0, bulkInfo("r1", 40));
        long start = starts.startNanos(0);
        ticker.advance(S);
        reply(0, new Reply.Failure(Reply.Kind.BROKEN, "connection lost"));
        assertThat(starts.startNanos(0)).isEqualTo(start);
    }
}
