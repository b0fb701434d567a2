package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class RespTest {

    private static String written(Request request, boolean withScript) {
        ByteBuffer out = Resp.write(ByteBuffer.allocate(4), request, withScript); // grows as needed
        return new String(out.array(), 0, out.position(), StandardCharsets.UTF_8);
    }

    private static ByteBuffer buffer(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
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
    void parsesEveryReplyKind() {
        ByteBuffer in = buffer(
                "+OK\r\n$-1\r\n:1\r\n-NOSCRIPT No matching script\r\n$5\r\na\r\nbc\r\n*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
        assertThat(Resp.parse(in)).isEqualTo("OK");
        assertThat(Resp.parse(in)).isSameAs(Resp.NIL);
        assertThat(Resp.parse(in)).isEqualTo(1L);
        assertThat(Resp.parse(in)).isEqualTo(new Resp.Error("NOSCRIPT No matching script"));
        assertThat(Resp.parse(in)).isEqualTo("a\r\nbc");
        assertThat(Resp.parse(in)).isEqualTo(List.of("appendonly", "no"));
        assertThat(Resp.parse(in)).isSameAs(Resp.INCOMPLETE);
    }

    @Test
    void parsesNegativeNumbersAndRejectsGarbage() {
        assertThat(Resp.parse(buffer(":-5\r\n"))).isEqualTo(-5L);
        assertThat(Resp.parse(buffer("+QUEUED\r\n"))).isEqualTo("QUEUED");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Resp.parse(buffer("?x\r\n")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("protocol error");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Resp.parse(buffer(":1x\r\n")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not a number");
    }

    @Test
    void aPartialReplyLeavesTheBufferUntouched() {
        for (String partial : new String[] {"+O", "+OK\r", "$5\r\nab", "*2\r\n:1\r\n", ":"}) {
            ByteBuffer in = buffer(partial);
            assertThat(Resp.parse(in)).as(partial).isSameAs(Resp.INCOMPLETE);
            assertThat(in.position()).isZero();
        }
    }

    @Test
    void repliesReadAsVotes() {
        Request set = Request.setIfAbsent("k", "t", 1000);
        assertThat(set.outcome("n", "OK").vote()).isEqualTo(io.quorumlock.NodeOutcome.Vote.YES);
        assertThat(set.outcome("n", Resp.NIL).vote()).isEqualTo(io.quorumlock.NodeOutcome.Vote.HELD_BY_OTHER);
        assertThat(Request.deleteIfEquals("k", "t").outcome("n", 0L).vote())
                .isEqualTo(io.quorumlock.NodeOutcome.Vote.HELD_BY_OTHER);
        assertThat(set.outcome("n", new Resp.Error("LOADING Redis is loading the dataset in memory")))
                .satisfies(o -> {
                    assertThat(o.vote()).isEqualTo(io.quorumlock.NodeOutcome.Vote.ERROR);
                    assertThat(o.detail()).startsWith("LOADING");
                });
        assertThat(set.outcome("n", new Resp.Error("READONLY You can't write against a read only replica.")))
                .satisfies(o -> {
                    assertThat(o.vote()).isEqualTo(io.quorumlock.NodeOutcome.Vote.MISCONFIGURED);
                    assertThat(o.detail()).startsWith("READONLY").endsWith("list masters only");
                });
    }
}
