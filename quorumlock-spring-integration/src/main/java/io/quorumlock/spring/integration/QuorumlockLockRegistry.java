package io.quorumlock.spring.integration;

import io.quorumlock.DistributedLock;
import io.quorumlock.DistributedReentrantLock;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.Lease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration {@code LockRegistry} over any quorumlock lock: {@code Redlock}, {@code
 * ZooKeeperLock}, {@code EtcdLock} or {@code JdbcLock}. Each key is a resource ({@code prefix +
 * key}), and {@link #obtain} gives its {@link DistributedReentrantLock}: a {@code
 * java.util.concurrent.locks.Lock}, reentrant per thread, whose lease is kept alive while held
 * (with Spring Integration 7, also its {@code DistributedLock}: {@code lock(Duration ttl)} and {@code
 * tryLock(Duration waitTime, Duration ttl)} take a lease of that TTL; with 6.5, which has no such
 * interface, the same lock without it);
 * the same object for a key until it is {@linkplain #expireUnusedOlderThan expired}. So it serves
 * {@code LockRegistryLeaderInitiator}, the aggregator and the other components that take a {@code
 * LockRegistry}.
 *
 * <p>What a lock guarantees is its backend's: a Redis lock gives no fencing token, and is
 * exclusive only while its timing assumptions hold; the fenced backends give each hold a fencing
 * token ({@code lock.lease()}) for the storage to check.
 *
 * <p>Renewal: the leases keep themselves alive, so no renewal scheduler is needed ({@link
 * #setRenewalTaskScheduler} is ignored); {@link #renewLock} extends the current thread's lease at
 * once. Expiry: {@link #expireUnusedOlderThan} forgets the locks no thread holds and none obtained
 * for that long. {@link #close()} (a Spring bean's destroy method) completes the holders' notice
 * of loss first, gives them the lock's notice to unlock, then releases the leases still held, so
 * that another instance takes over at once rather than after the TTL; it does not close the lock
 * it was built on.
 *
 * @param <L> the kind of lease of the lock
 */
public final class QuorumlockLockRegistry<L extends Lease>
        implements ExpirableLockRegistry<DistributedReentrantLock<L>>,
                RenewableLockRegistry<DistributedReentrantLock<L>>,
                AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(QuorumlockLockRegistry.class);

    private final DistributedLock<L> lock;
    private final String prefix;
    private final Duration ttl;
    private final Map<String, Entry<L>> locks = new ConcurrentHashMap<>();

    /** A lock of the registry and when it was last obtained ({@code System.currentTimeMillis()}). */
    private static final class Entry<L extends Lease> {
        final DistributedReentrantLock<L> lock;
        volatile long obtained = System.currentTimeMillis();

        Entry(DistributedReentrantLock<L> lock) {
            this.lock = lock;
        }
    }

    /**
     * Locks with leases of {@code ttl} on {@code lock}, each key its own resource name.
     *
     * @throws IllegalArgumentException if the TTL is unusable with this lock
     */
    public QuorumlockLockRegistry(DistributedLock<L> lock, Duration ttl) {
        this(lock, "", ttl);
    }

    /**
     * Locks with leases of {@code ttl} on {@code lock}, the resource of a key being {@code prefix +
     * key} (such as {@code "orders:"}), to keep the registry's resources apart from others.
     *
     * @throws IllegalArgumentException if the TTL is unusable with this lock
     */
    public QuorumlockLockRegistry(DistributedLock<L> lock, String prefix, Duration ttl) {
        this.lock = Objects.requireNonNull(lock, "lock");
        this.prefix = Objects.requireNonNull(prefix, "prefix");
        this.ttl = Objects.requireNonNull(ttl, "ttl");
        lock.lossNotice(ttl); // checks the TTL now
    }

    /**
     * The lock of {@code lockKey}: the same object for the same key, so that the threads of this
     * process that use it queue locally before the lock service.
     *
     * @param lockKey a {@link String}
     * @throws IllegalArgumentException if the key is not a non-empty String
     */
    @Override
    public DistributedReentrantLock<L> obtain(Object lockKey) {
        if (!(lockKey instanceof String key) || key.isEmpty()) {
            throw new IllegalSettingException(
                    "lockKey",
                    "a QuorumlockLockRegistry's lock key must be a non-empty String, the name of the resource"
                            + " after the prefix, was "
                            + (lockKey == null ? "null" : lockKey.getClass().getName()));
        }
        Entry<L> entry = locks.computeIfAbsent(key, k -> new Entry<>(RegistryLocks.of(lock, prefix + k, ttl)));
        entry.obtained = System.currentTimeMillis();
        return entry.lock;
    }

    /**
     * Forgets the locks that no thread of this process holds and that were last obtained more
     * than {@code age} milliseconds ago; a lock obtained again later is a new object, which shares
     * the hold of the old one (both are {@code asLock}s of one resource on one lock): a thread that
     * obtained a lock before and takes it after its expiry queues with the new object's users.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.currentTimeMillis();
        locks.entrySet()
                .removeIf(e ->
                        now - e.getValue().obtained > age && !e.getValue().lock.isLocked());
    }

    /**
     * Extends the current thread's lease on {@code lockKey} to the registry's TTL from now.
     *
     * @throws IllegalStateException if the current thread does not hold the lock, or the
     *     extension failed (the lease may be lost: its {@code lost()} tells)
     */
    @Override
    public void renewLock(Object lockKey) {
        renewLock(lockKey, ttl);
    }

    /**
     * Extends the current thread's lease on {@code lockKey} to {@code ttl} from now; the lease is
     * then kept alive as before.
     *
     * @throws IllegalStateException if the current thread does not hold the lock, or the
     *     extension failed (the lease may be lost: its {@code lost()} tells)
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        Entry<L> entry = lockKey instanceof String key ? locks.get(key) : null;
        if (entry == null || !entry.lock.isHeldByCurrentThread()) {
            throw new IllegalStateException(
                    "the current thread does not hold the lock of '" + lockKey + "': it cannot renew it");
        }
        Lease lease = entry.lock.lease().orElseThrow();
        if (!lease.extend(ttl)) {
            throw new IllegalStateException("could not renew the lock of '" + lockKey + "' (resource '"
                    + entry.lock.resource() + "'): the lock service did not extend its lease");
        }
    }

    /**
     * Takes the locks of this registry away from the threads that hold them, telling them first:
     * each holder's notice of loss ({@link DistributedReentrantLock#lost()}) completes at once, and
     * its lock's {@code isLocked()} turns false. A holder that unlocks within the lock's notice
     * ({@link DistributedLock#lossNotice}) releases its lease itself; after that notice the
     * registry releases the leases still held, so that another instance takes over at once rather
     * than after the TTL. Either way the holder's last unlock throws {@code LeaseLostException}.
     * Forgets every lock; the lock service itself stays open. Idempotent.
     */
    @Override
    public void close() {
        List<L> told = new ArrayList<>();
        for (Entry<L> entry : locks.values()) {
            entry.lock.revoke("the lock registry was closed").ifPresent(told::add);
        }
        long end = System.nanoTime() + lock.lossNotice(ttl).toNanos();
        for (L lease : told) {
            while (lease.isValid() && System.nanoTime() - end < 0) {
                try {
                    TimeUnit.MILLISECONDS.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            if (lease.isValid()) {
                log.warn("'{}' still held at close, its holder told: its lease is released", lease.resource());
                lease.release();
            }
        }
        locks.clear();
    }

    @Override
    public String toString() {
        return "QuorumlockLockRegistry[prefix '" + prefix + "', ttl " + ttl + ", " + locks.size() + " locks, on " + lock
                + "]";
    }
}
