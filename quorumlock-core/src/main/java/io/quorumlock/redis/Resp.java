package io.quorumlock.redis;

import io.quorumlock.NodeOutcome.Vote;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The Redis protocol (RESP2), as much as the lock needs: commands written straight into a
 * buffer, and replies parsed incrementally from one. A reply is a {@code String} (simple or bulk),
 * a {@code Long}, an {@link Error}, {@link #NIL}, or a {@code List} of replies.
 */
final class Resp {

    /** The nil bulk reply: {@code SET ... NX} found the key. */
    static final Object NIL = new Object();

    /** Not a whole reply in the buffer yet. */
    static final Object INCOMPLETE = new Object();

    /** An error reply of the node, such as {@code NOSCRIPT} or {@code READONLY}. */
    record Error(String message) {}

    /** No reply at all: the request was not sent, timed out, or its connection broke. */
    record Failure(Vote vote, String detail) {}

    private static final byte[] SET = bytes("SET");
    private static final byte[] NX = bytes("NX");
    private static final byte[] PX = bytes("PX");
    private static final byte[] EVALSHA = bytes("EVALSHA");
    private static final byte[] EVAL = bytes("EVAL");
    private static final byte[] ONE = bytes("1");
    private static final byte[] DELETE_SHA = bytes(Scripts.DELETE_IF_EQUALS_SHA);
    private static final byte[] EXTEND_SHA = bytes(Scripts.EXTEND_IF_EQUALS_SHA);
    private static final byte[] DELETE_SCRIPT = bytes(Scripts.DELETE_IF_EQUALS);
    private static final byte[] EXTEND_SCRIPT = bytes(Scripts.EXTEND_IF_EQUALS);

    private Resp() {}

    /** Writes the command for {@code request}; scripts go by EVALSHA unless {@code withScript}. */
    static ByteBuffer write(ByteBuffer out, Request request, boolean withScript) {
        String key = request.key();
        return switch (request.verb()) {
            case SET_IF_ABSENT -> {
                out = header(out, 6, key.length() + 64);
                out = bulk(out, SET);
                out = bulk(out, key);
                out = bulk(out, request.token());
                out = bulk(out, NX);
                out = bulk(out, PX);
                yield bulk(out, Long.toString(request.ttlMillis()));
            }
            case DELETE_IF_EQUALS, EXTEND_IF_EQUALS -> {
                boolean extend = request.verb() == Request.Verb.EXTEND_IF_EQUALS;
                byte[] script =
                        withScript ? (extend ? EXTEND_SCRIPT : DELETE_SCRIPT) : (extend ? EXTEND_SHA : DELETE_SHA);
                out = header(out, extend ? 6 : 5, key.length() + script.length + 96);
                out = bulk(out, withScript ? EVAL : EVALSHA);
                out = bulk(out, script);
                out = bulk(out, ONE);
                out = bulk(out, key);
                out = bulk(out, request.token());
                yield extend ? bulk(out, Long.toString(request.ttlMillis())) : out;
            }
            case GET -> command(out, "GET", key);
            case INFO -> command(out, "INFO", key);
            case CONFIG_GET -> command(out, "CONFIG", "GET", key);
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
    static ByteBuffer room(ByteBuffer buffer, int needed) {
        if (buffer.remaining() >= needed) {
            return buffer;
        }
        ByteBuffer larger = ByteBuffer.allocate(Math.max(buffer.capacity() * 2, buffer.position() + needed));
        buffer.flip();
        return larger.put(buffer);
    }

    /**
     * Parses one reply from the buffer (in read mode). Returns {@link #INCOMPLETE}, leaving the
     * position where it was, when the reply has not fully arrived.
     */
    static Object parse(ByteBuffer in) {
        int start = in.position();
        Object reply = parseAt(in);
        if (reply == INCOMPLETE) {
            in.position(start);
        }
        return reply;
    }

    private static Object parseAt(ByteBuffer in) {
        if (!in.hasRemaining()) {
            return INCOMPLETE;
        }
        byte type = in.get();
        int start = in.position();
        int end = lineEnd(in);
        if (end < 0) {
            return INCOMPLETE;
        }
        in.position(end + 2);
        switch (type) {
            case '+': // the lock's answers are "+OK" and numbers: they cost no allocation
                return end - start == 2 && in.get(start) == 'O' && in.get(start + 1) == 'K'
                        ? "OK"
                        : text(in, start, end);
            case '-':
                return new Error(text(in, start, end));
            case ':':
                return decimal(in, start, end);
            case '$': {
                long length = decimal(in, start, end);
                if (length < 0) {
                    return NIL;
                }
                if (in.remaining() < length + 2) {
                    return INCOMPLETE;
                }
                String value = text(in, in.position(), in.position() + (int) length);
                in.position(in.position() + (int) length + 2);
                return value;
            }
            case '*': {
                long count = decimal(in, start, end);
                if (count < 0) {
                    return NIL;
                }
                List<Object> items = new ArrayList<>((int) count);
                for (int i = 0; i < count; i++) {
                    Object item = parseAt(in);
                    if (item == INCOMPLETE) {
                        return INCOMPLETE;
                    }
                    items.add(item);
                }
                return items;
            }
            default:
                throw new IllegalStateException("protocol error: a reply starts with byte " + type);
        }
    }

    /** Where the CRLF that ends the current line starts; -1 if no whole line is there yet. */
    private static int lineEnd(ByteBuffer in) {
        for (int i = in.position(); i < in.limit() - 1; i++) {
            if (in.get(i) == '\r' && in.get(i + 1) == '\n') {
                return i;
            }
        }
        return -1;
    }

    private static long decimal(ByteBuffer in, int start, int end) {
        boolean negative = start < end && in.get(start) == '-';
        long value = 0;
        for (int i = negative ? start + 1 : start; i < end; i++) {
            byte digit = in.get(i);
            if (digit < '0' || digit > '9') {
                throw new IllegalStateException("protocol error: not a number: " + text(in, start, end));
            }
            value = value * 10 + (digit - '0');
        }
        return negative ? -value : value;
    }

    private static String text(ByteBuffer in, int start, int end) {
        return new String(in.array(), in.arrayOffset() + start, end - start, StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
