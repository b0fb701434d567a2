package io.quorumlock.spring;

import io.quorumlock.DistributedLock;
import io.quorumlock.LeaderElection;
import io.quorumlock.LeaderElectionBuilder;
import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

/**
 * This instance's candidacy in the election {@code quorumlock.leader.election}, over the context's
 * lock: it joins the election when the context starts (after the other beans, the web server
 * included) and steps down and leaves it when the context stops (before them). It publishes a
 * {@link LeaderElectedEvent} when this instance comes to lead and a {@link LeaderRevokedEvent} when
 * its term ends, both before another instance can be elected.
 *
 * <p>A listener of {@link LeaderElectedEvent} that throws ends the term it was told of: this
 * instance steps down (a {@link LeaderRevokedEvent} follows) and campaigns again.
 *
 * <p>On a fenced backend each term carries the lease's fencing token ({@link #term()}), larger than
 * every earlier term's: hand it to the storage with the leader's writes. On Redis a term has none.
 */
public final class QuorumlockLeadership implements SmartLifecycle {

    private final String holder;
    private final LeaderElectionBuilder<?> candidate;
    private final String election;
    private final Duration ttl;
    private final ApplicationEventPublisher events;

    /** Held while the bean starts or stops; never by a reader, so that the election's thread never waits for it. */
    private final Object lifecycle = new Object();

    /** The election while the bean runs; null when stopped. Written under {@link #lifecycle}. */
    private volatile LeaderElection<?> running;

    /** The term this instance leads, set before its elected event and cleared before its revoked event. */
    private volatile LeaderElection.Term<? extends Lease> current;

    QuorumlockLeadership(
            DistributedLock<?> lock, String election, Duration ttl, String holder, ApplicationEventPublisher events) {
        this.election = election;
        this.ttl = ttl;
        this.holder = holder;
        this.events = events;
        this.candidate = candidate(lock, election, ttl, new Listener());
    }

    private static <L extends Lease> LeaderElectionBuilder<L> candidate(
            DistributedLock<L> lock, String election, Duration ttl, LeaderElection.Listener<Lease> listener) {
        return LeaderElection.builder(lock, election).ttl(ttl).listener(listener);
    }

    /** The election's name: the resource its leaders lock. */
    public String election() {
        return election;
    }

    /** This instance, as the lock names it to the servers ({@code pid@host}). */
    public String holder() {
        return holder;
    }

    /** The TTL of the leader's lease ({@code quorumlock.leader.ttl}). */
    public Duration ttl() {
        return ttl;
    }

    /** Whether this instance leads now. */
    public boolean isLeader() {
        return term().isPresent();
    }

    /** The term this instance leads now, with its fencing token on a fenced backend; empty if it does not lead. */
    public Optional<LeaderElection.Term<? extends Lease>> term() {
        LeaderElection.Term<? extends Lease> term = current;
        return term != null && term.isCurrent() ? Optional.of(term) : Optional.empty();
    }

    /** The fencing token of the term this instance leads now, on a fenced backend. */
    public OptionalLong fencingToken() {
        return term().map(LeaderElection.Term::fencingToken).orElse(OptionalLong.empty());
    }

    /**
     * Who leads the election now, as the lock's servers tell (any instance, this one or another):
     * empty if nobody leads, or if the bean is not running.
     *
     * @throws io.quorumlock.QuorumlockException if the servers cannot tell
     */
    public Optional<io.quorumlock.LockHolder> leader() {
        LeaderElection<?> election = running;
        return election == null ? Optional.empty() : election.leader();
    }

    /**
     * Waits up to {@code maxWait} until this instance leads.
     *
     * @return the term, or empty if {@code maxWait} passed first
     * @throws IllegalStateException if the bean is not running (the context not started, or stopped)
     */
    public Optional<LeaderElection.Term<? extends Lease>> awaitLeadership(Duration maxWait) {
        LeaderElection<?> election = running;
        if (election == null) {
            throw new IllegalStateException(
                    "the candidacy in '" + this.election + "' is not running: start the context");
        }
        return election.awaitLeadership(maxWait).map(term -> term);
    }

    /**
     * Ends this instance's term, if it leads, and campaigns again behind the instances already
     * waiting where the backend keeps them in order.
     */
    public void stepDown() {
        LeaderElection<?> election = running;
        if (election != null) {
            election.stepDown();
        }
    }

    /** Joins the election: a thread of its own campaigns until {@link #stop()}. */
    @Override
    public void start() {
        synchronized (lifecycle) {
            if (running == null) {
                running = candidate.start();
            }
        }
    }

    /**
     * Steps down if this instance leads, and leaves the election: the revoked event is published and
     * the lease released before it returns (waiting at most the TTL for the election's thread).
     */
    @Override
    public void stop() {
        synchronized (lifecycle) {
            LeaderElection<?> election = running;
            if (election != null) {
                election.close();
                running = null;
            }
        }
    }

    @Override
    public boolean isRunning() {
        return running != null;
    }

    @Override
    public String toString() {
        return "QuorumlockLeadership[" + election + ", holder " + holder + (isLeader() ? ", leading" : "")
                + (isRunning() ? "" : ", stopped") + "]";
    }

    /** The election's listener: the term kept, and the events published, on the election's thread. */
    private final class Listener implements LeaderElection.Listener<Lease> {
        @Override
        public void elected(LeaderElection.Term<? extends Lease> term) {
            current = term;
            events.publishEvent(new LeaderElectedEvent(QuorumlockLeadership.this, term.fencingToken()));
        }

        @Override
        public void revoked(LeaderElection.Term<? extends Lease> term, Optional<LeaseLostException> cause) {
            if (current == term) {
                current = null;
            }
            events.publishEvent(new LeaderRevokedEvent(QuorumlockLeadership.this, term.fencingToken(), cause));
        }
    }
}
