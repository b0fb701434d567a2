package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.internal.FakeTicker;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.NodeStart;
import io.quorumlock.redis.client.NodeStarts;
import io.quorumlock.redis.client.Reply;
import io.quorumlock.redis.client.Transport;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The restart guard's rule: a node votes once it has been up for the longest TTL, or at once if it
 * fsyncs every write and kept its run_id.
 */
class RestartGuardTest {

    private static final long S = 1_000_000_000L;
    private static final long MS = 1_000_000L;

    private final FakeTicker ticker = new FakeTicker();
    private final NodeStarts starts = new NodeStarts(List.of("redis://a:1"), ticker);

    /** A server that fsyncs every write, as CONFIG GET append* shows it. */
    private static final Reply FSYNC_ALWAYS = new Reply.Array(List.of(
            new Reply.Bulk("appendonly"),
            new Reply.Bulk("yes"),
            new Reply.Bulk("appendfsync"),
            new Reply.Bulk("always")));

    /** One new connection's INFO server and CONFIG GET append* replies, as the client reads them. */
    private void reply(int node, String runId, long uptimeSeconds, Reply config) {
        Transport.ReplyHandler connection = starts.connection(node);
        connection.onReply(
                Command.info("server"),
                new Reply.Bulk("# Server\r\nrun_id:" + runId + "\r\nuptime_in_seconds:" + uptimeSeconds + "\r\n"),
                null);
        connection.onReply(Command.configGet("append*"), config, null);
    }

    @Test
    void aNodeUpForLessThanTheLongestTtlWaitsForTheRest() {
        assertThat(QuorumMath.restartWaitNanos(100 * S, 103 * S, 30 * S)).isEqualTo(27 * S);
        assertThat(QuorumMath.restartExclusion(100 * S, 103 * S, 30 * S))
                .isEqualTo("restart guard: up 3 s, votes in 27 s");
    }

    @Test
    void aNodeUpForTheLongestTtlOrMoreVotes() {
        assertThat(QuorumMath.restartWaitNanos(100 * S, 130 * S, 30 * S)).isZero();
        assertThat(QuorumMath.restartExclusion(100 * S, 130 * S, 30 * S)).isNull();
        assertThat(QuorumMath.restartExclusion(100 * S, 500 * S, 30 * S)).isNull();
    }

    @Test
    void withoutAnyTtlYetEveryNodeVotes() {
        assertThat(QuorumMath.restartExclusion(100 * S, 100 * S, 0)).isNull();
    }

    @Test
    void aStartEstimatedAfterTheRoundBeganCountsAsUpForNoTime() {
        // The start is estimated from the INFO reply, which may come after the round's start.
        assertThat(QuorumMath.restartWaitNanos(100 * S + 5 * MS, 100 * S, 2 * S))
                .isEqualTo(2 * S + 5 * MS);
        assertThat(QuorumMath.restartExclusion(100 * S + 5 * MS, 100 * S, 2 * S))
                .isEqualTo("restart guard: up 0 s, votes in 2.1 s");
    }

    @Test
    void showsTenthsBelowTenSecondsAndRoundsTheWaitUp() {
        assertThat(QuorumMath.seconds(1_250 * MS, false)).isEqualTo("1.2 s");
        assertThat(QuorumMath.seconds(1_250 * MS, true)).isEqualTo("1.3 s");
        assertThat(QuorumMath.seconds(400 * MS, true)).isEqualTo("0.4 s");
        assertThat(QuorumMath.seconds(9_990 * MS, true)).isEqualTo("10 s");
        assertThat(QuorumMath.seconds(26_100 * MS, true)).isEqualTo("27 s");
        assertThat(QuorumMath.seconds(26_900 * MS, false)).isEqualTo("26 s");
    }

    @Test
    void aNodeThatFsyncsEveryWriteLostNothingInItsStart() {
        ticker.advance(100 * S);
        reply(0, "r1", 0, FSYNC_ALWAYS);
        assertThat(starts.start(0).fsyncs()).isTrue();
        assertThat(QuorumMath.restartWaitNanos(starts.start(0), ticker.nanos(), 30 * S))
                .isZero();
    }

    @Test
    void aChangedRunIdWaitsEvenOnAServerThatFsyncs() {
        ticker.advance(100_000 * S);
        reply(0, "r1", 86_400, FSYNC_ALWAYS);
        ticker.advance(10 * S);
        reply(0, "r2", 90_000, FSYNC_ALWAYS);
        NodeStart start = starts.start(0);
        assertThat(start.runIdChanged()).isTrue();
        assertThat(QuorumMath.restartExclusion(start, ticker.nanos() + 3 * S, 30 * S))
                .isEqualTo("restart guard: run_id changed 3 s ago (a restart or a failover), votes in 27 s");
    }
}
