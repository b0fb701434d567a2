package io.quorumlock;

import io.quorumlock.SharedHold.Hold;
import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.Ticker;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One resource of a {@link DistributedLock} as a {@link Lock}, for code written against {@code
 * java.util.concurrent} (and Spring Integration's {@code LockRegistry}): made by {@link
 * DistributedLock#asLock(String, Duration)}.
 *
 * <p><b>As {@link ReentrantLock}.</b> {@link #lock()} waits until it holds the lock, is not
 * interruptible, and keeps the thread's interrupt status; {@link #lockInterruptibly()} throws
 * {@link InterruptedException} if the thread is interrupted on entry or while it waits; {@link
 * #tryLock()} makes one attempt; {@link #tryLock(long, TimeUnit)} waits up to the time given (a
 * time of zero or less makes one attempt) and is interruptible. The lock is reentrant per thread
 * and resource: a thread that holds the resource takes it again at once, with no call to the
 * servers, through this object or any other that the same lock object made for the same resource
 * ({@code asLock("counter", ttl)} twice), and only its last {@link #unlock()} releases the lease.
 * {@link #unlock()} by a thread that does not hold it throws {@link IllegalMonitorStateException}.
 * {@link #newCondition()} is not supported: a condition would need the servers to wake a waiter in
 * another process.
 *
 * <p><b>Two levels.</b> The threads of this process that lock the resource through the adapters
 * of one lock object queue on a local {@link ReentrantLock} first, with no network traffic between
 * them; the one at the head then takes the distributed lock, waiting for other processes. Adapters
 * made by two lock objects (two {@code Redlock}s for the same nodes) contend through the servers
 * instead, as separate processes do. Nothing here blocks in a {@code synchronized} block: virtual
 * threads wait without holding their carrier.
 *
 * <p><b>The lease.</b> The first hold acquires a lease of the TTL given to {@code asLock} (or to
 * {@link #lock(Duration)}) and keeps it alive with {@link DistributedLock#keepAlive} until the
 * last unlock: a fenced lease keeps itself alive, a Redis lease is extended by its lock's keep-alive. The
 * lease can still be lost (a partition, a pause longer than the TTL, the key deleted by someone
 * else). The lock does not interrupt its holder then; code that holds the lock for long reads
 * {@link #lost()}, which completes at the lease's notice of loss ({@link
 * DistributedLock#lossNotice}), before another client can be granted the lock, and stops in time.
 * An owner that ends its holds (a registry that closes) tells the holder the same way first
 * ({@link #revoke}). {@link #lease()} gives the lease of the current hold, for its fencing token
 * where the backend has one ({@link FencedLease#fencingToken()}): Redis gives none, so a section
 * under a Redis lock is exclusive only as long as the timing assumptions hold.
 *
 * <p><b>After a loss.</b> The last {@link #unlock()} of a hold whose lease was lost (or is not
 * valid at that moment) ends the hold, so the lock can be taken again, and then throws {@link
 * LeaseLostException}: the section it closed may have run beside another holder's. A thread that
 * holds the lock and takes it again after the loss gets {@link LeaseLostException} too, and its
 * hold count stays as it was. A doubt is not a loss: a fenced lease that was {@linkplain
 * FencedLease#inDoubt() in doubt} (a ZooKeeper connection suspended) and is valid again once the
 * connection is back is held, taken again and released as before.
 *
 * <p><b>Failures.</b> {@link #lock()} and {@link #lockInterruptibly()} keep trying while the lock
 * service is unreachable, as a wait for a busy lock; {@link #tryLock} returns false, the only
 * other answer a {@code Lock} has, and logs the evidence of the outage as a warning (a lock held
 * elsewhere is no warning). What the lock service refuses for good ({@link
 * LockConfigurationException}, a closed lock's {@link IllegalStateException}) is thrown at once,
 * and the local hold is undone.
 *
 * @param <L> the kind of lease of the lock
 */
public class DistributedReentrantLock<L extends Lease> implements Lock {

    private static final Logger log = LoggerFactory.getLogger(DistributedReentrantLock.class);

    /**
     * The longest single {@code acquire} of an endless wait: {@link #lock()} makes one after
     * another, each from the start of the backend's queue.
     */
    private static final Duration SLICE = Duration.ofMinutes(1);

    private final DistributedLock<L> lock;
    /** The lock's clock. */
    private final Ticker ticker;

    private final String resource;
    private final Duration ttl;

    /** How a thread takes the local lock: true if it did, false if its wait ran out. */
    @FunctionalInterface
    private interface LocalTake {
        boolean take(ReentrantLock local) throws InterruptedException;
    }

    /**
     * The lock on {@code resource} of {@code lock}, its leases of {@code ttl}: what {@link
     * DistributedLock#asLock} makes. For a subclass that adds an interface (Spring Integration's
     * {@code DistributedLock}); the behaviour stays this class's, whose methods are final.
     *
     * @throws IllegalArgumentException if the resource is empty or the TTL is unusable with this lock
     */
    protected DistributedReentrantLock(DistributedLock<L> lock, String resource, Duration ttl) {
        this.lock = Objects.requireNonNull(lock, "lock");
        this.ticker = Clocked.of(lock);
        if (resource == null || resource.isEmpty()) {
            throw new IllegalSettingException(
                    "resource", "resource must not be empty: name the thing to lock, e.g. \"invoices\"");
        }
        this.resource = resource;
        this.ttl = Objects.requireNonNull(ttl, "ttl");
        lock.lossNotice(ttl); // checks the TTL against this lock, now rather than at the first lock()
    }

    /** The resource this lock locks. */
    public final String resource() {
        return resource;
    }

    /** The TTL of the leases taken by {@link #lock()}, {@link #lockInterruptibly()} and {@link #tryLock}. */
    public final Duration ttl() {
        return ttl;
    }

    /**
     * Waits until the lock is held, uninterruptibly; an interrupt meanwhile is kept in the
     * thread's interrupt status.
     *
     * @throws LeaseLostException if the thread already held the lock and its lease was lost
     */
    @Override
    public final void lock() {
        lock(ttl);
    }

    /**
     * As {@link #lock()}, with a lease of {@code ttl} if this call takes the lease (a thread that
     * already holds the lock keeps its lease).
     */
    public final void lock(Duration ttl) {
        try {
            take(
                    local -> {
                        local.lock();
                        return true;
                    },
                    -1,
                    false,
                    ttl);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait was interrupted", e);
        }
    }

    /**
     * Waits until the lock is held or the thread is interrupted.
     *
     * @throws InterruptedException if the thread was interrupted on entry or while waiting (its
     *     interrupt status is cleared)
     */
    @Override
    public final void lockInterruptibly() throws InterruptedException {
        take(
                local -> {
                    local.lockInterruptibly();
                    return true;
                },
                -1,
                true,
                ttl);
    }

    /**
     * One attempt: takes the lock if no thread of this process holds it and the lock service
     * grants it now.
     */
    @Override
    public final boolean tryLock() {
        try {
            return take(ReentrantLock::tryLock, 0, false, ttl);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible attempt was interrupted", e);
        }
    }

    /**
     * Waits up to {@code time} for the lock, first for the threads of this process ahead, then
     * for the lock service.
     *
     * @return true if the lock is held; false if the time ran out
     * @throws InterruptedException if the thread was interrupted on entry or while waiting
     */
    @Override
    public final boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(Duration.ofNanos(unit.toNanos(time)), ttl);
    }

    /**
     * As {@link #tryLock(long, TimeUnit)}, with a lease of {@code ttl} if this call takes the lease.
     */
    public final boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        long waitNanos = waitTime.toNanos();
        return take(local -> local.tryLock(waitNanos, TimeUnit.NANOSECONDS), Math.max(0, waitNanos), true, ttl);
    }

    /**
     * Ends one hold of the current thread; the last releases the lease.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold this lock
     * @throws LeaseLostException after the last hold ended, if the lease was lost or ran out
     *     while it was held: the section may not have been exclusive
     */
    @Override
    public final void unlock() {
        SharedHold<L> shared = heldHere();
        if (shared.local.getHoldCount() > 1) {
            shared.local.unlock();
            shared.leave();
            return;
        }
        Hold<L> ending = shared.hold;
        LeaseLostException loss;
        try {
            loss = ending.loss(resource).orElse(null);
            ending.lease().release(); // isLocked() still tells of the hold's loss meanwhile
        } finally {
            shared.hold = null;
            shared.local.unlock();
            shared.leave();
        }
        if (loss != null) {
            throw loss;
        }
    }

    /**
     * Not supported: a distributed lock has no way to signal a waiter in another process.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public final Condition newCondition() {
        throw new UnsupportedOperationException("a DistributedReentrantLock has no conditions: '" + resource
                + "' is locked across processes, and a condition would need the lock service to signal them");
    }

    /** Whether the current thread holds this lock (through this object or another of the resource). */
    public final boolean isHeldByCurrentThread() {
        SharedHold<L> shared = SharedHold.find(lock, resource);
        return shared != null && shared.local.isHeldByCurrentThread();
    }

    /** How many holds of this lock the current thread has not ended; 0 if it does not hold it. */
    public final int getHoldCount() {
        SharedHold<L> shared = SharedHold.find(lock, resource);
        return shared == null ? 0 : shared.local.getHoldCount();
    }

    /**
     * Whether a thread of this process holds this lock (through any adapter of the resource made
     * by this lock object), or is being granted it; false once the hold's lease was lost or is not
     * valid, or the hold was {@linkplain #revoke revoked}, even before its holder unlocks: the lock
     * may then go to another client. A fenced lease in doubt that is valid again is held.
     */
    public final boolean isLocked() {
        SharedHold<L> shared = SharedHold.find(lock, resource);
        if (shared == null) {
            return false;
        }
        Hold<L> current = shared.hold;
        return shared.local.isLocked()
                && (current == null || current.loss(resource).isEmpty());
    }

    /**
     * Takes the lock away from its holder, whichever thread of this process holds it, for an owner
     * that ends its holds (a registry that closes): completes the hold's notice of loss ({@link
     * #lost()}) now with a {@link LeaseLostException} that says {@code why}, as a lost lease does.
     * The lease stays held, so the holder can stop before another client is granted the lock; its
     * last {@link #unlock()} releases the lease and throws that exception, as after a loss. The
     * caller releases the returned lease if the holder has not unlocked within the lock's notice
     * ({@link DistributedLock#lossNotice}).
     *
     * @return the lease of the hold told, or empty if no thread of this process holds the lock
     */
    public final Optional<L> revoke(String why) {
        Hold<L> current = current();
        if (current == null) {
            return Optional.empty();
        }
        LeaseLostException revoked = new LeaseLostException(resource, why, null);
        current.revoked().complete(revoked);
        current.notice().complete(revoked);
        return Optional.of(current.lease());
    }

    /**
     * The lease of the current hold, whichever thread of this process holds the lock; empty while
     * no thread does (or the holder is still being granted it).
     */
    public final Optional<L> lease() {
        Hold<L> current = current();
        return current == null ? Optional.empty() : Optional.of(current.lease());
    }

    /**
     * The notice of loss of the current thread's hold: completes, with the evidence, when its
     * lease is lost, with the lock's {@linkplain DistributedLock#lossNotice notice} left before
     * another client can be granted it, or when the hold is {@linkplain #revoke revoked}; never if
     * the hold ends first. Work under the lock stops when it completes. For a fenced lease it
     * completes at the first {@linkplain FencedLease#inDoubt() doubt}, which may pass: {@link
     * #unlock()} then tells whether the lease was lost.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold this lock
     */
    public final CompletableFuture<LeaseLostException> lost() {
        return heldHere().hold.notice().copy();
    }

    @Override
    public final String toString() {
        Hold<L> current = current();
        return "DistributedReentrantLock['" + resource + "', "
                + (current == null ? "not held in this process" : "held, lease " + current.lease()) + "]";
    }

    /** The hold of this process on the resource, if a thread holds it now, else null. */
    private Hold<L> current() {
        SharedHold<L> shared = SharedHold.find(lock, resource);
        return shared == null ? null : shared.hold;
    }

    /**
     * The shared hold of the resource, which the current thread holds.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold it
     */
    private SharedHold<L> heldHere() {
        SharedHold<L> shared = SharedHold.find(lock, resource);
        if (shared == null || !shared.local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("'" + resource + "' is not locked by this thread");
        }
        return shared;
    }

    /**
     * Takes the local lock of the resource's {@link SharedHold} with {@code how}; then, if this
     * is the thread's first hold, the lease, waiting up to what is left of {@code waitNanos}
     * (forever if negative, one attempt if zero), or, if it takes the lock again, checks the
     * lease. The thread counts among the hold's users until it gives up, or until its hold ends in
     * {@link #unlock()}; the local hold is undone unless the lock is held at the end.
     *
     * @return true if held; false if the wait ran out
     */
    private boolean take(LocalTake how, long waitNanos, boolean interruptible, Duration leaseTtl)
            throws InterruptedException {
        SharedHold<L> shared = SharedHold.enter(lock, resource);
        boolean locally = false;
        boolean held = false;
        try {
            long start = ticker.nanos();
            locally = how.take(shared.local);
            if (!locally) {
                return false;
            }
            if (shared.local.getHoldCount() > 1) {
                Optional<LeaseLostException> loss = shared.hold.loss(resource);
                if (loss.isPresent()) {
                    throw new LeaseLostException(
                            resource, "this thread holds the lock, but its lease was lost", loss.get());
                }
                held = true;
                return true;
            }
            Objects.requireNonNull(leaseTtl, "ttl");
            L lease = acquire(
                    waitNanos < 0 ? -1 : Math.max(0, waitNanos - (ticker.nanos() - start)), interruptible, leaseTtl);
            if (lease == null) {
                return false;
            }
            CompletableFuture<LeaseLostException> notice;
            try {
                notice = lock.keepAlive(lease, leaseTtl).copy(); // a copy, which revoke() may complete
            } catch (RuntimeException e) {
                lease.release();
                throw e;
            }
            shared.hold = new Hold<>(
                    lease,
                    notice,
                    lease instanceof FencedLease fenced ? fenced.lost() : notice,
                    new CompletableFuture<>());
            held = true;
            return true;
        } finally {
            if (!held) {
                if (locally) {
                    shared.local.unlock();
                }
                shared.leave();
            }
        }
    }

    /** The lease from the lock service, or null if the wait ran out. */
    private L acquire(long waitNanos, boolean interruptible, Duration leaseTtl) throws InterruptedException {
        long end = ticker.nanos() + Math.max(0, waitNanos);
        boolean interrupted = false;
        try {
            while (true) {
                if (interruptible && Thread.interrupted()) {
                    throw new InterruptedException("interrupted while waiting for '" + resource + "'");
                }
                interrupted |= Thread.interrupted(); // an uninterruptible wait waits on, and says so at the end
                try {
                    if (waitNanos == 0) {
                        return lock.tryAcquire(resource, leaseTtl).orElse(null);
                    }
                    long left = waitNanos < 0 ? SLICE.toNanos() : Math.min(end - ticker.nanos(), SLICE.toNanos());
                    return lock.acquire(resource, leaseTtl, Duration.ofNanos(Math.max(0, left)));
                } catch (LockUnavailableException e) {
                    if (Thread.currentThread().isInterrupted()) {
                        continue; // seen at the top of the loop
                    }
                    if (waitNanos >= 0 && end - ticker.nanos() <= 0) {
                        if (!e.busy()) {
                            log.warn("could not lock '{}': {}", resource, e.getMessage());
                        }
                        return null;
                    }
                    if (!e.busy()) {
                        log.warn("still waiting for '{}': {}", resource, e.getMessage());
                    }
                } catch (QuorumlockException e) {
                    if (e instanceof LockConfigurationException
                            || !Thread.currentThread().isInterrupted()) {
                        throw e;
                    }
                    // interrupted: seen at the top of the loop
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
