package io.quorumlock;

import io.quorumlock.internal.AsyncThreads;
import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.CriticalSections;
import io.quorumlock.internal.LateGrants;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.WaitsWithoutThread;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

/**
 * Many readers or one writer across processes, on any lock of this library: readers share the
 * resource, a writer has it alone, and a writer that waits is not starved by readers that keep
 * coming.
 *
 * <pre>{@code
 * DistributedReadWriteLock<FencedLease> catalog = DistributedReadWriteLock.of(lock, "catalog", 16);
 * try (FencedLease write = catalog.acquireWrite(Duration.ofSeconds(30), Duration.ofMinutes(1))) {
 *     ... // no reader and no other writer until it is released
 * }
 * }</pre>
 *
 * <p>It is made of the lock's own leases. A reader holds one of {@code maxReaders} permits, the
 * locks on {@code name#read#1} to {@code name#read#N} (a {@link DistributedSemaphore}), then takes
 * the writer's lock on {@code name#write} for a moment and gives it back; a writer holds the lock
 * on {@code name#write}, then every permit, taken in order. A reader that finds the writer's lock
 * held (a writer writes, or waits for the readers to leave) gives its permit back and waits for that
 * lock's release before it tries again, so readers that keep coming do not starve a writer. Two
 * writers queue on {@code name#write}, as the lock's waiters do.
 *
 * <p>Both leases are on {@code name}. A write lease stands for all the leases its writer holds:
 * valid while each of them is, released together. On a fenced backend it is a {@link FencedLease}
 * whose token is that of its grant of {@code name#write}, larger for every later writer; a read
 * lease is its permit's lease, and on a fenced backend a {@link FencedLease} too, whose token is
 * that of the reader's moment on {@code name#write}, larger than every writer's before it. A fence
 * given the write leases refuses a writer paused past its lease once a later writer wrote; given the
 * read leases too (a reader that reads through the fence), also once a later reader read.
 *
 * @param <L> the kind of lease the lock grants
 */
public final class DistributedReadWriteLock<L extends Lease> {

    private final DistributedLock<L> lock;
    private final String name;
    private final String writer;
    private final DistributedSemaphore<L> readers;
    private final Ticker ticker;

    private DistributedReadWriteLock(DistributedLock<L> lock, String name, int maxReaders) {
        this.lock = Objects.requireNonNull(lock, "lock");
        this.name = Settings.resource(name, "catalog");
        Settings.requireArgument(
                maxReaders >= 1 && maxReaders <= DistributedSemaphore.MAX_PERMITS,
                "maxReaders",
                "maxReaders must be 1 to %d (a writer takes a permit of each reader), was %d",
                DistributedSemaphore.MAX_PERMITS,
                maxReaders);
        this.writer = name + "#write";
        this.readers = DistributedSemaphore.of(lock, name + "#read", maxReaders);
        this.ticker = Clocked.of(lock);
    }

    /**
     * The read-write lock {@code name} on {@code lock}, for at most {@code maxReaders} readers at
     * once; every process that shares it must give the same name and number. A writer's acquire
     * takes {@code maxReaders + 1} of the lock's leases: keep it as small as the readers need. The
     * lock stays the caller's to close.
     *
     * @throws IllegalSettingException if {@code maxReaders} is not 1 to {@value
     *     DistributedSemaphore#MAX_PERMITS} or the name is empty
     */
    public static <L extends Lease> DistributedReadWriteLock<L> of(
            DistributedLock<L> lock, String name, int maxReaders) {
        return new DistributedReadWriteLock<>(lock, name, maxReaders);
    }

    /** The lock's name. */
    public String name() {
        return name;
    }

    /** How many readers may hold it at once. */
    public int maxReaders() {
        return readers.permits();
    }

    /**
     * Takes a read lease if no writer holds or waits for the lock and a reader's permit is free.
     *
     * @return the read lease, or empty if a writer holds or waits for it, or every reader's permit is held
     * @throws PermitUnavailableException if no permit was granted and some permit's lock could not
     *     say whether it was free
     */
    public Optional<L> tryAcquireRead(Duration ttl) {
        Optional<L> permit = readers.tryAcquire(ttl);
        if (permit.isEmpty()) {
            return permit;
        }
        Optional<L> turn = writersTurn(permit.get(), ttl);
        if (turn.isEmpty()) {
            permit.get().release();
            return Optional.empty();
        }
        return Optional.of(readLease(permit.get(), turn.get()));
    }

