package io.quorumlock.bench;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A small JSON writer for maps, lists, strings, numbers, booleans and nulls; enough for the results
 * file. And its reader, for the results of another build ({@code bench --baseline}): objects as
 * maps, arrays as lists, numbers as doubles; strict, and nested at most {@link #MAX_DEPTH} deep.
 */
final class Json {

    static final int MAX_DEPTH = 32;

    private final String text;
    private int at;

    private Json(String text) {
        this.text = text;
    }

    /**
     * The value {@code text} holds.
     *
     * @throws IllegalArgumentException if it is not one JSON value, saying where and why
     */
    static Object read(String text) {
        Json reader = new Json(text);
        Object value = reader.value(0);
        reader.space();
        if (reader.at < text.length()) {
            throw reader.error("text after the value");
        }
        return value;
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nested more than " + MAX_DEPTH + " deep");
        }
        space();
        if (at >= text.length()) {
            throw error("the text ends where a value was expected");
        }
        char c = text.charAt(at);
        if (c == '{') {
            return readObject(depth);
        }
        if (c == '[') {
            return readArray(depth);
        }
        if (c == '"') {
            return readString();
        }
        for (String word : List.of("true", "false", "null")) {
            if (text.startsWith(word, at)) {
                at += word.length();
                return word.equals("null") ? null : Boolean.valueOf(word);
            }
        }
        return readNumber();
    }

    private Map<String, Object> readObject(int depth) {
        Map<String, Object> map = new LinkedHashMap<>();
        at++;
        space();
        if (next('}')) {
            return map;
        }
        do {
            space();
            if (at >= text.length() || text.charAt(at) != '"') {
                throw error("expected a name in quotes");
            }
            String name = readString();
            space();
            expect(':');
            map.put(name, value(depth + 1));
            space();
        } while (next(','));
        expect('}');
        return map;
    }

    private List<Object> readArray(int depth) {
        List<Object> list = new ArrayList<>();
        at++;
        space();
        if (next(']')) {
            return list;
        }
        do {
            list.add(value(depth + 1));
            space();
        } while (next(','));
        expect(']');
        return list;
    }

    private String readString() {
        StringBuilder out = new StringBuilder();
        at++;
        while (at < text.length()) {
            char c = text.charAt(at++);
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                throw error("a control character in a string");
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (at >= text.length()) {
                break;
            }
            char e = text.charAt(at++);
            switch (e) {
                case '"', '\\', '/' -> out.append(e);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    String hex = text.substring(at, Math.min(at + 4, text.length()));
                    if (!hex.matches("[0-9a-fA-F]{4}")) {
                        throw error("a \\u escape without 4 hexadecimal digits");
                    }
                    out.append((char) Integer.parseInt(hex, 16));
                    at += 4;
                }
                default -> throw error("an unknown escape \\" + e);
            }
        }
        throw error("a string that does not end");
    }

    private Double readNumber() {
        int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        String number = text.substring(start, at);
        if (!number.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")) {
            at = start;
            throw error("expected a value");
        }
        return Double.valueOf(number);
    }

    private void space() {
        while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
    }

    private boolean next(char c) {
        if (at < text.length() && text.charAt(at) == c) {
            at++;
            return true;
        }
        return false;
    }

    private void expect(char c) {
        if (!next(c)) {
            throw error("expected '" + c + "'");
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("not JSON at character " + at + ": " + what);
    }

    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, "");
        return out.append('\n').toString();
    }

    private static void write(Object value, StringBuilder out, String indent) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            string(s, out);
        } else if (value instanceof Boolean b) {
            out.append(b);
        } else if (value instanceof Integer || value instanceof Long) {
            out.append(value);
        } else if (value instanceof Number n) {
            number(n.doubleValue(), out);
        } else if (value instanceof Map<?, ?> map) {
            object(map, out, indent);
        } else if (value instanceof List<?> list) {
            array(list, out, indent);
        } else {
            string(value.toString(), out);
        }
    }

    private static void object(Map<?, ?> map, StringBuilder out, String indent) {
        if (map.isEmpty()) {
            out.append("{}");
            return;
        }
        String inner = indent + "  ";
        out.append("{\n");
        Iterator<? extends Map.Entry<?, ?>> entries = map.entrySet().iterator();
        while (entries.hasNext()) {
            Map.Entry<?, ?> entry = entries.next();
            out.append(inner);
            string(String.valueOf(entry.getKey()), out);
            out.append(": ");
            write(entry.getValue(), out, inner);
            out.append(entries.hasNext() ? ",\n" : "\n");
        }
        out.append(indent).append('}');
    }

    private static void array(List<?> list, StringBuilder out, String indent) {
        if (list.isEmpty()) {
            out.append("[]");
            return;
        }
        String inner = indent + "  ";
        out.append("[\n");
        for (int i = 0; i < list.size(); i++) {
            out.append(inner);
            write(list.get(i), out, inner);
            out.append(i < list.size() - 1 ? ",\n" : "\n");
        }
        out.append(indent).append(']');
    }

    private static void number(double d, StringBuilder out) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            out.append("null");
        } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            out.append((long) d);
        } else {
            // enough digits for a benchmark figure, without the noise of the last bits
            out.append(new java.math.BigDecimal(d)
                    .round(new java.math.MathContext(6))
                    .stripTrailingZeros()
                    .toPlainString());
        }
    }

    private static void string(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
