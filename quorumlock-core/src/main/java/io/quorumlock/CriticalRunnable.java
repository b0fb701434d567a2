package io.quorumlock;

/**
 * Work that runs while a lock is held and returns nothing: {@code redlock.withLock("rebuild:cache",
 * ttl, wait, () -> rebuildCache())} with a {@code void rebuildCache()}. Otherwise as {@link
 * CriticalSection}.
 *
 * @param <X> the checked exception the work may throw
 */
@FunctionalInterface
public interface CriticalRunnable<X extends Exception> {

    /** Runs the work; should end soon after the thread is interrupted. */
    void run() throws X;
}
