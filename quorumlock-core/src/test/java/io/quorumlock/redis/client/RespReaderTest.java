package io.quorumlock.redis.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The reader of replies: every kind, in pieces, and every limit that keeps a hostile node harmless. */
class RespReaderTest {

    private final RespReader reader = new RespReader();

    private static ByteBuffer buffer(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    }

    private List<Reply> all(String text) throws RespReader.ProtocolException {
        ByteBuffer in = buffer(text);
        List<Reply> replies = new ArrayList<>();
        Reply reply;
        while ((reply = reader.next(in)) != null) {
            replies.add(reply);
        }
        return replies;
    }

    @Test
    void readsEveryReplyKind() throws Exception {
        assertThat(all("+OK\r\n$-1\r\n:1\r\n-NOSCRIPT No matching script\r\n$5\r\na\r\nbc\r\n"
                        + "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n:-5\r\n*-1\r\n*0\r\n+QUEUED\r\n"))
                .containsExactly(
                        Reply.Simple.OK,
                        Reply.Nil.NIL,
                        Reply.Int.ONE,
                        new Reply.Error("NOSCRIPT No matching script"),
                        new Reply.Bulk("a\r\nbc"),
                        new Reply.Array(List.of(new Reply.Bulk("appendonly"), new Reply.Bulk("no"))),
                        new Reply.Int(-5),
                        Reply.Nil.NIL,
                        new Reply.Array(List.of()),
                        new Reply.Simple("QUEUED"));
    }

    @Test
    void aReplyInPiecesIsReadWhenItsLastByteArrivesAndNothingIsLost() throws Exception {
        String whole = "*3\r\n$5\r\nhello\r\n*1\r\n:7\r\n+OK\r\n:2\r\n";
        ByteBuffer in = ByteBuffer.allocate(64);
        List<Reply> replies = new ArrayList<>();
        for (byte b : whole.getBytes(StandardCharsets.UTF_8)) {
            in.put(b).flip();
            Reply reply;
            while ((reply = reader.next(in)) != null) {
                replies.add(reply);
            }
            in.compact();
        }
        assertThat(replies)
                .containsExactly(
                        new Reply.Array(List.of(
                                new Reply.Bulk("hello"), new Reply.Array(List.of(new Reply.Int(7))), Reply.Simple.OK)),
                        new Reply.Int(2));
    }

    @Test
    void hugeArraysBulksAndDeepNestingAreProtocolErrorsAtTheirHeader() {
        assertThatThrownBy(() -> all("*2147483647\r\n"))
                .isInstanceOf(RespReader.ProtocolException.class)
                .hasMessage("sent an array of 2147483647 elements (the most a reply may have is 1024)");
        assertThatThrownBy(() -> all("$1000000000\r\n"))
                .hasMessage("sent a bulk string of 1000000000 bytes (the most a reply may have is 1048576)");
        assertThatThrownBy(() -> all("*1\r\n".repeat(200_000))).hasMessage("sent arrays nested more than 4 deep");
        assertThatThrownBy(() -> all("$-2\r\n")).hasMessageContaining("bulk string of -2 bytes");
    }

    @Test
    void manyValuesInOneReplyAreAProtocolError() {
        String nested = "*1000\r\n" + ("*10\r\n" + ":1\r\n".repeat(10)).repeat(1000);
        assertThatThrownBy(() -> all(nested)).hasMessage("sent a reply of more than 4096 values");
    }

    @Test
    void garbageIsAProtocolErrorThatSaysWhatCame() {
        assertThatThrownBy(() -> all("HTTP/1.1 400 Bad Request\r\n"))
                .hasMessage("sent byte 0x48 ('H') where a reply begins: not RESP");
        assertThatThrownBy(() -> all("\u0015\u0003\u0003\u0000\u0002\u0002\u0032"))
                .hasMessageContaining("a TLS record: the node speaks TLS, use rediss://");
        assertThatThrownBy(() -> all(":1x\r\n")).hasMessage("sent a number that is none: '1x'");
        assertThatThrownBy(() -> all(":99999999999999999999\r\n")).hasMessageContaining("a number that is none");
        assertThatThrownBy(() -> all("$2\r\nabcd")).hasMessage("sent a bulk string not ended by CRLF");
    }

    @Test
    void aLineThatNeverEndsIsAProtocolErrorOnceItIsLongerThanAnyReply() throws Exception {
        ByteBuffer in = ByteBuffer.allocate(RespReader.MAX_LINE + 16);
        in.put((byte) '+');
        for (int i = 0; i < RespReader.MAX_LINE - 2; i++) {
            in.put((byte) 'x');
        }
        in.flip();
        assertThat(reader.next(in)).as("still within the limit").isNull();
        in.position(in.limit()).limit(in.capacity());
        in.put("xxxx".getBytes(StandardCharsets.UTF_8)).flip();
        assertThatThrownBy(() -> reader.next(in)).hasMessage("sent a line of more than 8192 bytes");
    }
}
