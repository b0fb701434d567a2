package io.quorumlock.zookeeper;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * The order of the nodes under one queue directory: the pure part of the recipe.
 *
 * <p>Every contender creates an ephemeral-sequential child {@code ...<prefix>NNNNNNNNNN}
 * (Curator's protection prefix {@code _c_<uuid>-} in front). The {@code holders} children with
 * the lowest sequences hold; every other one waits. A lock's queue ({@link #LOCK}: {@code lock-},
 * one holder) is Curator's {@code InterProcessMutex}'s; a semaphore's lease queue ({@link
 * #leases}: {@code lease-}, N holders) is Curator's {@code InterProcessSemaphoreV2}'s, where only
 * the holder of the semaphore's mutex adds a node, so that the newest node holds exactly when
 * there are at most N, Curator's own rule. The sequence only orders the contenders: it restarts
 * from zero when the parent container is deleted, so it is never the fencing token (the node's
 * czxid is).
 *
 * @param prefix the name every node of the queue starts with, after Curator's protection prefix
 * @param holders how many of the first nodes hold
 */
record LockQueue(String prefix, int holders) {

    /** A lock's queue: {@code lock-} nodes, the first holds. */
    static final LockQueue LOCK = new LockQueue("lock-", 1);

    /** The name every lock node starts with, after Curator's protection prefix. */
    static final String NODE_PREFIX = LOCK.prefix();

    /** A semaphore's lease queue of {@code permits} holders: {@code lease-} nodes. */
    static LockQueue leases(int permits) {
        return new LockQueue("lease-", permits);
    }

    /** The sequence number of a node's name, or -1 if the name is not one of this queue's nodes. */
    long sequence(String name) {
        int at = name.lastIndexOf(prefix);
        if (at < 0) {
            return -1;
        }
        String digits = name.substring(at + prefix.length());
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

    /** This queue's nodes among {@code children}, first holder first; other children are left out. */
    List<String> order(Collection<String> children) {
        Comparator<String> bySequence =
                Comparator.comparingLong(this::sequence).thenComparing(Comparator.naturalOrder());
        return children.stream()
                .filter(c -> sequence(c) >= 0)
                .sorted(bySequence)
                .toList();
    }

    /** Where {@code ours} stands among {@code children}. */
    Place place(Collection<String> children, String ours) {
        List<String> queue = order(children);
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
