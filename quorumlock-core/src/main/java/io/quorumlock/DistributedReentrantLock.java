package io.quorumlock;

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
 * time of zero or less makes one attempt) and is interruptible. The lock is reentrant per thread:
 * a thread that holds it takes it again at once, with no call to the servers, and only its last
 * {@link #unlock()} releases the lease. {@link #unlock()} by a thread that does not hold it throws
 * {@link IllegalMonitorStateException}. {@link #newCondition()} is not supported: a condition would
 * need the servers to wake a waiter in another process.
 *
 * <p><b>Two levels.</b> The threads of this process that use this object queue on a local {@link
 * ReentrantLock} first, with no network traffic between them; the one at the head then takes the
 * distributed lock, waiting for other processes. Threads that make an adapter each for the same
 * resource contend through the servers instead, as separate processes do. Nothing here blocks in
 * a {@code synchronized} block: virtual threads wait without holding their carrier.
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
public final class DistributedReentrantLock<L extends Lease> implements Lock {

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
    private final ReentrantLock local = new ReentrantLock();
    /** The current hold's lease: set by the holder after the grant, cleared by its last unlock. */
    private volatile Hold<L> hold;

    /**
     * A lease held, its notice of loss (for a fenced lease, its doubt: work stops there) and its
     * loss (for a fenced lease, only the loss itself: a doubt may pass).
     */
    private record Hold<L>(
            L lease,
            CompletableFuture<LeaseLostException> notice,
            CompletableFuture<LeaseLostException> lost,
            CompletableFuture<LeaseLostException> revoked) {}

    DistributedReentrantLock(DistributedLock<L> lock, String resource, Duration ttl) {
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
    public String resource() {
        return resource;
    }

    /** The TTL of the leases taken by {@link #lock()}, {@link #lockInterruptibly()} and {@link #tryLock}. */
    public Duration ttl() {
        return ttl;
    }

    /**
     * Waits until the lock is held, uninterruptibly; an interrupt meanwhile is kept in the
     * thread's interrupt status.
     *
     * @throws LeaseLostException if the thread already held the lock and its lease was lost
     */
    @Override
    public void lock() {
        lock(ttl);
    }

    /**
     * As {@link #lock()}, with a lease of {@code ttl} if this call takes the lease (a thread that
     * already holds the lock keeps its lease).
     */
    public void lock(Duration ttl) {
        local.lock();
        try {
            hold(-1, false, ttl);
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
    public void lockInterruptibly() throws InterruptedException {
        local.lockInterruptibly();
        hold(-1, true, ttl);
    }

    /**
     * One attempt: takes the lock if no thread of this process holds it and the lock service
     * grants it now.
     */
    @Override
    public boolean tryLock() {
        if (!local.tryLock()) {
            return false;
        }
        try {
            return hold(0, false, ttl);
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
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(Duration.ofNanos(unit.toNanos(time)), ttl);
    }

    /**
     * As {@link #tryLock(long, TimeUnit)}, with a lease of {@code ttl} if this call takes the lease.
     */
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        long start = ticker.nanos();
        if (!local.tryLock(waitTime.toNanos(), TimeUnit.NANOSECONDS)) {
            return false;
        }
        return hold(Math.max(0, waitTime.toNanos() - (ticker.nanos() - start)), true, ttl);
    }

    /**
     * Ends one hold of the current thread; the last releases the lease.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold this lock
     * @throws LeaseLostException after the last hold ended, if the lease was lost or ran out
     *     while it was held: the section may not have been exclusive
     */
    @Override
    public void unlock() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("'" + resource + "' is not locked by this thread");
        }
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        Hold<L> ending = hold;
        LeaseLostException loss;
        try {
            loss = loss(ending).orElse(null);
            ending.lease().release(); // isLocked() still tells of the hold's loss meanwhile
        } finally {
            hold = null;
            local.unlock();
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
    public Condition newCondition() {
        throw new UnsupportedOperationException("a DistributedReentrantLock has no conditions: '" + resource
                + "' is locked across processes, and a condition would need the lock service to signal them");
    }

    /** Whether the current thread holds this lock. */
    public boolean isHeldByCurrentThread() {
        return local.isHeldByCurrentThread();
    }

    /** How many holds of this lock the current thread has not ended; 0 if it does not hold it. */
    public int getHoldCount() {
        return local.getHoldCount();
    }

    /**
     * Whether a thread of this process holds this lock (through this object), or is being granted
     * it; false once the hold's lease was lost or is not valid, or the hold was {@linkplain #revoke
     * revoked}, even before its holder unlocks: the lock may then go to another client. A fenced
     * lease in doubt that is valid again is held.
     */
    public boolean isLocked() {
        Hold<L> current = hold;
        return local.isLocked() && (current == null || loss(current).isEmpty());
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
    public Optional<L> revoke(String why) {
        Hold<L> current = hold;
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
    public Optional<L> lease() {
        Hold<L> current = hold;
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
    public CompletableFuture<LeaseLostException> lost() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("'" + resource + "' is not locked by this thread");
        }
        return hold.notice().copy();
    }

    @Override
    public String toString() {
        Hold<L> current = hold;
        return "DistributedReentrantLock['" + resource + "', "
                + (current == null ? "not held in this process" : "held, lease " + current.lease()) + "]";
    }

    /**
     * With the local lock just taken: takes the lease if this is the thread's first hold (or
     * checks the lease of a hold it takes again), waiting up to {@code waitNanos} (forever if
     * negative, one attempt if zero). Undoes the local hold unless the lock is held at the end.
     *
     * @return true if held; false if the wait ran out
     */
    private boolean hold(long waitNanos, boolean interruptible, Duration leaseTtl) throws InterruptedException {
        boolean held = false;
        try {
            if (local.getHoldCount() > 1) {
                Optional<LeaseLostException> loss = loss(hold);
                if (loss.isPresent()) {
                    throw new LeaseLostException(
                            resource, "this thread holds the lock, but its lease was lost", loss.get());
                }
                held = true;
                return true;
            }
            Objects.requireNonNull(leaseTtl, "ttl");
            L lease = acquire(waitNanos, interruptible, leaseTtl);
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
            hold = new Hold<>(
                    lease,
                    notice,
                    lease instanceof FencedLease fenced ? fenced.lost() : notice,
                    new CompletableFuture<>());
            held = true;
            return true;
        } finally {
            if (!held) {
                local.unlock();
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

    /**
     * The loss of {@code held}'s lease, if it was lost or is not valid now. A doubt that passed (a
     * fenced lease valid again once its connection came back) is no loss.
     */
    private Optional<LeaseLostException> loss(Hold<L> held) {
        LeaseLostException revoked = held.revoked().getNow(null);
        if (revoked != null) {
            return Optional.of(revoked);
        }
        LeaseLostException lost = held.lost().getNow(null);
        if (lost != null) {
            return Optional.of(lost);
        }
        if (!held.lease().isValid()) {
            LeaseLostException doubt = held.notice().getNow(null);
            return Optional.of(
                    doubt != null
                            ? doubt
                            : new LeaseLostException(
                                    resource,
                                    "the lease ended while the lock was held (its validity ran out, or it was"
                                            + " released)",
                                    null));
        }
        return Optional.empty();
    }
}
