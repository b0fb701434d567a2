package io.quorumlock.redis;

import io.quorumlock.redis.client.Reply;
import java.util.ArrayList;
import java.util.List;

/**
 * A cluster member's {@code CLUSTER NODES} in a few words, for {@code checkNodes()}: how many
 * masters and replicas the cluster has, and which slots this node serves, such as {@code 3
 * master(s), 3 replica(s); this node is a master of slots 0-5460 (5461 of 16384)}. Reads at most
 * {@link #MAX_LINES} lines; anything it cannot read is said so, never thrown.
 */
final class ClusterView {

    /** More nodes than a cluster has: the rest of an answer that long is not read. */
    static final int MAX_LINES = 1_000;

    private ClusterView() {}

    /** The summary of {@code reply}, or why there is none. */
    static String of(Reply reply) {
        if (!(reply instanceof Reply.Bulk bulk)) {
            return "its CLUSTER NODES not answered: " + Reply.shape(reply);
        }
        int masters = 0;
        int replicas = 0;
        String self = null;
        List<String> slots = new ArrayList<>();
        int count = 0;
        long served = 0;
        for (String line : bulk.text().split("\n", MAX_LINES + 1)) {
            if (++count > MAX_LINES) {
                break;
            }
            String[] fields = line.trim().split(" ");
            if (fields.length < 8) {
                continue;
            }
            String flags = fields[2];
            boolean master = hasFlag(flags, "master");
            boolean failing = hasFlag(flags, "fail") || hasFlag(flags, "noaddr");
            if (master && !failing) {
                masters++;
            } else if (hasFlag(flags, "slave") && !failing) {
                replicas++;
            }
            if (hasFlag(flags, "myself")) {
                self = master ? "a master" : "a replica";
                for (int i = 8; i < fields.length && slots.size() < 16; i++) {
                    if (fields[i].startsWith("[")) {
                        continue; // a slot being migrated or imported
                    }
                    slots.add(fields[i]);
                    served += size(fields[i]);
                }
            }
        }
        String summary = masters + " master(s), " + replicas + " replica(s)";
        if (self == null) {
            return summary;
        }
        return summary + "; this node is " + self
                + (slots.isEmpty()
                        ? " of no slot"
                        : " of slots " + String.join(",", slots) + " (" + served + " of "
                                + io.quorumlock.redis.client.HashSlots.COUNT + ")");
    }

    private static boolean hasFlag(String flags, String flag) {
        for (String one : flags.split(",")) {
            if (one.equals(flag)) {
                return true;
            }
        }
        return false;
    }

    /** How many slots {@code range} ({@code 5} or {@code 0-5460}) holds; 0 if it is not one. */
    private static long size(String range) {
        try {
            int dash = range.indexOf('-');
            if (dash < 0) {
                Integer.parseInt(range);
                return 1;
            }
            return Math.max(
                    0, Integer.parseInt(range.substring(dash + 1)) - Integer.parseInt(range.substring(0, dash)) + 1);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
