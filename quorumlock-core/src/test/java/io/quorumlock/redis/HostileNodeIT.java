package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.ScriptedServer;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Nodes that send what no Redis sends: each one's outcome is a protocol error or a time-out with a
 * one-line reason, within about the node timeout, never an Error, a hang or a connection permit
 * taken for good; the well-behaved nodes beside it still give the lock.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HostileNodeIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(2);

    private static final Duration TTL = Duration.ofSeconds(5);
    private static final Duration NODE_TIMEOUT = TestTime.scaled(Duration.ofMillis(100));

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    private ScriptedServer hostile(ScriptedServer.Script script) {
        ScriptedServer server = ScriptedServer.start(script);
        closing.add(server);
        return server;
    }

    /**
     * How long an attempt waits for a hostile node's first bytes, in the tests of what it sends: its
     * connection's set-up is never answered, so the connection counts as being opened, and the
     * script's thread may be kept off the CPU of a loaded machine for longer than the node timeout.
     */
    private static final Duration SENT_WITHIN = TestTime.scaled(Duration.ofSeconds(2));

    private Redlock lock(List<String> nodes, int connections) {
        return lock(nodes, connections, NODE_TIMEOUT);
    }

    private Redlock lock(List<String> nodes, int connections, Duration connectTimeout) {
        Redlock redlock = Redlock.builder()
                .nodes(nodes)
                .restartGuard(false)
                .nodeTimeout(NODE_TIMEOUT)
                .connectTimeout(connectTimeout)
                .maxConnectionsPerNode(connections)
                .build();
        closing.add(0, redlock);
        return redlock;
    }

    /** One attempt on a hostile node alone that sends something: its outcome, within {@link #SENT_WITHIN}. */
    private ServerAnswer outcomeOf(ScriptedServer node) {
        return outcomeOf(node, SENT_WITHIN);
    }

    /** One attempt on the hostile node alone: its outcome, and how long the attempt took. */
    private ServerAnswer outcomeOf(ScriptedServer node, Duration connectTimeout) {
        Redlock redlock = lock(List.of(node.uri()), 1, connectTimeout);
        long start = System.nanoTime();
        LockUnavailableException e = org.junit.jupiter.api.Assertions.assertThrows(
                LockUnavailableException.class, () -> redlock.acquire("r", TTL, Duration.ZERO));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took)
                .as("the attempt's time")
                .isLessThan(connectTimeout.plus(NODE_TIMEOUT.multipliedBy(3)).plusMillis(200));
        assertThat(e.lastAttempt()).hasSize(1);
        return e.lastAttempt().get(0);
    }

    @Test
    void aHugeArrayIsAProtocolErrorNotAnOutOfMemoryError() {
        ServerAnswer outcome = outcomeOf(hostile(ScriptedServer.sends("*2147483647\r\n")));
        assertThat(outcome.kind()).isEqualTo(ServerAnswer.Kind.ERROR);
        assertThat(outcome.detail())
                .isEqualTo("protocol error: the node sent an array of 2147483647 elements (the most a reply may have"
                        + " is 1024): no reply to CLIENT SETNAME");
    }

    @Test
    void deepNestingIsAProtocolErrorNotAStackOverflow() {
        ServerAnswer outcome = outcomeOf(hostile(ScriptedServer.sends("*1\r\n".repeat(200_000))));
        assertThat(outcome.detail()).startsWith("protocol error: the node sent arrays nested more than 4 deep");
    }

    @Test
    void aHugeBulkStringIsRefusedAtItsHeader() {
        ServerAnswer outcome = outcomeOf(hostile(ScriptedServer.sends("$1000000000\r\n" + "x".repeat(100_000))));
        assertThat(outcome.detail()).startsWith("protocol error: the node sent a bulk string of 1000000000 bytes");
    }

    @Test
    void garbageIsAProtocolError() {
        ServerAnswer outcome = outcomeOf(hostile(ScriptedServer.sends("GET / HTTP/1.1\r\n\r\n")));
        assertThat(outcome.detail()).startsWith("protocol error: the node sent byte 0x47 ('G') where a reply begins");
    }

    @Test
    void aReplyThatNeverEndsCostsTheNodeTimeout() {
        ServerAnswer outcome =
                outcomeOf(hostile(ScriptedServer.trickles("$100000\r\n", 'x', Duration.ofMillis(5))), NODE_TIMEOUT);
        assertThat(outcome.kind()).isEqualTo(ServerAnswer.Kind.TIMED_OUT);
    }

    @Test
    void aFloodOfForgedRepliesIsAProtocolError() {
        ServerAnswer outcome = outcomeOf(hostile(ScriptedServer.floods("+OK\r\n", 100_000)));
        assertThat(outcome.kind()).isEqualTo(ServerAnswer.Kind.ERROR);
        assertThat(outcome.detail()).contains("protocol error");
    }

    @Test
    void aNodeThatAcceptsAndNeverAnswersTimesOut() {
        ServerAnswer outcome = outcomeOf(hostile(ScriptedServer.silent()), NODE_TIMEOUT);
        assertThat(outcome.kind()).isEqualTo(ServerAnswer.Kind.TIMED_OUT);
    }

    @Test
    void hostileNodesTakeNoPermitForGoodAndTheOthersStillGrant() {
        List<String> nodes = new ArrayList<>(redis.uris());
        nodes.add(hostile(ScriptedServer.sends("*2147483647\r\n")).uri());
        Redlock redlock = lock(nodes, 1);
        // Each grant needs both real nodes within the node timeout: on a loaded machine an attempt
        // may miss it and is retried; a permit taken for good would fail every attempt.
        Duration wait = TestTime.scaled(Duration.ofSeconds(5));
        for (int i = 0; i < 30; i++) {
            Lease lease = redlock.acquire("r", TTL, wait);
            lease.release();
        }
        ScriptedServer slow = hostile(ScriptedServer.silent());
        Redlock withSilent = lock(List.of(redis.uris().get(0), redis.uris().get(1), slow.uri()), 1);
        for (int i = 0; i < 5; i++) {
            withSilent.acquire("s", TTL, wait).release();
        }
    }
}
