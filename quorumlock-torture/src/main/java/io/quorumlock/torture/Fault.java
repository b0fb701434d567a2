package io.quorumlock.torture;

/**
 * One fault of a schedule, in terms every strategy can map onto its own servers and clients.
 *
 * @param kind what to do
 * @param atMillis when, from the start of the run's window
 * @param durationMillis how long the fault lasts before it is healed (0: instant)
 * @param pick which nodes (and, for a partition, which client): a strategy takes its targets from
 *     this number
 * @param latencyMillis the round-trip latency a {@link FaultKind#SLOW} fault adds; 0 for the other kinds
 */
public record Fault(FaultKind kind, long atMillis, long durationMillis, int pick, long latencyMillis) {

    public Fault {
        if (atMillis < 0 || durationMillis < 0 || pick < 0 || latencyMillis < 0) {
            throw new IllegalArgumentException("negative time, pick or latency in " + kind);
        }
    }

    /** A fault that adds no latency. */
    public Fault(FaultKind kind, long atMillis, long durationMillis, int pick) {
        this(kind, atMillis, durationMillis, pick, 0);
    }

    /** When the fault is healed, from the start of the window. */
    public long endMillis() {
        return atMillis + durationMillis;
    }

    /**
     * The node indexes this fault hits among {@code nodes} nodes: a quorum for {@link
     * FaultKind#RESTART} and {@link FaultKind#CLOCK} on Redis nodes (on fewer nodes neither can
     * break Redlock) and for a {@link FaultKind#PARTITION} from Redis nodes, else one node.
     */
    public int[] nodes(int nodes, boolean quorum) {
        int count = quorum ? nodes / 2 + 1 : 1;
        int[] picked = new int[count];
        for (int i = 0; i < count; i++) {
            picked[i] = (pick + i) % nodes;
        }
        return picked;
    }

    /** The client a {@link FaultKind#PARTITION} cuts off among {@code clients}, from 0. */
    public int client(int clients) {
        return pick % clients;
    }
}
