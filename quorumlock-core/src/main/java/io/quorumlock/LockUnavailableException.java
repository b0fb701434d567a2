package io.quorumlock;

import io.quorumlock.internal.Holders;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The lock could not be acquired within the allowed wait. Carries the evidence of the last
 * attempt: how many nodes voted yes, how many were needed, and what every node answered; for a
 * lock granted by one authority (ZooKeeper, etcd), which counts no votes, its one answer.
 */
public class LockUnavailableException extends QuorumlockException {
    private static final long serialVersionUID = 1L;

    private static final String RESTART_GUARD_REMEDY = ". Nodes excluded by the restart guard vote once they"
            + " have been up for the longest TTL asked for: wait, or where every node fsyncs every write (appendfsync"
            + " always), or in a test on nodes just started, build the lock with restartGuard(false)";

    private static final String REENTRANT_REMEDY = ". Leases are not reentrant: a second acquire of a resource"
            + " this holder holds waits for its own lease; for a lock that a thread may take again while it holds it,"
            + " use asLock(resource, ttl), a reentrant java.util.concurrent.locks.Lock";

    private final String resource;
    private final int attempts;
    private final int votes;
    private final int quorum;
    private final transient List<ServerAnswer> lastAttempt;
    /** How long the restart guard kept the votes out after the last attempt; null if it did not refuse it. */
    private final Duration restartGuard;

    public LockUnavailableException(
            String resource, Duration waited, int attempts, int votes, int quorum, List<ServerAnswer> lastAttempt) {
        this(resource, waited, attempts, votes, quorum, lastAttempt, Optional.empty());
    }

    /**
     * A refusal by votes, where {@code restartGuard} says, if present, that the restart guard
     * refused the last attempt (see {@link #restartGuard()}) and for how long after it it keeps
     * the votes out.
     */
    public LockUnavailableException(
            String resource,
            Duration waited,
            int attempts,
            int votes,
            int quorum,
            List<ServerAnswer> lastAttempt,
            Optional<Duration> restartGuard) {
        super(message(resource, waited, attempts, votes, quorum, lastAttempt, restartGuard));
        this.resource = resource;
        this.attempts = attempts;
        this.votes = votes;
        this.quorum = quorum;
        this.lastAttempt = List.copyOf(lastAttempt);
        this.restartGuard = restartGuard.orElse(null);
    }

    /**
     * A refusal by the one authority that grants the lock (a consensus service): no votes to count,
     * one answer, and who holds the lock if the authority named the holder.
     */
    public LockUnavailableException(
            String resource, Duration waited, int attempts, ServerAnswer answer, Optional<String> holder) {
        super(tried(resource, waited, attempts)
                + holder.map(who -> "held by " + who)
                        .orElseGet(() -> answer.detail().isEmpty()
                                ? answer.kind().description()
                                : answer.kind().description() + " (" + answer.detail() + ")")
                + " on " + answer.server()
                + ownLease(List.of(answer)));
        this.resource = resource;
        this.attempts = attempts;
        this.votes = 0;
        this.quorum = 1;
        this.lastAttempt = List.of(answer);
        this.restartGuard = null;
    }

    /**
     * A refusal whose evidence a subclass keeps itself, with its own {@code message}: no votes, no
     * answer of one server ({@link #lastAttempt()} is empty).
     */
    protected LockUnavailableException(String message, String resource, int attempts) {
        super(message);
        this.resource = resource;
        this.attempts = attempts;
        this.votes = 0;
        this.quorum = 1;
        this.lastAttempt = List.of();
        this.restartGuard = null;
    }

    /** How the message begins: {@code could not acquire 'r' within 200 ms (3 attempts): }. */
    private static String tried(String resource, Duration waited, int attempts) {
        return String.format(
                "could not acquire '%s' within %d ms (%d attempt%s): ",
                resource, waited.toMillis(), attempts, attempts == 1 ? "" : "s");
    }

