package io.quorumlock.zookeeper;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * The order of the nodes under one queue directory: the pure part of the recipe.
 *
 * <p>Every contender creates an ephemeral-sequential child {@code ...<prefix>NNNNNNNNNN}
 * (Curator's protection prefix {@code _c_<uuid>-} in front). A contender holds once its node is
 * among the first {@code holders} of the nodes that count against it, ordered by sequence; until
 * then it waits. The shapes are Curator's recipes:
 *
 * <ul>
 *   <li>a lock ({@link #LOCK}): {@code lock-} nodes, the first holds ({@code InterProcessMutex});
 *   <li>a semaphore's leases ({@link #leases}): {@code lease-} nodes, the first N hold ({@code
 *       InterProcessSemaphoreV2}, where only the holder of the semaphore's mutex adds a node, so the
 *       newest node holds exactly when there are at most N, Curator's own rule);
 *   <li>a read-write lock ({@link #WRITER}, {@link #READER}): {@code __WRIT__} and {@code __READ__}
 *       nodes of one directory ({@code InterProcessReadWriteLock}); a writer holds when its node is
 *       the first of all, a reader when no writer's node is ahead of its own (only writers count
 *       against it). A reader {@linkplain #beside beside} a writer's node is the writer stepping down
 *       (Curator's downgrade): its node is not sequential but takes the writer's sequence, so that
 *       it stands in the writer's place for those behind, and the writer's node does not count
 *       against it.
 * </ul>
 *
 * <p>The sequence only orders the contenders: it restarts from zero when the parent container is
 * deleted, so it is never the fencing token (the node's czxid is).
 *
 * @param prefix the name of this contender's node, after Curator's protection prefix
 * @param counted the names of the nodes that count against it (its own always does)
 * @param holders how many of the first counted nodes hold
 * @param beside the writer's node a reader stands beside, or null
 */
record LockQueue(String prefix, List<String> counted, int holders, String beside) {

    /** A lock's queue: {@code lock-} nodes, the first holds. */
    static final LockQueue LOCK = new LockQueue("lock-", List.of("lock-"), 1, null);

    /** The name every lock node starts with, after Curator's protection prefix. */
    static final String NODE_PREFIX = LOCK.prefix();

    /** A writer of a read-write lock: first of all its readers and writers. */
    static final LockQueue WRITER = new LockQueue("__WRIT__", List.of("__READ__", "__WRIT__"), 1, null);

    /** A reader of a read-write lock: no writer ahead of it. */
    static final LockQueue READER = new LockQueue("__READ__", List.of("__WRIT__"), 1, null);

    /** A semaphore's lease queue of {@code permits} holders: {@code lease-} nodes. */
    static LockQueue leases(int permits) {
        return new LockQueue("lease-", List.of("lease-"), permits, null);
    }

    /** This queue's contender beside the writer's node {@code writer}, whose sequence it takes. */
    LockQueue beside(String writer) {
        return new LockQueue(prefix, counted, holders, writer);
    }

    /**
     * The name of the node to create: with a sequence of the ensemble's ({@code prefix}, created
     * sequential), or the sequence of the node it stands beside.
     */
    String nodeName() {
        return beside == null
                ? prefix
                : prefix
                        + beside.substring(beside.lastIndexOf(WRITER.prefix())
                                + WRITER.prefix().length());
    }

    /** The sequence number of a counted node's name, or -1 if the name is not one that counts. */
    long sequence(String name) {
        if (name.equals(beside)) {
            return -1;
        }
        for (String kind : counted) {
            long sequence = sequence(name, kind);
            if (sequence >= 0) {
                return sequence;
            }
        }
        return -1;
    }

    /** The sequence number after {@code kind} in {@code name}, or -1 if there is none. */
    static long sequence(String name, String kind) {
        int at = name.lastIndexOf(kind);
        if (at < 0) {
            return -1;
        }
        String digits = name.substring(at + kind.length());
        if (digits.isEmpty() || digits.length() > 18) {
            return -1;
        }
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(digits);
    }

    /** The counted nodes among {@code children}, first holder first; other children are left out. */
    List<String> order(Collection<String> children) {
        return order(children, null);
    }

    /** The counted nodes and {@code ours} among {@code children}, first holder first. */
    private List<String> order(Collection<String> children, String ours) {
        Comparator<String> bySequence = Comparator.comparingLong(
                        (String c) -> c.equals(ours) ? sequence(c, prefix) : sequence(c))
                .thenComparing(Comparator.naturalOrder());
        return children.stream()
                .filter(c -> c.equals(ours) ? sequence(c, prefix) >= 0 : sequence(c) >= 0)
                .sorted(bySequence)
                .toList();
    }

    /** Where {@code ours} stands among {@code children}. */
    Place place(Collection<String> children, String ours) {
        List<String> queue = order(children, ours);
        return new Place(queue, queue.indexOf(ours), holders);
    }

    /**
     * A contender's place in the queue.
     *
     * @param queue the queue's nodes, first holder first
     * @param index the contender's index in {@code queue}, -1 if its node is gone
     * @param holders how many of the first nodes hold
     */
    record Place(List<String> queue, int index, int holders) {

        /** False if the contender's node is not there any more (its session ended). */
        boolean present() {
            return index >= 0;
        }

        /** True if the contender holds: its node is one of the first {@code holders}. */
        boolean first() {
            return index >= 0 && index < holders;
        }

        /** The node that holds the lock (the first holder), or null if the queue is empty. */
        String holder() {
            return queue.isEmpty() ? null : queue.get(0);
        }

        /** The node to wait for: the one whose going lets the contender in, on a lock the one just before. */
        String predecessor() {
            if (index < holders) {
                throw new IllegalStateException("no predecessor at index " + index);
            }
            return queue.get(index - holders);
        }
    }
}
