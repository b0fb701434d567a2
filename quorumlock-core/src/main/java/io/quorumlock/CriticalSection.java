package io.quorumlock;

/**
 * Work that runs while a lock is held and returns a result. Like {@link
 * java.util.concurrent.Callable}, but the exception it may throw is a type parameter, so a lambda
 * that throws only unchecked exceptions needs no catch: {@code int sent =
 * redlock.withLock("job", ttl, wait, () -> report.send())} with an {@code int send()}. A {@code
 * Callable} fits as {@code callable::call}; work that returns nothing is a {@link CriticalRunnable}.
 *
 * @param <T> the result type
 * @param <X> the checked exception the work may throw
 */
@FunctionalInterface
public interface CriticalSection<T, X extends Exception> {

    /** Runs the work; should end soon after the thread is interrupted. */
    T run() throws X;
}
