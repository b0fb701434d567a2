package io.quorumlock;

import io.quorumlock.internal.Settings;
import java.time.Duration;

/**
 * Sets a candidate of a {@link LeaderElection} up, from {@link LeaderElection#builder}; {@link
 * #start} joins the election.
 *
 * @param <L> the kind of lease the lock grants
 */
public final class LeaderElectionBuilder<L extends Lease> {
    final DistributedLock<L> lock;
    final String name;
    Duration ttl = Duration.ofSeconds(30);
    LeaderElection.Listener<? super L> listener = new LeaderElection.Listener<>() {};
    LeaderElection.Work<L> work = LeaderElection.Term::awaitEnd;
    RetryPolicy retry = RetryPolicy.jitteredBackoff(Duration.ofMillis(100), Duration.ofSeconds(5));

    LeaderElectionBuilder(DistributedLock<L> lock, String name) {
        this.lock = lock;
        this.name = name;
    }

    /**
     * The TTL of the leader's lease (30 s by default): a leader that dies leaves the role free
     * within it; the notice of loss is the lock's for this TTL.
     *
     * @throws IllegalArgumentException if the lock cannot use this TTL
     */
    public LeaderElectionBuilder<L> ttl(Duration ttl) {
        lock.lossNotice(Settings.ttl(ttl, " (the default is 30 s)"));
        this.ttl = ttl;
        return this;
    }

    /** Told of each term's start and end. */
    public LeaderElectionBuilder<L> listener(LeaderElection.Listener<? super L> listener) {
        this.listener = Settings.notNull("listener", listener, "pass a listener, or leave the default");
        return this;
    }

    /** What the leader does while it leads (by default: nothing, until the term ends). */
    public LeaderElectionBuilder<L> work(LeaderElection.Work<L> work) {
        this.work = Settings.notNull("work", work, "pass the leader's work, or leave the default");
        return this;
    }

    /** The pause after a campaign that failed for an outage (100 ms to 5 s, jittered, by default). */
    public LeaderElectionBuilder<L> retry(RetryPolicy retry) {
        this.retry = Settings.retry(retry);
        return this;
    }

    /** Joins the election: a thread of its own campaigns until {@link LeaderElection#close}. */
    public LeaderElection<L> start() {
        return new LeaderElection<>(this).begin();
    }
}
