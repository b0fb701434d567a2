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
     * How long the lock was guaranteed when it was granted or last extended: the TTL minus the
     * time the grant took and an allowance for clock drift. Always shorter than the TTL.
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
     * Extends the lease to a new TTL counted from now, with the same quorum and validity rules as
     * the grant. Returns false if the extension did not reach a quorum in time; the lease then
     * keeps at most its earlier validity and will run out. With Redis it ends no later than the
     * new TTL from the call either way, since the nodes that did not answer in time may have taken
     * it. A lease that is no longer {@linkplain #isValid() valid} (lost, or its validity ran out)
     * stays so: extending it returns false and changes nothing.
     *
     * @throws IllegalArgumentException if the TTL is not positive or too short for the node timeout
     * @throws IllegalStateException if the lease was released
     */
    boolean extend(Duration ttl);

    /**
     * Releases the lock on every node, deleting the key only where it still holds this lease's
     * token. Returns once a majority of the nodes is known to be free of this lease (so another
     * client can acquire at once), or every node has answered, or the node timeout has passed; a
     * slow or frozen node's delete finishes in the background. Idempotent: calling it again does
     * nothing.
     */
    void release();

    /** Same as {@link #release()}. */
    @Override
    default void close() {
        release();
    }
}
