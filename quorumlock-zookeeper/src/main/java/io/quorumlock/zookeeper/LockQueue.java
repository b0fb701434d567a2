package io.quorumlock.zookeeper;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * The order of the lock nodes under one resource: the pure part of the recipe.
 *
 * <p>Every contender creates an ephemeral-sequential child {@code ...lock-NNNNNNNNNN} (Curator's
 * protection prefix {@code _c_<uuid>-} in front). The child with the lowest sequence holds the
 * lock; every other one waits for the child just before it to go. The sequence only orders the
 * contenders: it restarts from zero when the parent container is deleted, so it is never the
 * fencing token (the node's czxid is).
 */
final class LockQueue {

    /** The name every lock node starts with, after Curator's protection prefix. */
    static final String NODE_PREFIX = "lock-";

    private static final Comparator<String> BY_SEQUENCE =
            Comparator.comparingLong(LockQueue::sequence).thenComparing(Comparator.naturalOrder());

    private LockQueue() {}

    /** The sequence number of a lock node's name, or -1 if the name is not a lock node's. */
    static long sequence(String name) {
        int at = name.lastIndexOf(NODE_PREFIX);
        if (at < 0) {
            return -1;
        }
        String digits = name.substring(at + NODE_PREFIX.length());
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

    /** The lock nodes among {@code children}, holder first; other children are left out. */
    static List<String> order(Collection<String> children) {
        return children.stream()
                .filter(c -> sequence(c) >= 0)
                .sorted(BY_SEQUENCE)
                .toList();
    }

    /** Where {@code ours} stands among {@code children}. */
    static Place place(Collection<String> children, String ours) {
        List<String> queue = order(children);
        return new Place(queue, queue.indexOf(ours));
    }

    /**
     * A contender's place in the queue.
     *
     * @param queue the lock nodes, holder first
     * @param index the contender's index in {@code queue}, -1 if its node is gone
     */
    record Place(List<String> queue, int index) {

        /** False if the contender's node is not there any more (its session ended). */
        boolean present() {
            return index >= 0;
        }

        /** True if the contender holds the lock. */
        boolean first() {
            return index == 0;
        }

        /** The node that holds the lock, or null if the queue is empty. */
        String holder() {
            return queue.isEmpty() ? null : queue.get(0);
        }

        /** The node to wait for: the one just before the contender's. */
        String predecessor() {
            if (index <= 0) {
                throw new IllegalStateException("no predecessor at index " + index);
            }
            return queue.get(index - 1);
        }
    }
}