    private static String message(
            String resource,
            Duration waited,
            int attempts,
            int votes,
            int quorum,
            List<ServerAnswer> answers,
            Optional<Duration> restartGuard) {
        String others = answers.stream()
                .filter(o -> o.kind() != ServerAnswer.Kind.GRANTED)
                .map(ServerAnswer::toString)
                .collect(Collectors.joining("; "));
        if (answers.size() == 1 && quorum == 1) { // a single node: no other vote to count
            return tried(resource, waited, attempts)
                    + (others.isEmpty() ? "granted too late: no validity left" : others)
                    + ownLease(answers);
        }
        boolean excluded = answers.stream().anyMatch(o -> o.kind() == ServerAnswer.Kind.EXCLUDED);
        return tried(resource, waited, attempts)
                + restartGuard
                        .map(keptOut -> "no node names a holder, but the restart guard keeps the votes of nodes that"
                                + " (re)started within the longest TTL asked for out for " + seconds(keptOut)
                                + " more: ")
                        .orElse("")
                + String.format(
                        "last attempt got %d of %d votes, %d needed%s%s",
                        votes,
                        answers.size(),
                        quorum,
                        others.isEmpty() ? " (the votes came too late: no validity left)" : "; " + others,
                        excluded ? RESTART_GUARD_REMEDY : "")
                + ownLease(answers);
    }

    /** Whole seconds, rounded up: {@code 27 s}. */
    private static String seconds(Duration duration) {
        long seconds = duration.getSeconds() + (duration.getNano() > 0 ? 1 : 0);
        return seconds + " s";
    }

    /** The remedy for a lock refused because its own holder holds it, if a server said so. */
    private static String ownLease(List<ServerAnswer> answers) {
        return answers.stream().anyMatch(o -> o.detail().contains(Holders.OWN_LEASE)) ? REENTRANT_REMEDY : "";
    }

    /** The resource that could not be locked. */
    public String resource() {
        return resource;
    }

    /** How many attempts were made. */
    public int attempts() {
        return attempts;
    }

    /** How many nodes voted yes on the last attempt; 0 where one authority refused. */
    public int votes() {
        return votes;
    }

    /** How many yes votes a grant needs; 1 where one authority grants. */
    public int quorum() {
        return quorum;
    }

    /** What each node answered on the last attempt, in the order the nodes were configured. */
    public List<ServerAnswer> lastAttempt() {
        return lastAttempt;
    }

    /**
     * Whether the restart guard refused the last attempt, and for how long after it it keeps the
     * votes out: no node named a holder, and the nodes the guard kept out of the vote (nodes that
     * may have started, or been failed over to, less than the longest TTL asked for ago, which may
     * have lost a holder's key) would have made a quorum with the others. Such a refusal is also
     * {@link #busy()}: it goes by itself, without a release, once the nodes have been up that long.
     * Empty for any other refusal.
     */
    public Optional<Duration> restartGuard() {
        return Optional.ofNullable(restartGuard);
    }

    /**
     * Whether the lock was refused because another owner holds it, rather than because the lock
     * service could not grant it: on the last attempt some node named a holder ({@link
     * ServerAnswer.Kind#HELD_BY_OTHER}) or was kept out by the restart guard ({@link
     * ServerAnswer.Kind#EXCLUDED}: restarted within a TTL, it may have lost a holder's key), and
     * those nodes, the ones that voted yes and the ones not waited for ({@link
     * ServerAnswer.Kind#PENDING}) could have made a quorum. False when fewer nodes than
     * a quorum could be reached (down, refusing connections, not answering in time), whoever holds
     * the lock on the others: then nobody can be granted it until the service is back. A
     * consensus service (one answer) is busy when it named a holder.
     */
    public boolean busy() {
        return lastAttempt != null && busy(lastAttempt, quorum); // deserialized: the evidence is not kept
    }

    /**
     * Whether answers of an attempt that needed {@code quorum} yes votes show a held lock, as
     * {@link #busy()} reads them.
     */
    public static boolean busy(List<ServerAnswer> answers, int quorum) {
        int held = 0;
        int could = 0;
        for (ServerAnswer outcome : answers) {
            ServerAnswer.Kind vote = outcome.kind();
            boolean mayHold = vote == ServerAnswer.Kind.HELD_BY_OTHER || vote == ServerAnswer.Kind.EXCLUDED;
            held += mayHold ? 1 : 0;
            could += mayHold || vote == ServerAnswer.Kind.GRANTED || vote == ServerAnswer.Kind.PENDING ? 1 : 0;
        }
        return held > 0 && could >= quorum;
    }
}
