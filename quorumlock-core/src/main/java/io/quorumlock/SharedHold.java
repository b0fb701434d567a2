package io.quorumlock;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * This process's hold on one resource of one lock object, shared by every {@link
 * DistributedReentrantLock} made for that resource by that lock ({@link DistributedLock#asLock}):
 * a thread that holds the resource through one of them takes it again through another at once,
 * and the threads of the process queue for it on one local lock, whichever of them they use. Two
 * lock objects (two {@code Redlock}s, as two processes have) are two owners, as before.
 *
 * <p>It is kept while a thread holds the resource or waits for it, and forgotten when the last of
 * them is done ({@link #enter}, {@link #leave}), so that a process that locks many names keeps
 * none of them after.
 */
final class SharedHold<L extends Lease> {

    /** The holds in use, by lock object (by identity) and resource. */
    private static final ConcurrentHashMap<Key, SharedHold<?>> HOLDS = new ConcurrentHashMap<>();

    /** The threads of this process queue here first; its holder's hold count is the reentrancy. */
    final ReentrantLock local = new ReentrantLock();

    /** The current hold's lease: set by the holder after the grant, cleared by its last unlock. */
    volatile Hold<L> hold;

    private final Key key;

    /**
     * The threads that wait for the resource plus the holds not ended: changed only in {@link
     * #HOLDS}' compute of {@link #key}, which is atomic.
     */
    private int users;

    /**
     * A lease held, its notice of loss (for a fenced lease, its doubt: work stops there), its loss
     * (for a fenced lease, only the loss itself: a doubt may pass) and its revocation.
     */
    record Hold<L extends Lease>(
            L lease,
            CompletableFuture<LeaseLostException> notice,
            CompletableFuture<LeaseLostException> lost,
            CompletableFuture<LeaseLostException> revoked) {

        /**
         * The loss of the lease, if it was lost or is not valid now. A doubt that passed (a fenced
         * lease valid again once its connection came back) is no loss.
         */
        Optional<LeaseLostException> loss(String resource) {
            LeaseLostException told = revoked.getNow(null);
            if (told == null) {
                told = lost.getNow(null);
            }
            if (told == null && !lease.isValid()) {
                LeaseLostException doubt = notice.getNow(null);
                told = doubt != null
                        ? doubt
                        : new LeaseLostException(
                                resource,
                                "the lease ended while the lock was held (its validity ran out, or it was released)",
                                null);
            }
            return Optional.ofNullable(told);
        }
    }

    private SharedHold(Key key) {
        this.key = key;
    }

    /**
     * The hold of {@code resource} on {@code lock}, for a thread about to wait for it or take it
     * again: each call is matched by one {@link #leave()}, when the thread gives up or its hold
     * ends.
     */
    @SuppressWarnings("unchecked")
    static <L extends Lease> SharedHold<L> enter(DistributedLock<L> lock, String resource) {
        return (SharedHold<L>) HOLDS.compute(new Key(lock, resource), (key, shared) -> {
            SharedHold<?> used = shared == null ? new SharedHold<>(key) : shared;
            used.users++;
            return used;
        });
    }

    /** The hold of {@code resource} on {@code lock} if a thread holds it or waits for it, else null. */
    @SuppressWarnings("unchecked")
    static <L extends Lease> SharedHold<L> find(DistributedLock<L> lock, String resource) {
        return (SharedHold<L>) HOLDS.get(new Key(lock, resource));
    }

    /** Ends one {@link #enter}: forgets the hold once no thread holds it or waits for it. */
    void leave() {
        HOLDS.computeIfPresent(key, (k, shared) -> shared == this && --users == 0 ? null : shared);
    }

    /** A lock object, compared by identity, and a resource. */
    private static final class Key {
        private final DistributedLock<?> lock;
        private final String resource;

        Key(DistributedLock<?> lock, String resource) {
            this.lock = lock;
            this.resource = resource;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Key key && key.lock == lock && key.resource.equals(resource);
        }

        @Override
        public int hashCode() {
            return 31 * System.identityHashCode(lock) + resource.hashCode();
        }
    }
}
