package io.quorumlock.bench;

import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** A small JSON writer for maps, lists, strings, numbers, booleans and nulls; enough for the results file. */
final class Json {

    private Json() {}

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