    /**
     * Takes a read lease, waiting up to {@code maxWait} for a writer to finish and a reader's
     * permit to be free.
     *
     * @throws LockUnavailableException if none was granted in time: a {@link
     *     PermitUnavailableException} when every reader's permit stayed held, else the evidence of
     *     the writer's lock
     * @throws QuorumlockException if the thread was interrupted while waiting (the flag stays set)
     */
    public L acquireRead(Duration ttl, Duration maxWait) {
        long budget = Settings.maxWait(maxWait).toNanos();
        long start = ticker.nanos();
        for (int tries = 1; ; tries++) {
            L permit = readers.acquire(ttl, Duration.ofNanos(left(start, budget)));
            Optional<L> turn = writersTurn(permit, ttl);
            if (turn.isPresent()) {
                return readLease(permit, turn.get());
            }
            permit.release();
            long left = left(start, budget);
            if (left == 0) {
                throw writerSeen(tries, start); // the wait is over, and a writer was seen once more after it
            }
            // A writer writes or waits for the readers: wait for its release, then try again.
            lock.acquire(writer, ttl, Duration.ofNanos(left)).release();
        }
    }

    /**
     * Takes the write lease if no writer holds the lock and no reader holds a permit.
     *
     * @return the write lease, or empty if a writer or a reader holds the lock
     * @throws LockUnavailableException if one of the locks it takes could not say whether it was free
     */
    public Optional<L> tryAcquireWrite(Duration ttl) {
        Optional<L> turn = lock.tryAcquire(writer, ttl);
        if (turn.isEmpty()) {
            return Optional.empty();
        }
        List<L> held = new ArrayList<>(List.of(turn.get()));
        try {
            for (int permit = 1; permit <= readers.permits(); permit++) {
                Optional<L> lease = lock.tryAcquire(readers.permit(permit), ttl);
                if (lease.isEmpty()) {
                    LeaseGroup.of(name, held).release();
                    return Optional.empty();
                }
                held.add(lease.get());
            }
        } catch (RuntimeException e) {
            LeaseGroup.of(name, held).release();
            throw e;
        }
        return Optional.of(group(held));
    }

    /**
     * Takes the write lease, waiting up to {@code maxWait} for the writers ahead of it and then for
     * the readers to leave; readers that come meanwhile wait for it.
     *
     * @throws LockUnavailableException if it was not granted in time, with the evidence of the lock
     *     it waited for last (the writer's lock, or the permit a reader held)
     * @throws QuorumlockException if the thread was interrupted while waiting (the flag stays set)
     */
    public L acquireWrite(Duration ttl, Duration maxWait) {
        long budget = Settings.maxWait(maxWait).toNanos();
        long start = ticker.nanos();
        List<L> held = new ArrayList<>(List.of(lock.acquire(writer, ttl, maxWait)));
        try {
            for (int permit = 1; permit <= readers.permits(); permit++) {
                held.add(lock.acquire(readers.permit(permit), ttl, Duration.ofNanos(left(start, budget))));
            }
        } catch (RuntimeException e) {
            LeaseGroup.of(name, held).release();
            throw e;
        }
        return group(held);
    }

    /**
     * {@link #acquireRead}'s asynchronous twin, as {@link DistributedLock#acquireAsync} is the
     * lock's: this process's asynchronous readers of this lock form one line, served by one thread.
     */
    public CompletableFuture<L> acquireReadAsync(Duration ttl, Duration maxWait) {
        Settings.maxWait(maxWait);
        if (lock instanceof WaitsWithoutThread<?>) {
            return AsyncAcquires.withoutThread(
                    lock, "readers", name, maxWait, ticker, wait -> new Steps(wait).read(ttl), Lease::release);
        }
        return AsyncAcquires.acquire(
                lock, "readers", name, maxWait, ticker, wait -> acquireRead(ttl, wait), Lease::release);
    }

    /**
     * {@link #acquireWrite}'s asynchronous twin: this process's asynchronous writers of this lock
     * form one line, served by one thread.
     */
    public CompletableFuture<L> acquireWriteAsync(Duration ttl, Duration maxWait) {
        Settings.maxWait(maxWait);
        if (lock instanceof WaitsWithoutThread<?>) {
            return AsyncAcquires.withoutThread(
                    lock, "writers", name, maxWait, ticker, wait -> new Steps(wait).write(ttl), Lease::release);
        }
        return AsyncAcquires.acquire(
                lock, "writers", name, maxWait, ticker, wait -> acquireWrite(ttl, wait), Lease::release);
    }

