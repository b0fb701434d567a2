package io.quorumlock.torture;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A tiny reader and writer for flat JSON objects: string, integer, boolean and null values, no
 * nesting. Enough for one history event per line without a JSON library.
 */
final class FlatJson {

    private FlatJson() {}

    /** Writes a flat object; values must be String, Long, Integer, Boolean or null. */
    static String write(Map<String, ?> fields) {
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<String, ?> field : fields.entrySet()) {
            if (out.length() > 1) {
                out.append(',');
            }
            quote(field.getKey(), out);
            out.append(':');
            Object value = field.getValue();
            if (value == null || value instanceof Long || value instanceof Integer || value instanceof Boolean) {
                out.append(value);
            } else if (value instanceof String text) {
                quote(text, out);
            } else {
                throw new IllegalArgumentException("unsupported value for " + field.getKey() + ": " + value);
            }
        }
        return out.append('}').toString();
    }

    private static void quote(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /**
     * Parses a flat object into its fields in order: strings as String, integers as Long, booleans
     * as Boolean, null as null.
     *
     * @throws IllegalArgumentException if the text is not a flat JSON object
     */
    static Map<String, Object> parse(String line) {
        return new Parser(line).object();
    }

    private static final class Parser {
        private final String text;
        private int pos;

        Parser(String text) {
            this.text = text;
        }

        Map<String, Object> object() {
            Map<String, Object> fields = new LinkedHashMap<>();
            expect('{');
            if (peek() == '}') {
                pos++;
            } else {
                do {
                    String key = string();
                    expect(':');
                    fields.put(key, value());
                } while (consume(','));
                expect('}');
            }
            skipSpace();
            if (pos != text.length()) {
                throw error("trailing characters");
            }
            return fields;
        }

        private Object value() {
            char c = peek();
            if (c == '"') {
                return string();
            }
            if (c == '-' || Character.isDigit(c)) {
                int start = pos;
                pos++;
                while (pos < text.length() && Character.isDigit(text.charAt(pos))) {
                    pos++;
                }
                return Long.parseLong(text.substring(start, pos));
            }
            for (String word : new String[] {"true", "false", "null"}) {
                if (text.startsWith(word, pos)) {
                    pos += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word);
                }
            }
            throw error("unexpected value");
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                if (pos >= text.length()) {
                    throw error("unterminated string");
                }
                char c = text.charAt(pos++);
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                if (pos >= text.length()) {
                    throw error("unterminated escape");
                }
                char e = text.charAt(pos++);
                switch (e) {
                    case '"', '\\', '/' -> out.append(e);
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        if (pos + 4 > text.length()) {
                            throw error("short unicode escape");
                        }
                        out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                        pos += 4;
                    }
                    default -> throw error("bad escape \\" + e);
                }
            }
        }

        private void skipSpace() {
            while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
                pos++;
            }
        }

        private char peek() {
            skipSpace();
            if (pos >= text.length()) {
                throw error("unexpected end");
            }
            return text.charAt(pos);
        }

        private boolean consume(char c) {
            if (peek() == c) {
                pos++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!consume(c)) {
                throw error("expected '" + c + "'");
            }
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException(what + " at " + pos + " in: " + text);
        }
    }
}
