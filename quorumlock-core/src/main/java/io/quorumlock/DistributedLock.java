package io.quorumlock;

import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.WaitsWithoutThread;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A lock service: one per set of servers, shared by the threads of a process and closed on
 * shutdown. {@code Redlock} grants plain {@link Lease}s; the fenced backends grant {@link
 * FencedLease}s.
 *
 * @param <L> the kind of lease it grants
 */
public interface DistributedLock<L extends Lease> extends AutoCloseable {

    /**
     * One attempt to lock {@code resource} for {@code ttl}, without waiting for a holder.
     *
     * @return the lease, or empty if another owner holds the lock
     * @throws LockUnavailableException if the lock service could not decide, such as with fewer
     *     than a quorum of nodes reachable, or the service down or not answering in time: an
     *     outage, not a lost race, with what each server answered ({@link
     *     LockUnavailableException#lastAttempt()})
     */
    Optional<L> tryAcquire(String resource, Duration ttl);

    /**
     * Locks {@code resource} for {@code ttl}, waiting up to {@code maxWait}.
     *
     * @throws LockUnavailableException if it could not be acquired in time
     */
    L acquire(String resource, Duration ttl, Duration maxWait);

    /**
     * {@link #acquire}'s asynchronous twin: returns at once a future of the lease, which completes
     * once it is granted, within {@code maxWait} (and the lock's overrun), or exceptionally with
     * what {@code acquire} throws ({@link LockUnavailableException} when the wait passed). No thread
     * waits per call: the asynchronous acquires of one resource of this lock object form a line in
     * this process, in the order they were made, whose first takes the lease (woken by the release as
     * every waiter of this lock is), then the next. {@code Redlock} waits for it with no thread; the
     * other locks with one thread per line (virtual on Java 24 and later). An acquire whose
     * wait passes while others of this process are ahead of it ends then, refused. Cancelling the
     * future gives the wait up; a lease granted after the cancel is released. The future completes
     * on a thread of this library: chain work that blocks onto an executor of your own.
     *
     * @throws IllegalArgumentException at the call, if the resource is empty, the TTL unusable with
     *     this lock or {@code maxWait} negative
     */
    default CompletableFuture<L> acquireAsync(String resource, Duration ttl, Duration maxWait) {
        Settings.resource(resource, "orders:42");
        lossNotice(ttl); // checks the TTL now
        Settings.maxWait(maxWait);
        if (this instanceof WaitsWithoutThread<?> threadless) {
            @SuppressWarnings("unchecked")
            WaitsWithoutThread<L> lock = (WaitsWithoutThread<L>) threadless;
            return AsyncAcquires.withoutThread(
                    this,
                    "lock",
                    resource,
                    maxWait,
                    Clocked.of(this),
                    wait -> lock.acquireWithoutThread(resource, ttl, wait),
                    Lease::release);
        }
        return AsyncAcquires.acquire(
                this,
                "lock",
                resource,
                maxWait,
                Clocked.of(this),
                wait -> acquire(resource, ttl, wait),
                Lease::release);
    }

    /**
     * {@link #tryAcquire}'s asynchronous twin: one attempt, on a thread of this library, whose
     * future completes with the lease, with empty if another owner holds the lock, or exceptionally
     * as {@code tryAcquire} throws.
     */
    default CompletableFuture<Optional<L>> tryAcquireAsync(String resource, Duration ttl) {
        Settings.resource(resource, "orders:42");
        lossNotice(ttl);
        return AsyncAcquires.once(() -> tryAcquire(resource, ttl));
    }

    /**
     * Runs {@code work} while holding the lock, keeping the lease alive, and releases it after.
     * If the lease is lost meanwhile, the thread running the work is interrupted and the call
     * ends with {@link LeaseLostException}, whatever the work returned.
     *
     * @throws LockUnavailableException if the lock could not be acquired within {@code maxWait}
     */
    default <T, X extends Exception> T withLock(
            String resource, Duration ttl, Duration maxWait, CriticalSection<T, X> work) throws X {
        java.util.Objects.requireNonNull(work, "work");
        return withLease(resource, ttl, maxWait, lease -> work.run());
    }

    /**
     * As {@link #withLock(String, Duration, Duration, CriticalSection)}, for work that returns
     * nothing: {@code redlock.withLock("rebuild:cache", ttl, wait, () -> rebuildCache())}.
     *
     * @throws LockUnavailableException if the lock could not be acquired within {@code maxWait}
     */
    default <X extends Exception> void withLock(
            String resource, Duration ttl, Duration maxWait, CriticalRunnable<X> work) throws X {
        java.util.Objects.requireNonNull(work, "work");
        withLease(resource, ttl, maxWait, lease -> {
            work.run();
            return null;
        });
    }

    /**
     * Runs {@code work} while holding the lock if it is free now: one attempt, as {@link
     * #tryAcquire}, and the lease kept alive and released as {@link #withLock} does. For a job that
     * every instance runs on a schedule and one of them must win: an instance that finds the lock
     * held by another owner skips the run, saying so at DEBUG only.
     *
     * @return true if the work ran; false if another owner holds the lock
     * @throws LockUnavailableException if the lock service could not decide, such as with fewer
     *     than a quorum of nodes reachable: an outage, not a lost race (what the work throws is
     *     thrown as it is)
     */
    default <X extends Exception> boolean tryWithLock(String resource, Duration ttl, CriticalRunnable<X> work)
            throws X {
        return TryWithLock.run(this, resource, ttl, work);
    }

