package io.quorumlock;

import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A role that one candidate of many holds at a time: the instance that runs the scheduler, drains
 * the queue or owns the partition. Each candidate joins the election named {@code name} with a lock
 * of any backend; the leader is the holder of that lock's lease on {@code name}, and a {@link Term}
 * lasts as long as the lease.
 *
 * <pre>{@code
 * try (LeaderElection<FencedLease> election = LeaderElection.builder(lock, "billing-scheduler")
 *         .listener(new LeaderElection.Listener<>() { ... })
 *         .start()) {
 *     ...
 * }
 * }</pre>
 *
 * <p>The leadership is kept alive by the lock's own machinery ({@link DistributedLock#keepAlive})
 * and ends at the lease's notice of loss: the term is revoked and the leader's {@link Work} is
 * interrupted with {@link DistributedLock#lossNotice} left, before another candidate can be
 * elected, as {@code withLock} does. A candidate campaigns again after a loss, after its work
 * returned and after {@link #stepDown}, once another candidate took the role or a second passed
 * with none taking it (a candidate that lost its lease leaves the role to those that waited for
 * it), until the election is closed.
 *
 * <p>The {@link Listener} runs on a thread of the election's own, one call at a time and in order:
 * never on a thread of the lock (its keep-alive, its server client), so a slow listener holds up
 * this election only, never the renewal of another lease.
 *
 * <p>On a fenced backend (ZooKeeper, etcd, a database) each term carries the lease's fencing
 * token, strictly larger than every earlier term's of this election: hand it to the storage with
 * every write the leader makes, and a paused leader that wakes after its term ended is refused.
 * On Redis a term has no token: two leaders at once are unlikely but not excluded (a pause longer
 * than the notice of loss, a clock jump), so use it where a second leader for a moment costs only
 * work done twice.
 *
 * @param <L> the kind of lease the lock grants
 */
public final class LeaderElection<L extends Lease> implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaderElection.class);

    /** Numbers the candidates' threads. */
    private static final java.util.concurrent.atomic.AtomicInteger CANDIDATES =
            new java.util.concurrent.atomic.AtomicInteger();

    private final DistributedLock<L> lock;
    /** The lock's clock. */
    private final Ticker ticker;

    private final String name;
    private final Duration ttl;
    private final Listener<? super L> listener;
    /** The candidate's thread, running its {@link Campaign}. */
    private final Thread campaign;
    /** Calls the listener, one call at a time, in the order they were asked for. */
    private final ExecutorService telling;
    /** The thread of {@link #telling}, once it started. */
    private volatile Thread teller;

    private final AtomicBoolean closed = new AtomicBoolean();

    /** The term this candidate leads now; null if it does not. Guarded by this object. */
    private Term<L> current;

    LeaderElection(LeaderElectionBuilder<L> builder) {
        this.lock = builder.lock;
        this.ticker = Clocked.of(builder.lock);
        this.name = builder.name;
        this.ttl = builder.ttl;
        this.listener = builder.listener;
        String thread = "quorumlock-election-" + name + "-" + CANDIDATES.incrementAndGet();
        this.campaign = new Thread(new Campaign<>(this, builder, ticker, closed), thread);
        this.campaign.setDaemon(true);
        this.telling = Executors.newSingleThreadExecutor(task -> {
            Thread t = new Thread(task, thread + "-listener");
            t.setDaemon(true);
            teller = t;
            return t;
        });
    }

    /**
     * A candidate for the election {@code name} (the resource locked with {@code lock}).
     *
     * @throws IllegalSettingException if the lock is null or the name empty
     */
    public static <L extends Lease> LeaderElectionBuilder<L> builder(DistributedLock<L> lock, String name) {
        return new LeaderElectionBuilder<>(
                Settings.notNull("lock", lock, "pass the lock the candidates share, such as a Redlock or a JdbcLock"),
                Settings.resource(name, "billing-scheduler"));
    }

    /** The election's name: the resource its leaders lock. */
    public String name() {
        return name;
    }

    /** Whether this candidate leads now: a term whose lease has not reached its notice of loss. */
    public boolean isLeader() {
        return term().isPresent();
    }

    /** The term this candidate leads now, if it leads. */
    public synchronized Optional<Term<L>> term() {
        return current != null && current.isCurrent() ? Optional.of(current) : Optional.empty();
    }

    /**
     * Who leads now, as the servers tell: the leader's holder name and, on a fenced backend, its
     * term's fencing token; empty if nobody leads. Read-only ({@link DistributedLock#holder}): anyone
     * can observe an election with the lock alone, without being a candidate.
     *
     * @throws QuorumlockException if the servers cannot tell (too few answer)
     */
    public Optional<LockHolder> leader() {
        ensureOpen();
        return lock.holder(name);
    }

    /**
     * Waits up to {@code maxWait} until this candidate leads.
     *
     * @return the term, or empty if {@code maxWait} passed first
     * @throws IllegalStateException if the election is closed
     * @throws QuorumlockException if the thread is interrupted while waiting (the flag stays set)
     */
    public synchronized Optional<Term<L>> awaitLeadership(Duration maxWait) {
        long end = ticker.nanos() + Settings.maxWait(maxWait).toNanos();
        while (true) {
            ensureOpen();
            Optional<Term<L>> term = term();
            long left = end - ticker.nanos();
            if (term.isPresent() || left <= 0) {
                return term;
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new QuorumlockException("interrupted while waiting to lead '" + name + "'", e);
            }
        }
    }

    /**
     * Ends this candidate's term, if it leads: its work is interrupted, the lease released, the term
     * revoked. It campaigns again once another candidate leads (it looks every few milliseconds),
     * or after a second (the retry's first delay, if longer) if none takes the role: a waiting
     * candidate gets the role also when it hears the release late, or polls (MariaDB, Redis without
     * pub/sub) up to a second apart.
     */
    public void stepDown() {
        Term<L> term;
        synchronized (this) {
            term = current;
        }
        if (term != null) {
            term.end();
        }
    }

    /**
     * Steps down if this candidate leads and stops campaigning, waiting up to the TTL for the term to
     * end. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        stepDown();
        campaign.interrupt();
        Thread self = Thread.currentThread();
        if (self != campaign && self != teller) { // closed by the work or the listener: it ends on return
            try {
                campaign.join(ttl.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (this) {
            notifyAll();
        }
    }

    @Override
    public String toString() {
        return "LeaderElection[" + name + (isLeader() ? ", leading" : "") + (closed.get() ? ", closed" : "") + "]";
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("the election '" + name + "' is closed");
        }
    }

    LeaderElection<L> begin() {
        campaign.start();
        return this;
    }

    /** The campaign's term begins: this candidate leads, and the threads in {@link #awaitLeadership} are woken. */
    synchronized void leads(Term<L> term) {
        current = term;
        notifyAll();
    }

    /** Tells the listener that this candidate leads, for {@code term}, as {@code tell} does. */
    CompletableFuture<Boolean> tellElected(Term<L> term) {
        return tell("elected", () -> listener.elected(term));
    }

    /** The campaign ended: the listener's thread ends once it told what it was asked before. */
    void stopTelling() {
        telling.shutdown();
    }

    /** Ends a term once: no longer current, and the listener's revoked asked for. */
    private void ended(Term<L> term, Optional<LeaseLostException> cause) {
        synchronized (this) {
            if (current == term) {
                current = null;
            }
        }
        if (cause.isPresent()) {
            log.warn("leadership of '{}' revoked: {}", name, cause.get().getMessage());
        } else {
            log.info("stepped down as leader of '{}'", name);
        }
        tell("revoked", () -> listener.revoked(term, cause)).whenComplete((ok, e) -> term.told.complete(null));
    }

    /**
     * Calls the listener on the election's listener thread, after every call asked for before.
     *
     * @return completes when the call returned: with false if it threw, or if the election had
     *     ended and no call was made
     */
    private CompletableFuture<Boolean> tell(String what, Runnable call) {
        try {
            return CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            call.run();
                            return true;
                        } catch (RuntimeException e) {
                            log.warn("election '{}': the listener failed on {}", name, what, e);
                            return false;
                        }
                    },
                    telling);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.completedFuture(false);
        }
    }

    static String tokenText(Term<?> term) {
        OptionalLong token = term.fencingToken();
        return token.isPresent() ? " (fencing token " + token.getAsLong() + ")" : "";
    }

    /**
     * One candidate's time as leader: from its grant to its lease's notice of loss, its step-down or
     * the close.
     *
     * @param <L> the kind of lease the lock grants
     */
    public static final class Term<L extends Lease> {
        private final LeaderElection<L> election;
        private final L lease;
        /** Completes when the term ends, for whatever reason: what interrupts the work. */
        final CompletableFuture<LeaseLostException> ending = new CompletableFuture<>();

        private final CountDownLatch over = new CountDownLatch(1);
        final AtomicBoolean ended = new AtomicBoolean();
        /** Completes once the listener's revoked for this term returned. */
        final CompletableFuture<Void> told = new CompletableFuture<>();

        Term(LeaderElection<L> election, L lease) {
            this.election = election;
            this.lease = lease;
        }

        /** The election's name. */
        public String election() {
            return election.name;
        }

        /** The lease that holds the role. Released by the election when the term ends. */
        public L lease() {
            return lease;
        }

        /**
         * The term's fencing token on a fenced backend (strictly larger than every earlier term's of
         * this election); empty on Redis, whose leases carry none.
         */
        public OptionalLong fencingToken() {
            return lease instanceof FencedLease fenced ? OptionalLong.of(fenced.fencingToken()) : OptionalLong.empty();
        }

        /** Whether the term still holds: not ended, and its lease valid. */
        public boolean isCurrent() {
            return !ended.get() && lease.isValid();
        }

        /**
         * Waits until the term ends: the lease's notice of loss, a step-down or the close.
         *
         * @throws InterruptedException if the thread is interrupted while waiting
         */
        public void awaitEnd() throws InterruptedException {
            over.await();
        }

        /** Waits up to {@code maxWait} until the term ends; true if it has. */
        public boolean awaitEnd(Duration maxWait) throws InterruptedException {
            return over.await(Settings.maxWait(maxWait).toNanos(), TimeUnit.NANOSECONDS);
        }

        void lose(LeaseLostException loss) {
            finish(Optional.of(loss));
        }

        void end() {
            finish(Optional.empty());
        }

        private void finish(Optional<LeaseLostException> cause) {
            if (ended.compareAndSet(false, true)) {
                election.ended(this, cause);
                over.countDown();
                // The work stops now: with the loss as the reason, or with none for a step-down.
                ending.complete(cause.orElse(null));
            }
        }

        @Override
        public String toString() {
            return "Term[" + election.name + tokenText(this) + (isCurrent() ? "" : ", ended") + "]";
        }
    }

    /**
     * Told when this candidate is elected and when its term ends, on the election's listener thread
     * (named after the election, ending in {@code -listener}), never on a thread of the lock. The
     * calls come one at a time, in order: {@code elected(t1)}, {@code revoked(t1)}, {@code
     * elected(t2)}, and so on. A term's {@code revoked} comes only after its {@code elected}
     * returned, right after it if the term ended meanwhile, so that a listener's belief that it
     * leads ends with {@link LeaderElection#isLeader()}. Return soon: the leader's work starts once
     * {@code elected} returned, and the lease is released, and the candidate campaigns again, only
     * once {@code revoked} returned.
     */
    public interface Listener<L extends Lease> {
        /**
         * This candidate leads, for {@code term}. If it throws, the term ends: {@code revoked}
         * follows and the candidate campaigns again.
         */
        default void elected(Term<? extends L> term) {}

        /**
         * {@code term} ended: at the lease's notice of loss ({@code cause} present; another candidate
         * may be elected once the lease has run out), or by a step-down, the work's return or the
         * close ({@code cause} empty). Called before another candidate can be elected, while this
         * process runs and the listener is not still in this term's {@code elected}: a paused
         * process is told when it wakes, which the fencing token covers.
         */
        default void revoked(Term<? extends L> term, Optional<LeaseLostException> cause) {}
    }

    /**
     * What the leader does while it leads, on the election's thread; interrupted when the term ends.
     * Returning (or throwing) ends the term, and the candidate campaigns again. Without one, a leader
     * leads until its lease's loss, {@link #stepDown} or the close.
     */
    @FunctionalInterface
    public interface Work<L extends Lease> {
        void lead(Term<L> term) throws Exception;
    }
}
