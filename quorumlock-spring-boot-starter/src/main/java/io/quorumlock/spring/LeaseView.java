package io.quorumlock.spring;

import io.quorumlock.CriticalRunnable;
import io.quorumlock.CriticalSection;
import io.quorumlock.DistributedLock;
import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.Lease;
import io.quorumlock.LeasedRunnable;
import io.quorumlock.LeasedSection;
import io.quorumlock.LockHolder;
import io.quorumlock.internal.Clocked;
import io.quorumlock.internal.Ticker;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A fenced lock (ZooKeeper, etcd, the database) as a {@code DistributedLock<Lease>}, for the
 * injection points of that type: a {@code DistributedLock<FencedLease>} is no {@code
 * DistributedLock<Lease>} to Java's generics, nor to Spring's matching of them. Every call goes to
 * the lock, and the leases are the lock's own {@link FencedLease}s. The context closes the lock,
 * never this view.
 */
final class LeaseView implements DistributedLock<Lease>, Clocked {

    private final DistributedLock<FencedLease> lock;

    LeaseView(DistributedLock<FencedLease> lock) {
        this.lock = lock;
    }

    @Override
    public Optional<Lease> tryAcquire(String resource, Duration ttl) {
        return lock.tryAcquire(resource, ttl).map(Lease.class::cast);
    }

    @Override
    public Lease acquire(String resource, Duration ttl, Duration maxWait) {
        return lock.acquire(resource, ttl, maxWait);
    }

    @Override
    public <T, X extends Exception> T withLock(
            String resource, Duration ttl, Duration maxWait, CriticalSection<T, X> work) throws X {
        return lock.withLock(resource, ttl, maxWait, work);
    }

    @Override
    public <X extends Exception> void withLock(
            String resource, Duration ttl, Duration maxWait, CriticalRunnable<X> work) throws X {
        lock.withLock(resource, ttl, maxWait, work);
    }

    @Override
    public <X extends Exception> boolean tryWithLock(String resource, Duration ttl, CriticalRunnable<X> work) throws X {
        return lock.tryWithLock(resource, ttl, work);
    }

    @Override
    public <T, X extends Exception> T withLease(
            String resource, Duration ttl, Duration maxWait, LeasedSection<Lease, T, X> work) throws X {
        return lock.withLease(resource, ttl, maxWait, work::run);
    }

    @Override
    public <X extends Exception> void runWithLease(
            String resource, Duration ttl, Duration maxWait, LeasedRunnable<Lease, X> work) throws X {
        lock.runWithLease(resource, ttl, maxWait, work::run);
    }

    @Override
    public CompletableFuture<io.quorumlock.LeaseLostException> keepAlive(Lease lease, Duration ttl) {
        if (lease instanceof FencedLease fenced) {
            return lock.keepAlive(fenced, ttl);
        }
        throw new IllegalSettingException(
                "lease",
                "a lease of " + lock + " carries a fencing token, and this one was granted elsewhere: " + lease);
    }

    @Override
    public Duration lossNotice(Duration ttl) {
        return lock.lossNotice(ttl);
    }

    @Override
    public Optional<LockHolder> holder(String resource) {
        return lock.holder(resource);
    }

    /** Closes the lock itself, as the context does on shutdown. */
    @Override
    public void close() {
        lock.close();
    }

    @Override
    public Ticker ticker() {
        return Clocked.of(lock);
    }

    @Override
    public String toString() {
        return lock.toString();
    }
}
