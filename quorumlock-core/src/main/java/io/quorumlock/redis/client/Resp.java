package io.quorumlock.redis.client;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The Redis protocol (RESP2), the writing half: commands written straight into a buffer, without
 * allocating for SET and scripts. {@link RespReader} reads the replies.
 */
final class Resp {

    private static final byte[] SET = bytes("SET");
    private static final byte[] NX = bytes("NX");
    private static final byte[] PX = bytes("PX");
    private static final byte[] EVALSHA = bytes("EVALSHA");
    private static final byte[] EVAL = bytes("EVAL");
    private static final byte[] ONE = bytes("1");

    private Resp() {}

    /** Writes {@code command}; a script goes by EVALSHA unless {@code withScript}. */
    static ByteBuffer write(ByteBuffer out, Command command, boolean withScript) {
        String key = command.key();
        return switch (command.kind()) {
            case SET_IF_ABSENT -> {
                out = header(out, 6, key.length() + 64);
                out = bulk(out, SET);
                out = bulk(out, key);
                out = bulk(out, command.value());
                out = bulk(out, NX);
                out = bulk(out, PX);
                yield bulk(out, command.millis());
            }
            case SCRIPT -> {
                boolean millis = command.millis() >= 0;
                byte[] script = withScript
                        ? command.script().sourceBytes()
                        : command.script().sha1Bytes();
                out = header(out, millis ? 6 : 5, key.length() + script.length + 96);
                out = bulk(out, withScript ? EVAL : EVALSHA);
                out = bulk(out, script);
                out = bulk(out, ONE);
                out = bulk(out, key);
                out = bulk(out, command.value());
                yield millis ? bulk(out, command.millis()) : out;
            }
            case GET -> command(out, "GET", key);
            case PTTL -> command(out, "PTTL", key);
            case TYPE -> command(out, "TYPE", key);
            case INFO -> command(out, "INFO", key);
            case CONFIG_GET -> command(out, "CONFIG", "GET", key);
            case SUBSCRIBE -> command(out, "SUBSCRIBE", key);
            case UNSUBSCRIBE -> command(out, "UNSUBSCRIBE", key);
            case WAIT -> command(out, "WAIT", key, Long.toString(command.millis()));
            case ROLE -> command(out, "ROLE");
            case CLUSTER_NODES -> command(out, "CLUSTER", "NODES");
            case ASKING -> command(out, "ASKING");
        };
    }

    /** Writes a command given as plain words. */
    static ByteBuffer command(ByteBuffer out, String... words) {
        out = header(out, words.length, 64);
        for (String word : words) {
            out = bulk(out, word);
        }
        return out;
    }

    private static ByteBuffer header(ByteBuffer out, int parts, int sizeHint) {
        out = room(out, sizeHint + 16);
        out.put((byte) '*');
        putDecimal(out, parts);
        return crlf(out);
    }

    private static ByteBuffer bulk(ByteBuffer out, byte[] value) {
        out = room(out, value.length + 16);
        out.put((byte) '$');
        putDecimal(out, value.length);
        crlf(out).put(value);
        return crlf(out);
    }

    private static ByteBuffer bulk(ByteBuffer out, String value) {
        for (int i = 0; i < value.length(); i++) {
            if (value.charAt(i) >= 0x80) {
                return bulk(out, value.getBytes(StandardCharsets.UTF_8));
            }
        }
        out = room(out, value.length() + 16);
        out.put((byte) '$');
        putDecimal(out, value.length());
        crlf(out);
        for (int i = 0; i < value.length(); i++) {
            out.put((byte) value.charAt(i));
        }
        return crlf(out);
    }

    /** A number as a bulk string, its digits written straight into the buffer. */
    private static ByteBuffer bulk(ByteBuffer out, long value) {
        if (value < 0) {
            return bulk(out, Long.toString(value));
        }
        int digits = 1;
        for (long rest = value / 10; rest > 0; rest /= 10) {
            digits++;
        }
        out = room(out, digits + 16);
        out.put((byte) '$');
        putDecimal(out, digits);
        crlf(out);
        putDecimal(out, value);
        return crlf(out);
    }

    private static ByteBuffer crlf(ByteBuffer out) {
        return out.put((byte) '\r').put((byte) '\n');
    }

    private static void putDecimal(ByteBuffer out, long value) {
        if (value >= 10) {
            putDecimal(out, value / 10);
        }
        out.put((byte) ('0' + value % 10));
    }

    /** The buffer, or a larger copy of it, with at least {@code needed} bytes free. */
    /**
     * Room for more of a reply in {@code in}, a read buffer: doubled while under {@link
     * RespReader#MAX_BUFFER}, so at most twice that.
     *
     * @throws RespReader.ProtocolException if a buffer that large is still no whole reply
     */
    static ByteBuffer roomToRead(ByteBuffer in) throws RespReader.ProtocolException {
        if (in.remaining() >= 1024) {
            return in;
        }
        if (in.capacity() >= RespReader.MAX_BUFFER) {
            throw new RespReader.ProtocolException(
                    "sent more than " + RespReader.MAX_BUFFER + " bytes that are no whole reply");
        }
        return room(in, 1024);
    }

    static ByteBuffer room(ByteBuffer buffer, int needed) {
        if (buffer.remaining() >= needed) {
            return buffer;
        }
        ByteBuffer larger = ByteBuffer.allocate(Math.max(buffer.capacity() * 2, buffer.position() + needed));
        buffer.flip();
        return larger.put(buffer);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