    /**
     * {@link #acquireRead} and {@link #acquireWrite} on a lock that waits with no thread: the same
     * steps, each wait one of the lock's waits without a thread, the tries between them on the
     * threads the asynchronous acquires share. A cancel of the result gives the wait under way up,
     * and releases what was taken.
     */
    private final class Steps {
        private final long budget;
        private final long start = ticker.nanos();
        private final CompletableFuture<L> result = new CompletableFuture<>();
        /** The wait under way, which a cancel of the result gives up. */
        private volatile CompletableFuture<L> waiting;

        Steps(Duration maxWait) {
            this.budget = Settings.maxWait(maxWait).toNanos();
            result.whenComplete((lease, failure) -> {
                CompletableFuture<L> under = waiting;
                if (failure instanceof CancellationException && under != null) {
                    under.cancel(true);
                }
            });
        }

        @SuppressWarnings("unchecked")
        private WaitsWithoutThread<L> waits() {
            return (WaitsWithoutThread<L>) lock;
        }

        /** Runs {@code next} once {@code wait} ends, on an attempt thread; what it throws ends the result. */
        private void then(CompletableFuture<L> wait, java.util.function.BiConsumer<L, Throwable> next) {
            waiting = wait;
            if (result.isDone()) {
                wait.cancel(true);
            }
            wait.whenCompleteAsync(
                    (lease, failure) -> {
                        try {
                            next.accept(lease, failure);
                        } catch (RuntimeException | Error e) {
                            result.completeExceptionally(e);
                            if (lease != null) {
                                release(List.of(lease));
                            }
                        }
                    },
                    AsyncThreads.attempts());
        }

        /** Completes the result with {@code lease}, or releases it if the result is done already. */
        private void done(L lease) {
            LateGrants.complete(result, lease, Lease::release, name);
        }

        /** Releases {@code held}, whatever the lock says: the result is already complete. */
        private void release(List<L> held) {
            LateGrants.release(taken -> LeaseGroup.of(name, taken).release(), held, name);
        }

        CompletableFuture<L> read(Duration ttl) {
            readTry(ttl, 1);
            return result;
        }

        private void readTry(Duration ttl, int tries) {
            then(readers.acquireWithoutThread(ttl, Duration.ofNanos(left(start, budget))), (permit, failure) -> {
                if (failure != null) {
                    result.completeExceptionally(failure);
                    return;
                }
                if (result.isDone()) {
                    permit.release(); // granted as the acquire was given up
                    return;
                }
                Optional<L> turn = writersTurn(permit, ttl);
                if (turn.isPresent()) {
                    done(readLease(permit, turn.get()));
                    return;
                }
                permit.release();
                long left = left(start, budget);
                if (result.isDone()) {
                    return;
                }
                if (left == 0) {
                    result.completeExceptionally(writerSeen(tries, start));
                    return;
                }
                // A writer writes or waits for the readers: wait for its release, then try again.
                then(waits().acquireWithoutThread(writer, ttl, Duration.ofNanos(left)), (turnOver, failed) -> {
                    if (failed != null) {
                        result.completeExceptionally(failed);
                        return;
                    }
                    turnOver.release();
                    if (!result.isDone()) {
                        readTry(ttl, tries + 1);
                    }
                });
            });
        }

        CompletableFuture<L> write(Duration ttl) {
            List<L> held = new ArrayList<>();
            then(
                    waits().acquireWithoutThread(writer, ttl, Duration.ofNanos(budget)),
                    (turn, failure) -> writeNext(ttl, held, 1, turn, failure));
            return result;
        }

        /** The writer took {@code lease} (or failed); the next permit's wait, or the write lease once all are held. */
        private void writeNext(Duration ttl, List<L> held, int permit, L lease, Throwable failure) {
            if (failure != null || result.isDone()) {
                if (lease != null) {
                    held.add(lease);
                }
                result.completeExceptionally(failure != null ? failure : new CancellationException());
                release(held);
                return;
            }
            held.add(lease);
            if (permit > readers.permits()) {
                done(group(held));
                return;
            }
            CompletableFuture<L> next;
            try {
                next = waits().acquireWithoutThread(readers.permit(permit), ttl, Duration.ofNanos(left(start, budget)));
            } catch (RuntimeException | Error e) { // the lock closed meanwhile
                result.completeExceptionally(e);
                release(held);
                return;
            }
            then(next, (granted, failed) -> writeNext(ttl, held, permit + 1, granted, failed));
        }
    }

