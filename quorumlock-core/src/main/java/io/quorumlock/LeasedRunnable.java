package io.quorumlock;

/**
 * Work that runs while a lock is held, needs its lease and returns nothing: {@code
 * locks.runWithLease("sku:42", ttl, wait, lease -> sell(lease.fencingToken()))}. Otherwise as
 * {@link LeasedSection}.
 *
 * @param <L> the kind of lease
 * @param <X> the checked exception the work may throw
 */
@FunctionalInterface
public interface LeasedRunnable<L extends Lease, X extends Exception> {

    /** Runs the work under {@code lease}; should end soon after the thread is interrupted. */
    void run(L lease) throws X;
}
