package io.quorumlock;

import java.time.Duration;

/**
 * A lock held on one resource for a bounded time.
 *
 * <p>A lease is only a promise about time: it is valid until its validity runs out on this
 * process's monotonic clock, unless it is extended. A process that pauses (garbage collection,
 * page faults, a migrated VM) can wake up after its lease ran out and still believe it holds
 * the lock. Where two holders at once would corrupt data, protect the data itself with a fencing
 * token checked by the storage.
 *
 * <p>Leases are {@link AutoCloseable}: try-with-resources releases them. Release is idempotent.
 */
public interface Lease extends AutoCloseable {

    /** The name of the locked resource. */
    String resource();

    /**
     * How long the lock was guaranteed when it was granted or last renewed: the TTL minus the time
     * the round took and an allowance for clock drift. Always shorter than the TTL.
     */
    Duration validity();

    /**
     * The validity left now, measured on the monotonic clock; {@link Duration#ZERO} once it has
     * run out or the lease was released.
     */
    Duration remaining();

    /** True while the lease has validity left and was neither released nor lost. */
    boolean isValid();

    /**
     * Asks the lock service to hold the lease for a new TTL counted from now, in one round on its
     * servers, after any round of this lease under way. Returns true if the service held it; the
     * lease is then valid for that TTL from the round's start, less the drift allowance. Returns
     * false if it did not: the lease then ends no later than it did, and no later than the new TTL
     * from the call if the request may have reached a server that did not answer in time (such a
     * server may have applied it); a request that reached no server changes nothing. A lease that
     * is no longer {@linkplain #isValid() valid} (lost, or its validity ran out) stays so:
     * extending it returns false and sends nothing. Where the service cannot change a lease's
     * length (a ZooKeeper session), the backend's lease says what extending means.
     *
     * @throws IllegalArgumentException if the TTL is not positive or too short for the lock's timeouts
     * @throws IllegalStateException if the lease was released
     */
    boolean extend(Duration ttl);

    /**
     * Releases the lock on its servers, only where they still hold it for this lease, after any
     * round of this lease under way; the lease then renews no more. Returns once the service is
     * known to be free of this lease, so that another client can acquire at once, or its servers'
     * timeout has passed; what is still owed (a slow Redis node's delete) finishes in the
     * background. Idempotent: calling it again does nothing.
     */
    void release();

    /** Same as {@link #release()}. */
    @Override
    default void close() {
        release();
    }
}
