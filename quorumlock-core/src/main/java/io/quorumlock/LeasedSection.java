package io.quorumlock;

/**
 * Work that runs while a lock is held and needs its lease: to hand the fencing token of a {@link
 * FencedLease} to the storage with each write, or to look at the time left. Otherwise as {@link
 * CriticalSection}.
 *
 * @param <L> the kind of lease
 * @param <T> the result type
 * @param <X> the checked exception the work may throw
 */
@FunctionalInterface
public interface LeasedSection<L extends Lease, T, X extends Exception> {

    /** Runs the work under {@code lease}; should end soon after the thread is interrupted. */
    T run(L lease) throws X;
}
