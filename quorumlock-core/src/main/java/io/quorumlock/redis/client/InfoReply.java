package io.quorumlock.redis.client;

import java.util.HashMap;
import java.util.Map;

/**
 * The text of an INFO reply, {@code field:value} lines under {@code # Section} headers, as fields:
 * one parser for {@code checkNodes()} and for the INFO server that every new connection reads.
 */
public final class InfoReply {

    private InfoReply() {}

    public static Map<String, String> fields(String info) {
        Map<String, String> fields = new HashMap<>();
        for (String line : info.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return fields;
    }
}