    /** The refusal of a reader, begun at {@code start}, that saw a writer once more after its wait was over. */
    private LockUnavailableException writerSeen(int tries, long start) {
        return new LockUnavailableException(
                name,
                Duration.ofNanos(ticker.nanos() - start),
                tries,
                new ServerAnswer(writer, ServerAnswer.Kind.HELD_BY_OTHER, "a writer holds or waits for it"),
                lock.holder(writer).map(LockHolder::toString));
    }

    /**
     * Runs {@code work} under a read lease acquired as {@link #acquireRead} does, kept alive, then
     * releases it; the work is interrupted when the lease is lost.
     */
    public <T, X extends Exception> T withRead(Duration ttl, Duration maxWait, LeasedSection<L, T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        return run(acquireRead(ttl, maxWait), ttl, work);
    }

    /**
     * Runs {@code work} under the write lease acquired as {@link #acquireWrite} does, kept alive,
     * then releases it; the work is interrupted when any of its leases is lost.
     */
    public <T, X extends Exception> T withWrite(Duration ttl, Duration maxWait, LeasedSection<L, T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        return run(acquireWrite(ttl, maxWait), ttl, work);
    }

    /**
     * Keeps a read or write lease of this lock alive as the lock's {@link DistributedLock#keepAlive}
     * does (a write lease: each of its leases), for work that is not a Java call.
     *
     * @return completes when the lease, or any lease of a write lease, is lost
     */
    public CompletableFuture<LeaseLostException> keepAlive(L lease, Duration ttl) {
        if (lease instanceof LeaseGroup group) {
            List<CompletableFuture<LeaseLostException>> losses = new ArrayList<>();
            for (Lease each : group.leases) {
                losses.add(keepAliveOne(each, ttl));
            }
            return LeaseGroup.first(losses);
        }
        return lock.keepAlive(lease, ttl);
    }

    @SuppressWarnings("unchecked") // every lease of a group was granted by the lock, as an L
    private CompletableFuture<LeaseLostException> keepAliveOne(Lease lease, Duration ttl) {
        return lock.keepAlive((L) lease, ttl);
    }

    @Override
    public String toString() {
        return "DistributedReadWriteLock[" + name + ", " + readers.permits() + " reader"
                + (readers.permits() == 1 ? "" : "s") + "]";
    }

    private <T, X extends Exception> T run(L lease, Duration ttl, LeasedSection<L, T, X> work) throws X {
        CompletableFuture<LeaseLostException> lost;
        try {
            lost = keepAlive(lease, ttl);
        } catch (RuntimeException e) {
            lease.release();
            throw e;
        }
        return CriticalSections.run(lease, lost, () -> work.run(lease));
    }

    /**
     * The writer's lock, taken for a moment while {@code permit} is held and given back at once:
     * empty if a writer holds it (it writes, or waits for the readers to leave). Its grant is newer
     * than every writer's before, and its token, on a fenced backend, is the read lease's.
     */
    private Optional<L> writersTurn(L permit, Duration ttl) {
        Optional<L> turn;
        try {
            turn = lock.tryAcquire(writer, ttl);
        } catch (RuntimeException e) {
            permit.release();
            throw e;
        }
        turn.ifPresent(Lease::release);
        return turn;
    }

    /**
     * The read lease on {@link #name}: the permit's lease, and on a fenced backend the token of the
     * writer's lock that {@code turn} was granted, newer than every earlier writer's: a reader that
     * reads through the fence with it makes a writer paused past its lease refused.
     */
    @SuppressWarnings("unchecked") // a group of the lock's leases, typed as they are
    private L readLease(L permit, L turn) {
        return (L)
                (turn instanceof FencedLease fenced
                        ? LeaseGroup.fencedBy(name, List.of(permit), fenced.fencingToken())
                        : LeaseGroup.of(name, List.of(permit)));
    }

    private long left(long start, long budget) {
        return Math.max(0, budget - (ticker.nanos() - start));
    }

    /**
     * The write lease: the group of the writer's leases, typed as the lock's leases are (a fenced
     * group on a fenced backend, whose locks grant {@link FencedLease}s).
     */
    @SuppressWarnings("unchecked")
    private L group(List<L> held) {
        return (L) LeaseGroup.of(name, held);
    }
}
