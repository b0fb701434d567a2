package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RespTest {

    private static final Script DELETE = new Script(
            "the release script",
            "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end");
    private static final Script EXTEND = new Script(
            "the extension script",
            "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else"
                    + " return 0 end");

    private static String written(Command command, boolean withScript) {
        ByteBuffer out = Resp.write(ByteBuffer.allocate(4), command, withScript); // grows as needed
        return new String(out.array(), 0, out.position(), StandardCharsets.UTF_8);
    }

    @Test
    void writesSetNxPx() {
        assertThat(written(Command.setIfAbsent("lock:a", "t0k", 30000), false))
                .isEqualTo("*6\r\n$3\r\nSET\r\n$6\r\nlock:a\r\n$3\r\nt0k\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n");
    }

    @Test
    void writesScriptsBySha1AndByText() {
        assertThat(written(Command.script(DELETE, "k", "t"), false))
                .isEqualTo("*5\r\n$7\r\nEVALSHA\r\n$40\r\n" + DELETE.sha1() + "\r\n$1\r\n1\r\n$1\r\nk\r\n$1\r\nt\r\n");
        assertThat(written(Command.script(EXTEND, "k", "t", 500), true))
                .startsWith("*6\r\n$4\r\nEVAL\r\n$" + EXTEND.source().length() + "\r\nif redis.call")
                .endsWith("$1\r\nk\r\n$1\r\nt\r\n$3\r\n500\r\n");
    }

    @Test
    void writesTypeAndTakesASimpleStringForItsReply() {
        assertThat(written(Command.type("counter"), false)).isEqualTo("*2\r\n$4\r\nTYPE\r\n$7\r\ncounter\r\n");
        assertThat(Command.type("counter").fits(new Reply.Simple("hash"))).isTrue();
        assertThat(Command.type("counter").fits(new Reply.Bulk("hash")))
                .as("no reply to TYPE")
                .isFalse();
    }

    @Test
    void writesNonAsciiKeysAsUtf8() {
        assertThat(written(Command.script(DELETE, "재고:42", "t"), false)).contains("$9\r\n재고:42\r\n");
    }

    @Test
    void aTextAsSentIsWhatTheNodeReadsAndSendsBack() {
        String name = "r\uD800x"; // a lone surrogate: UTF-8 has no form for it
        assertThat(written(Command.get(name), false)).contains("$3\r\nr?x\r\n");
        assertThat(Command.asSent(name)).isEqualTo("r?x");
        String plain = "재고:\uD83D\uDE00"; // a surrogate pair encodes
        assertThat(Command.asSent(plain)).isEqualTo(plain);
        String ascii = "lock:a";
        assertThat(Command.asSent(ascii)).isSameAs(ascii);
    }
}
