package io.quorumlock;

import io.quorumlock.LeaderElection.Term;
import io.quorumlock.internal.CriticalSections;
import io.quorumlock.internal.Ticker;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One candidate's campaign in a {@link LeaderElection}, run on the candidate's thread: it acquires
 * the election's lock, holds the term while the lease lasts, steps down at the term's end, leaves
 * the role to the others for a while, and campaigns again, until the election is closed.
 */
final class Campaign<L extends Lease> implements Runnable {

    /** The election's logger: what the campaign logs is the election's. */
    private static final Logger log = LoggerFactory.getLogger(LeaderElection.class);

    /** How long one campaign waits for the lock before it asks again (each wait is woken by releases). */
    private static final Duration CAMPAIGN_WAIT = Duration.ofMinutes(1);

    /**
     * How long a candidate that ended its term by choice leaves the role to the others at most,
     * when none takes it: then it campaigns again.
     */
    private static final Duration HAND_OVER_WAIT = Duration.ofSeconds(1);

    /** How often it looks meanwhile whether another candidate leads. */
    private static final Duration HAND_OVER_LOOK = Duration.ofMillis(5);

    private final LeaderElection<L> election;
    private final DistributedLock<L> lock;
    /** The lock's clock. */
    private final Ticker ticker;

    private final String name;
    private final Duration ttl;
    private final LeaderElection.Work<L> work;
    private final RetryPolicy retry;
    /** The election's: set by its close, or here when the lock is closed. */
    private final AtomicBoolean closed;

    Campaign(LeaderElection<L> election, LeaderElectionBuilder<L> settings, Ticker ticker, AtomicBoolean closed) {
        this.election = election;
        this.lock = settings.lock;
        this.ticker = ticker;
        this.name = settings.name;
        this.ttl = settings.ttl;
        this.work = settings.work;
        this.retry = settings.retry;
        this.closed = closed;
    }

    /** The candidate's thread: campaigns, leads, and campaigns again, until closed. */
    @Override
    public void run() {
        int failures = 0;
        while (!closed.get()) {
            L lease;
            try {
                lease = lock.acquire(name, ttl, CAMPAIGN_WAIT);
                failures = 0;
            } catch (LockUnavailableException e) {
                if (!e.busy()) {
                    log.warn("election '{}': cannot campaign now, trying again: {}", name, e.getMessage());
                    failures = pause(++failures);
                }
                continue;
            } catch (IllegalStateException e) {
                if (!closed.getAndSet(true)) { // the lock is closed: nothing left to campaign with
                    log.warn("election '{}': the candidate leaves the election: {}", name, e.getMessage());
                }
                break;
            } catch (RuntimeException e) {
                if (closed.get()) {
                    break;
                }
                log.warn("election '{}': the campaign failed, trying again: {}", name, e.toString());
                failures = pause(++failures);
                continue;
            }
            lead(lease);
        }
        election.stopTelling(); // after the last term's revoked
        Thread.interrupted();
    }

    /** One term: from the grant to the loss, the work's return, a step-down or the close. */
    private void lead(L lease) {
        CompletableFuture<LeaseLostException> lost;
        try {
            lost = lock.keepAlive(lease, ttl);
        } catch (RuntimeException e) {
            lease.release();
            if (closed.get()) {
                return;
            }
            log.warn("election '{}': the lease could not be kept alive, campaigning again: {}", name, e.toString());
            return;
        }
        Term<L> term = new Term<>(election, lease);
        log.info("elected leader of '{}'{}", name, LeaderElection.tokenText(term));
        CompletableFuture<Boolean> elected = election.tellElected(term);
        lost.thenAccept(term::lose); // its revoked is told after its elected
        try {
            if (!returned(elected)) { // told before anyone can see this candidate lead
                term.end(); // the listener threw: the term ends
            }
            election.leads(term);
            if (closed.get()) {
                term.end(); // closed during the grant: the term is over before it began
            }
            if (!term.ended.get()) { // else lost, stepped down or closed while the listener was told
                CriticalSections.run(lease, term.ending, () -> {
                    try {
                        work.lead(term);
                    } finally {
                        // Before run() releases the lease: revoked returns before another can be elected.
                        term.end();
                        returned(term.told);
                    }
                    return null;
                });
            }
        } catch (LeaseLostException e) {
            log.debug("election '{}': the term ended with the lease: {}", name, e.getMessage());
        } catch (InterruptedException e) {
            log.debug("election '{}': the leader's work was interrupted", name);
        } catch (Exception e) {
            log.warn("election '{}': the leader's work failed; stepping down and campaigning again", name, e);
        } finally {
            term.end();
            returned(term.told); // the listener hears revoked before another candidate can be elected
            Thread.interrupted(); // an interrupt meant for the work or the close: the release runs whole
            lease.release();
        }
        if (!closed.get()) {
            leaveTheRole();
        }
    }

    /**
     * After a term ended, by choice or by a loss: waits until another candidate leads, {@link #HAND_OVER_WAIT} at
     * most (the retry's first delay, if longer), so that a waiting candidate takes the role even when
     * it hears the release late (a busy machine, a slow link). A lock without a queue (Redis, a
     * database) would otherwise give it straight back to this one. Where the role is taken at once
     * (ZooKeeper and etcd queue their waiters), this candidate campaigns again at once, behind the
     * new leader.
     */
    private void leaveTheRole() {
        long start = ticker.nanos();
        long most = Math.max(retry.minDelay().toNanos(), HAND_OVER_WAIT.toNanos());
        while (!closed.get() && ticker.nanos() - start < most) {
            try {
                if (lock.holder(name).isPresent()) {
                    return;
                }
            } catch (QuorumlockException e) {
                log.debug("election '{}': cannot tell who leads after stepping down: {}", name, e.getMessage());
            } catch (RuntimeException e) {
                return; // the lock is closed, or cannot tell: the campaign goes on, and meets it
            }
            sleep(HAND_OVER_LOOK);
        }
    }

    /**
     * Waits until a call of the listener returned, even when interrupted (the flag stays set): true
     * if it returned normally.
     */
    private static boolean returned(CompletableFuture<?> call) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return !Boolean.FALSE.equals(call.get());
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    return false;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private int pause(int failures) {
        sleep(retry.delayAfter(failures));
        return failures;
    }

    private static void sleep(Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the close: the campaign ends
        }
    }
}
