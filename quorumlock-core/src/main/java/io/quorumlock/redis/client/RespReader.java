package io.quorumlock.redis.client;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads RESP2 replies from one connection's bytes as they arrive, within limits. The lock's own
 * replies are a few bytes and {@code INFO} a few kilobytes, so anything past the limits is a
 * protocol error for that node, never a memory or stack problem. Resumable: the bytes of each value
 * are consumed as it completes, unfinished arrays wait on a stack, and a line's search for its end
 * goes on where it stopped, so a reply that arrives in many pieces costs time linear in its bytes.
 */
final class RespReader {

    /** The longest line: a simple string, an error, an integer or a header. */
    static final int MAX_LINE = 8 * 1024;
    /** The longest bulk string. */
    static final int MAX_BULK = 1024 * 1024;
    /** The most elements of one array. */
    static final int MAX_ELEMENTS = 1024;
    /** The deepest nesting of arrays. */
    static final int MAX_DEPTH = 4;
    /** The most values, nested ones included, in one reply. */
    static final int MAX_VALUES = 4 * 1024;
    /** The most bytes of one reply. */
    static final int MAX_REPLY = 2 * MAX_BULK;
    /** A connection's read buffer grows no further once it holds this much: one line or bulk string and more. */
    static final int MAX_BUFFER = MAX_BULK + MAX_LINE + 64;

    /** Bytes that are no reply, or a reply past a limit: the connection's stream cannot be trusted any more. */
    static final class ProtocolException extends Exception {
        private static final long serialVersionUID = 1L;

        ProtocolException(String message) {
            super(message, null, false, false);
        }
    }

    private record Frame(int size, List<Reply> items) {}

    private final ArrayDeque<Frame> open = new ArrayDeque<>();
    /** Bytes after the position already searched for the end of the current line. */
    private int scanned;
    /** The length of the bulk string whose body is awaited, or -1. */
    private int bulkLength = -1;

    private int valuesInReply;
    private long bytesInReply;

    /**
     * The next whole reply in {@code in} (read mode), its bytes consumed; null when it has not fully
     * arrived (what did arrive is kept, here or in {@code in}).
     */
    Reply next(ByteBuffer in) throws ProtocolException {
        while (true) {
            Reply value = bulkLength >= 0 ? bulkBody(in) : line(in);
            if (value == null) {
                return null;
            }
            if (++valuesInReply > MAX_VALUES) {
                throw new ProtocolException("sent a reply of more than " + MAX_VALUES + " values");
            }
            while (true) {
                Frame top = open.peek();
                if (top == null) {
                    valuesInReply = 0;
                    bytesInReply = 0;
                    return value;
                }
                top.items().add(value);
                if (top.items().size() < top.size()) {
                    break;
                }
                open.pop();
                value = new Reply.Array(List.copyOf(top.items()));
            }
        }
    }

    /** A value that fits on its line, or null: a bulk or array header is consumed and remembered. */
    private Reply line(ByteBuffer in) throws ProtocolException {
        int start = in.position();
        if (in.hasRemaining() && "+-:$*".indexOf(in.get(start)) < 0) { // known at the first byte: TLS sends no CRLF
            throw new ProtocolException("sent " + describe(in.get(start)) + " where a reply begins: not RESP");
        }
        int end = lineEnd(in);
        if (end < 0) {
            return null;
        }
        byte type = in.get(start);
        int from = start + 1;
        consume(in, end + 2 - start);
        switch (type) {
            case '+':
                return end - from == 2 && in.get(from) == 'O' && in.get(from + 1) == 'K'
                        ? Reply.Simple.OK
                        : new Reply.Simple(text(in, from, end));
            case '-':
                return new Reply.Error(text(in, from, end));
            case ':': {
                long value = decimal(in, from, end);
                return value == 0 ? Reply.Int.ZERO : value == 1 ? Reply.Int.ONE : new Reply.Int(value);
            }
            case '$': {
                long length = decimal(in, from, end);
                if (length == -1) {
                    return Reply.Nil.NIL;
                }
                if (length < -1 || length > MAX_BULK) {
                    throw new ProtocolException("sent a bulk string of " + length
                            + " bytes (the most a reply may have is " + MAX_BULK + ")");
                }
                bulkLength = (int) length;
                return bulkBody(in);
            }
            case '*': {
                long count = decimal(in, from, end);
                if (count == -1) {
                    return Reply.Nil.NIL;
                }
                if (count < -1 || count > MAX_ELEMENTS) {
                    throw new ProtocolException("sent an array of " + count + " elements (the most a reply may have is "
                            + MAX_ELEMENTS + ")");
                }
                if (count == 0) {
                    return new Reply.Array(List.of());
                }
                if (open.size() >= MAX_DEPTH) {
                    throw new ProtocolException("sent arrays nested more than " + MAX_DEPTH + " deep");
                }
                open.push(new Frame((int) count, new ArrayList<>((int) count)));
                return line(in);
            }
            default:
                throw new IllegalStateException("checked above: " + type);
        }
    }

