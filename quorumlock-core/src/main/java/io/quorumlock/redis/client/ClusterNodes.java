package io.quorumlock.redis.client;

import java.util.ArrayList;
import java.util.List;

/**
 * A cluster member's answer to {@code CLUSTER NODES}, read line by line: each node's id, address,
 * role and the slots it serves. What a server sends is untrusted: at most {@link #MAX_LINES} lines
 * are read, a line that does not parse is skipped, and a slot outside 0-16383 is not taken.
 */
public final class ClusterNodes {

    /** More nodes than a cluster has: the rest of an answer that long is not read. */
    public static final int MAX_LINES = 1_000;

    private static final int MAX_RANGES_PER_NODE = HashSlots.COUNT;

    private ClusterNodes() {}

    /**
     * One line.
     *
     * @param id the node's id
     * @param host its address as the cluster announces it; empty if it has none ({@code noaddr}, or
     *     a node that has met no other and does not know its own)
     * @param port its client port; 0 if it has none
     * @param master whether it is a master
     * @param myself whether it is the node that answered
     * @param failing whether it is flagged failing ({@code fail}, {@code fail?}, {@code noaddr}, {@code handshake})
     * @param masterId the id of its master, for a replica; else {@code -}
     * @param ranges the slots it serves, as pairs of first and last slot
     */
    public record Node(
            String id,
            String host,
            int port,
            boolean master,
            boolean myself,
            boolean failing,
            String masterId,
            int[] ranges) {

        /** How many slots it serves. */
        public int slots() {
            int count = 0;
            for (int i = 0; i + 1 < ranges.length; i += 2) {
                count += ranges[i + 1] - ranges[i] + 1;
            }
            return count;
        }

        /** Its ranges as the cluster writes them: {@code 0-5460,5461}, at most {@code limit} of them. */
        public String rangesText(int limit) {
            List<String> text = new ArrayList<>();
            for (int i = 0; i + 1 < ranges.length && text.size() < limit; i += 2) {
                text.add(ranges[i] == ranges[i + 1] ? Integer.toString(ranges[i]) : ranges[i] + "-" + ranges[i + 1]);
            }
            return String.join(",", text);
        }
    }

    /** The nodes in {@code text}, in its order; the lines that do not parse are left out. */
    public static List<Node> parse(String text) {
        List<Node> nodes = new ArrayList<>();
        int count = 0;
        for (String line : text.split("\n", MAX_LINES + 1)) {
            if (++count > MAX_LINES) {
                break;
            }
            Node node = line(line.trim());
            if (node != null) {
                nodes.add(node);
            }
        }
        return nodes;
    }

    /** One line, or null if it is not a node's. */
    private static Node line(String line) {
        String[] fields = line.split(" ");
        if (fields.length < 8 || fields[0].isEmpty()) {
            return null;
        }
        String flags = fields[2];
        boolean master = hasFlag(flags, "master");
        boolean failing = hasFlag(flags, "fail")
                || hasFlag(flags, "fail?")
                || hasFlag(flags, "noaddr")
                || hasFlag(flags, "handshake");
        // ip:port@cport[,hostname]; an IPv6 address holds colons of its own
        String address = fields[1];
        int at = address.indexOf('@');
        String hostPort = at < 0 ? address : address.substring(0, at);
        int colon = hostPort.lastIndexOf(':');
        String host = colon < 0 ? "" : hostPort.substring(0, colon);
        int port = 0;
        try {
            port = colon < 0 ? 0 : Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            return null;
        }
        if (port < 0 || port > 65535) {
            return null;
        }
        int[] ranges = new int[Math.min(2 * (fields.length - 8), 2 * MAX_RANGES_PER_NODE)];
        int kept = 0;
        for (int i = 8; i < fields.length && kept < ranges.length; i++) {
            int[] range = range(fields[i]);
            if (range != null) {
                ranges[kept++] = range[0];
                ranges[kept++] = range[1];
            }
        }
        return new Node(
                fields[0],
                host,
                port,
                master,
                hasFlag(flags, "myself"),
                failing,
                fields[3],
                java.util.Arrays.copyOf(ranges, kept));
    }

    /** {@code 5} or {@code 0-5460} as first and last slot; null for a slot being moved ({@code [...]}) or junk. */
    private static int[] range(String text) {
        if (text.startsWith("[")) {
            return null;
        }
        try {
            int dash = text.indexOf('-');
            int first = Integer.parseInt(dash < 0 ? text : text.substring(0, dash));
            int last = dash < 0 ? first : Integer.parseInt(text.substring(dash + 1));
            return first >= 0 && first <= last && last < HashSlots.COUNT ? new int[] {first, last} : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static boolean hasFlag(String flags, String flag) {
        for (String one : flags.split(",")) {
            if (one.equals(flag)) {
                return true;
            }
        }
        return false;
    }
}
