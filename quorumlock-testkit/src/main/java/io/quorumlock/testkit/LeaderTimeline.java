package io.quorumlock.testkit;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * What the candidates of one leader election were told, in the order of all their calls, for tests
 * of hand-overs: feed it from each candidate's listener, then {@link #handOver} a fault and check
 * the order and the tokens.
 */
public final class LeaderTimeline {

    /** One listener call: {@code elected} or revoked, with the term's fencing token and the monotonic time. */
    public record Told(String candidate, boolean elected, long token, long at) {}

    /** A hand-over: the next leader's election, and how long after the fault it came. */
    public record HandOver(Told next, Duration took) {}

    /** A fault done to the leader. */
    @FunctionalInterface
    public interface Fault {
        void apply() throws Exception;
    }

    private final List<Told> told = new CopyOnWriteArrayList<>();
    private final Duration lease;
    private final Duration wait;
    private final Duration margin;

    /**
     * @param lease what a hand-over may take, before the margin: the TTL, or ZooKeeper's session timeout
     * @param wait how long to wait for an election
     * @param margin added to {@code lease} for a busy machine
     */
    public LeaderTimeline(Duration lease, Duration wait, Duration margin) {
        this.lease = lease;
        this.wait = wait;
        this.margin = margin;
    }

    /** Call from the listener's {@code elected}. */
    public void elected(String candidate, long token) {
        told.add(new Told(candidate, true, token, System.nanoTime()));
    }

    /** Call from the listener's {@code revoked}. */
    public void revoked(String candidate, long token) {
        told.add(new Told(candidate, false, token, System.nanoTime()));
    }

    /** Every call so far. */
    public List<Told> told() {
        return List.copyOf(told);
    }

    /** The tokens of every election so far, in order. */
    public List<Long> electedTokens() {
        return told.stream().filter(Told::elected).map(Told::token).toList();
    }

    /**
     * Applies {@code fault} to {@code leader}, waits until another candidate is elected, and checks
     * the hand-over took no longer than the lease and the margin.
     */
    public HandOver handOver(String how, String leader, Fault fault) throws Exception {
        int mark = told.size();
        long start = System.nanoTime();
        fault.apply();
        TestTime.await(wait, () -> next(mark, leader) != null, "another candidate to be elected after " + leader);
        Told next = next(mark, leader);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(next.at - start);
        if (tookMillis > lease.plus(margin).toMillis()) {
            throw new AssertionError("the hand-over when the leader was " + how + " took " + tookMillis
                    + " ms, more than the lease of " + lease.toMillis() + " ms and a margin of " + margin.toMillis()
                    + " ms");
        }
        return new HandOver(next, Duration.ofMillis(tookMillis));
    }

    /** Checks that {@code old} was told its term ended before {@code next}'s candidate was told it leads. */
    public void assertRevokedBeforeElected(String old, Told next) {
        int revoked = lastIndexOf(old, false);
        int elected = told.indexOf(next);
        if (revoked < 0 || revoked > elected) {
            throw new AssertionError(old + " was not revoked before " + next.candidate + " was elected: " + told);
        }
    }

    /** Waits until {@code candidate}'s last term was revoked. */
    public void awaitRevoked(String candidate) {
        TestTime.await(
                wait,
                () -> lastIndexOf(candidate, false) > lastIndexOf(candidate, true),
                candidate + "'s term to be revoked");
    }

    private Told next(int from, String old) {
        return told.subList(from, told.size()).stream()
                .filter(t -> t.elected && !t.candidate.equals(old))
                .findFirst()
                .orElse(null);
    }

    private int lastIndexOf(String candidate, boolean elected) {
        for (int i = told.size() - 1; i >= 0; i--) {
            if (told.get(i).candidate.equals(candidate) && told.get(i).elected == elected) {
                return i;
            }
        }
        return -1;
    }
}
