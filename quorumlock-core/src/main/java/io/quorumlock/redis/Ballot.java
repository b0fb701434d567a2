package io.quorumlock.redis;

import io.quorumlock.NodeOutcome;
import io.quorumlock.NodeOutcome.Vote;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Counts the replies of one round (grant, extension or release) as they arrive, and lets the
 * caller wait until {@link QuorumMath#tally} says the outcome is certain or the deadline passes.
 */
final class Ballot {

    private final List<String> nodes;
    private final Predicate<Vote> counts;
    private final NodeOutcome[] outcomes;
    private int yes;
    private int no;
    private boolean deadlinePassed;

    /** {@code counts} says which votes count toward the quorum. */
    Ballot(List<String> nodes, Predicate<Vote> counts) {
        this.nodes = nodes;
        this.counts = counts;
        this.outcomes = new NodeOutcome[nodes.size()];
    }

    synchronized void record(int node, NodeOutcome outcome) {
        outcomes[node] = outcome;
        if (counts.test(outcome.vote())) {
            yes++;
        } else {
            no++;
        }
        if (tally() != QuorumMath.Tally.OPEN || yes + no == outcomes.length) {
            notifyAll();
        }
    }

    /**
     * Waits until the outcome is certain or the deadline passes; returns the tally then. With
     * {@code quorumOrAll}, a certain failure does not end the wait: it goes on until a quorum or
     * every node has answered, so that clean-up on reachable nodes is done when it returns.
     */
    synchronized QuorumMath.Tally await(long deadlineNanos, boolean quorumOrAll) throws InterruptedException {
        while (quorumOrAll
                ? tally() != QuorumMath.Tally.QUORUM && yes + no < outcomes.length
                : tally() == QuorumMath.Tally.OPEN) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                deadlinePassed = true;
                break;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return tally();
    }

    synchronized int yes() {
        return yes;
    }

    synchronized QuorumMath.Tally tally() {
        return QuorumMath.tally(yes, no, outcomes.length);
    }

    /**
     * Every node's outcome so far. A node that has not answered is {@link Vote#TIMED_OUT} if the
     * wait ran into its deadline, else {@link Vote#PENDING}: the outcome was certain without it.
     */
    synchronized List<NodeOutcome> outcomes() {
        List<NodeOutcome> list = new ArrayList<>(outcomes.length);
        for (int i = 0; i < outcomes.length; i++) {
            list.add(
                    outcomes[i] != null
                            ? outcomes[i]
                            : deadlinePassed
                                    ? new NodeOutcome(nodes.get(i), Vote.TIMED_OUT, "no reply within the node timeout")
                                    : new NodeOutcome(nodes.get(i), Vote.PENDING, ""));
        }
        return list;
    }
}
