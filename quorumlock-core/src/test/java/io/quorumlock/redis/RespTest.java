package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RespTest {

    private static String written(Request request, boolean withScript) {
        ByteBuffer out = Resp.write(ByteBuffer.allocate(4), request, withScript); // grows as needed
        return new String(out.array(), 0, out.position(), StandardCharsets.UTF_8);
    }

    @Test
    void writesSetNxPx() {
        assertThat(written(Request.setIfAbsent("lock:a", "t0k", 30000), false))
                .isEqualTo("*6\r\n$3\r\nSET\r\n$6\r\nlock:a\r\n$3\r\nt0k\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n");
    }

    @Test
    void writesScriptsBySha1AndByText() {
        assertThat(written(Request.deleteIfEquals("k", "t"), false))
                .isEqualTo("*5\r\n$7\r\nEVALSHA\r\n$40\r\n" + Scripts.DELETE_IF_EQUALS_SHA
                        + "\r\n$1\r\n1\r\n$1\r\nk\r\n$1\r\nt\r\n");
        assertThat(written(Request.extendIfEquals("k", "t", 500), true))
                .startsWith("*6\r\n$4\r\nEVAL\r\n$" + Scripts.EXTEND_IF_EQUALS.length() + "\r\nif redis.call")
                .endsWith("$1\r\nk\r\n$1\r\nt\r\n$3\r\n500\r\n");
    }

    @Test
    void writesNonAsciiKeysAsUtf8() {
        assertThat(written(Request.deleteIfEquals("재고:42", "t"), false)).contains("$9\r\n재고:42\r\n");
    }

    @Test
    void repliesReadAsVotes() {
        Request set = Request.setIfAbsent("k", "t", 1000);
        assertThat(set.outcome("n", Reply.Simple.OK).vote()).isEqualTo(io.quorumlock.NodeOutcome.Vote.YES);
        assertThat(set.outcome("n", Reply.Nil.NIL).vote()).isEqualTo(io.quorumlock.NodeOutcome.Vote.HELD_BY_OTHER);
        assertThat(Request.deleteIfEquals("k", "t").outcome("n", Reply.Int.ZERO).vote())
                .isEqualTo(io.quorumlock.NodeOutcome.Vote.HELD_BY_OTHER);
        assertThat(set.outcome("n", new Reply.Error("LOADING Redis is loading the dataset in memory")))
                .satisfies(o -> {
                    assertThat(o.vote()).isEqualTo(io.quorumlock.NodeOutcome.Vote.ERROR);
                    assertThat(o.detail()).startsWith("LOADING");
                });
        assertThat(set.outcome("n", new Reply.Error("READONLY You can't write against a read only replica.")))
                .satisfies(o -> {
                    assertThat(o.vote()).isEqualTo(io.quorumlock.NodeOutcome.Vote.MISCONFIGURED);
                    assertThat(o.detail()).startsWith("READONLY").endsWith("list masters only");
                });
        // a reply of another shape answers nothing that was asked: an error, never a yes
        assertThat(set.outcome("n", new Reply.Simple("PONG")).detail())
                .isEqualTo("protocol error: +PONG is no reply to SET");
        assertThat(Request.deleteIfEquals("k", "t")
                        .outcome("n", Reply.Simple.OK)
                        .vote())
                .isEqualTo(io.quorumlock.NodeOutcome.Vote.ERROR);
        assertThat(set.outcome("n", new Reply.Array(java.util.List.of(Reply.Simple.OK)))
                        .detail())
                .contains("an array of 1 elements is no reply to SET");
    }
}