    /**
     * As {@link #withLock}, and hands the work its lease: a fenced write passes {@code
     * lease.fencingToken()} to the storage, such as {@code fence.check(tx, lease)}.
     *
     * @throws LockUnavailableException if the lock could not be acquired within {@code maxWait}
     */
    <T, X extends Exception> T withLease(String resource, Duration ttl, Duration maxWait, LeasedSection<L, T, X> work)
            throws X;

    /**
     * As {@link #withLease}, for work that returns nothing: {@code locks.runWithLease("sku:42", ttl,
     * wait, lease -> fence.check(tx, lease))}. (A second {@code withLease} would make every
     * one-argument lambda ambiguous, hence the name.)
     *
     * @throws LockUnavailableException if the lock could not be acquired within {@code maxWait}
     */
    default <X extends Exception> void runWithLease(
            String resource, Duration ttl, Duration maxWait, LeasedRunnable<L, X> work) throws X {
        java.util.Objects.requireNonNull(work, "work");
        withLease(resource, ttl, maxWait, lease -> {
            work.run(lease);
            return null;
        });
    }

    /**
     * Keeps {@code lease} alive until it is released, for work that is not one Java call (a role
     * held, a child process, a {@code java.util.concurrent.locks.Lock} held between calls), and
     * tells when it must stop: the future completes, with the evidence, at the lease's notice of
     * loss ({@link #lossNotice}), before another client can be granted the lock; it never
     * completes if the lease is released first. The fenced leases keep themselves alive and give
     * {@link FencedLease#inDoubt()}; {@code Redlock} starts its keep-alive, which extends the lease
     * to {@code ttl} as its validity runs low.
     *
     * @param lease a lease granted by this lock, not yet released
     * @param ttl the TTL of each extension, usually the TTL of the grant
     * @throws IllegalArgumentException if the lease was not granted by a lock of this kind, or the
     *     TTL is unusable with this lock
     * @throws IllegalStateException if the lease was released or is already kept alive
     */
    default CompletableFuture<LeaseLostException> keepAlive(L lease, Duration ttl) {
        java.util.Objects.requireNonNull(lease, "lease");
        if (lease instanceof FencedLease fenced) {
            lossNotice(ttl); // checks the TTL
            if (!fenced.isValid() && !fenced.inDoubt().isDone()) {
                throw new IllegalStateException("the lease on '" + lease.resource() + "' was released");
            }
            return fenced.inDoubt().copy();
        }
        throw new IllegalSettingException(
                "lease", "a lease without a fencing token must be kept alive by the lock that granted it: " + lease);
    }

    /**
     * {@code resource} as a {@link java.util.concurrent.locks.Lock}, reentrant per thread as {@link
     * java.util.concurrent.locks.ReentrantLock} is, for code written against {@code
     * java.util.concurrent} or a framework that takes a {@code Lock}: {@code Lock lock =
     * locks.asLock("invoices", Duration.ofSeconds(30))}. Each first hold takes a lease of {@code
     * ttl} and keeps it alive ({@link #keepAlive}) until the last unlock; see {@link
     * DistributedReentrantLock} for what happens when a lease is lost. The adapters that this lock
     * makes for one resource share its hold in this process: a thread that holds the resource
     * through one takes it again through another, and the threads of this process queue locally
     * first, whichever adapter they use.
     *
     * @throws IllegalArgumentException if the resource or the TTL is unusable with this lock
     */
    default DistributedReentrantLock<L> asLock(String resource, Duration ttl) {
        return new DistributedReentrantLock<>(this, resource, ttl);
    }

    /**
     * The notice of loss for leases of {@code ttl}: how long before another client can be granted
     * the lock a lease kept alive by this lock is given up ({@link FencedLease#inDoubt()}, or the
     * keep-alive's loss for a TTL lease), so that {@code withLock} can interrupt the work and a
     * supervisor can stop a command in time. Work must stop within it.
     *
     * @throws IllegalArgumentException if the TTL is unusable with this lock
     */
    Duration lossNotice(Duration ttl);

    /**
     * Who holds {@code resource} now, as the lock's servers tell it: for an observer (a dashboard,
     * a health check, a tool such as {@code quorumlock check}) that never takes the lock. It is
     * read-only: it never takes, extends or releases the lock, and a thread waiting for it is not
     * disturbed. The answer can be out of date as soon as it is returned: never use it to decide
     * that a write is safe (hold a lease, and fence the write). It returns within the lock's usual
     * timeouts, whatever the servers do.
     *
     * <p>What it reads on each backend: {@code Redlock}, the resource's key on every node at once,
     * and the owner whose key is on a quorum of them (a single node is a quorum of one), without
     * a fencing token (a key of another type, such as another library's hash, is an owner without
     * a name); ZooKeeper, the first lock node of the resource's queue; etcd, the lock key
     * with the lowest create revision under the resource's lock name, as etcd's lock service
     * orders them; JDBC, the resource's row if its lease has not ended by the database's clock.
     * On the fenced backends the token is the current grant's, as {@link
     * FencedLease#fencingToken()} gives it to the holder.
     *
     * @return the holder, or empty if the resource is free (on Redis: no owner holds its key on a
     *     quorum of nodes)
     * @throws QuorumlockException if the servers could not tell, naming the resource and what each
     *     server answered (on Redis, too few nodes answered to rule out a holder; ZooKeeper, etcd
     *     or the database not reached or not answering in time), or the thread was interrupted
     * @throws IllegalArgumentException if the resource is not a valid resource name for this lock
     * @throws IllegalStateException if this lock is closed
     */
    Optional<LockHolder> holder(String resource);

    @Override
    void close();
}
