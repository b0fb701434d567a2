package io.quorumlock.internal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A lock whose acquire can wait for a holder with no thread: its asynchronous acquires take their
 * leases with it, and hold no thread between their attempts.
 *
 * @param <L> the kind of lease it grants
 */
public interface WaitsWithoutThread<L> {

    /**
     * As the lock's {@code acquire(resource, ttl, maxWait)}: a future that completes as it returns
     * or throws. Cancelling the future gives the wait up; a lease granted after the cancel is released.
     * The future completes on a thread that the asynchronous acquires of the process share: work
     * that blocks belongs on an executor of the caller's own ({@code thenAcceptAsync(..., executor)}).
     *
     * @throws IllegalArgumentException at the call, as {@code acquire} throws it
     */
    CompletableFuture<L> acquireWithoutThread(String resource, Duration ttl, Duration maxWait);
}