    private Reply bulkBody(ByteBuffer in) throws ProtocolException {
        if (in.remaining() < bulkLength + 2) {
            return null;
        }
        int start = in.position();
        if (in.get(start + bulkLength) != '\r' || in.get(start + bulkLength + 1) != '\n') {
            throw new ProtocolException("sent a bulk string not ended by CRLF");
        }
        String text = text(in, start, start + bulkLength);
        consume(in, bulkLength + 2);
        bulkLength = -1;
        return new Reply.Bulk(text);
    }

    private void consume(ByteBuffer in, int bytes) throws ProtocolException {
        in.position(in.position() + bytes);
        scanned = 0;
        bytesInReply += bytes;
        if (bytesInReply > MAX_REPLY) {
            throw new ProtocolException("sent a reply of more than " + MAX_REPLY + " bytes");
        }
    }

    /** Where the CRLF that ends the current line starts; -1 if it has not arrived yet. */
    private int lineEnd(ByteBuffer in) throws ProtocolException {
        int start = in.position();
        for (int i = start + scanned; i < in.limit() - 1; i++) {
            if (in.get(i) == '\r' && in.get(i + 1) == '\n') {
                if (i - start > MAX_LINE) {
                    break;
                }
                return i;
            }
        }
        scanned = Math.max(0, in.remaining() - 1); // the last byte may be the CR of the CRLF
        if (scanned > MAX_LINE) {
            throw new ProtocolException("sent a line of more than " + MAX_LINE + " bytes");
        }
        return -1;
    }

    private static long decimal(ByteBuffer in, int start, int end) throws ProtocolException {
        boolean negative = start < end && in.get(start) == '-';
        int first = negative ? start + 1 : start;
        if (first == end || end - first > 18) {
            throw new ProtocolException("sent a number that is none: '" + printable(in, start, end) + "'");
        }
        long value = 0;
        for (int i = first; i < end; i++) {
            byte digit = in.get(i);
            if (digit < '0' || digit > '9') {
                throw new ProtocolException("sent a number that is none: '" + printable(in, start, end) + "'");
            }
            value = value * 10 + (digit - '0');
        }
        return negative ? -value : value;
    }

    private static String describe(byte b) {
        String hex = String.format("byte 0x%02x", b & 0xff);
        if (b == 0x15 || b == 0x16) {
            return hex + " (a TLS record: the node speaks TLS, use rediss://)";
        }
        return b >= 0x20 && b < 0x7f ? hex + " ('" + (char) b + "')" : hex;
    }

    private static String printable(ByteBuffer in, int start, int end) {
        String text = text(in, start, Math.min(end, start + 32));
        return text.replaceAll("[^\\x20-\\x7e]", "?") + (end - start > 32 ? "..." : "");
    }

    private static String text(ByteBuffer in, int start, int end) {
        byte[] bytes = new byte[end - start];
        in.get(start, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
