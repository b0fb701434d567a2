package io.quorumlock;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The lock could not be acquired within the allowed wait. Carries the evidence of the last
 * attempt: how many nodes voted yes, how many were needed, and what every node answered.
 */
public class LockUnavailableException extends QuorumLockException {
    private static final long serialVersionUID = 1L;

    private static final String RESTART_GUARD_REMEDY = ". Nodes excluded by the restart guard vote once they"
            + " have been up for the longest TTL asked for: wait, or where every node fsyncs every write (appendfsync"
            + " always), or in a test on nodes just started, build the lock with restartGuard(false)";

    private final String resource;
    private final int attempts;
    private final int votes;
    private final int quorum;
    private final transient List<NodeOutcome> lastAttempt;

    public LockUnavailableException(
            String resource, Duration waited, int attempts, int votes, int quorum, List<NodeOutcome> lastAttempt) {
        super(message(resource, waited, attempts, votes, quorum, lastAttempt));
        this.resource = resource;
        this.attempts = attempts;
        this.votes = votes;
        this.quorum = quorum;
        this.lastAttempt = List.copyOf(lastAttempt);
    }

    private static String message(
            String resource, Duration waited, int attempts, int votes, int quorum, List<NodeOutcome> outcomes) {
        String others = outcomes.stream()
                .filter(o -> o.vote() != NodeOutcome.Vote.YES)
                .map(NodeOutcome::toString)
                .collect(Collectors.joining("; "));
        if (outcomes.size() == 1
                && quorum == 1) { // one authority (a single node, or a consensus ensemble): no vote to count
            return String.format(
                    "could not acquire '%s' within %d ms (%d attempt%s): %s",
                    resource,
                    waited.toMillis(),
                    attempts,
                    attempts == 1 ? "" : "s",
                    others.isEmpty() ? "granted too late: no validity left" : others);
        }
        boolean excluded = outcomes.stream().anyMatch(o -> o.vote() == NodeOutcome.Vote.EXCLUDED);
        return String.format(
                "could not acquire '%s' within %d ms (%d attempt%s): last attempt got %d of %d votes, %d needed%s%s",
                resource,
                waited.toMillis(),
                attempts,
                attempts == 1 ? "" : "s",
                votes,
                outcomes.size(),
                quorum,
                others.isEmpty() ? " (the votes came too late: no validity left)" : "; " + others,
                excluded ? RESTART_GUARD_REMEDY : "");
    }

    /** The resource that could not be locked. */
    public String resource() {
        return resource;
    }

    /** How many attempts were made. */
    public int attempts() {
        return attempts;
    }

    /** How many nodes voted yes on the last attempt. */
    public int votes() {
        return votes;
    }

    /** How many yes votes a grant needs. */
    public int quorum() {
        return quorum;
    }

    /** What each node answered on the last attempt, in the order the nodes were configured. */
    public List<NodeOutcome> lastAttempt() {
        return lastAttempt;
    }
}
