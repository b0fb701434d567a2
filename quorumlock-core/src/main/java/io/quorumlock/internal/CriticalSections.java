package io.quorumlock.internal;

import io.quorumlock.CriticalSection;
import io.quorumlock.FencedLease;
import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Runs work under a fenced lease that reports its own loss: the {@code withLock} of the fenced
 * backends. On loss, the thread running the work is interrupted and the run ends with {@link
 * LeaseLostException}.
 */
public final class CriticalSections {

    private CriticalSections() {}

    /**
     * Runs {@code work} while {@code lease} holds, then releases the lease. The work is interrupted
     * as soon as the lease is {@linkplain FencedLease#inDoubt() in doubt}, not only once it is lost.
     *
     * @throws LeaseLostException if the lease was lost before the work ended (the work's own
     *     exception, if any, is attached as suppressed)
     * @throws X what the work throws, when the lease held throughout
     */
    public static <T, X extends Exception> T run(FencedLease lease, CriticalSection<T, X> work) throws X {
        return run(lease, lease.inDoubt(), work);
    }

    /**
     * Runs {@code work} while {@code lease} holds, then releases the lease; {@code lost} completes
     * when the lease is known lost (for a TTL lease: when its keep-alive could not extend it).
     */
    public static <T, X extends Exception> T run(
            Lease lease, CompletableFuture<LeaseLostException> lost, CriticalSection<T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        Thread worker = Thread.currentThread();
        Object guard = new Object();
        boolean[] running = {true};
        lost.thenRun(() -> {
            synchronized (guard) {
                if (running[0]) {
                    worker.interrupt();
                }
            }
        });
        T result;
        try {
            result = work.run();
        } catch (Throwable failure) {
            LeaseLostException loss = finish(lease, lost, guard, running);
            if (loss != null) {
                loss.addSuppressed(failure);
                throw loss;
            }
            throw failure;
        }
        LeaseLostException loss = finish(lease, lost, guard, running);
        if (loss != null) {
            throw loss;
        }
        return result;
    }

    /**
     * Stops interrupting, releases, and returns the loss if there was one. An interrupt that {@code
     * lost} caused is cleared first, so that the release's round runs whole.
     */
    private static LeaseLostException finish(
            Lease lease, CompletableFuture<LeaseLostException> lost, Object guard, boolean[] running) {
        synchronized (guard) {
            running[0] = false;
        }
        LeaseLostException loss = lost.getNow(null);
        if (loss == null && !lease.isValid()) {
            loss = new LeaseLostException(lease.resource(), "its validity ran out before the work ended", null);
        }
        if (loss != null || lost.isDone()) {
            Thread.interrupted(); // the interrupt was the end's (a loss, or an end without one): the release is not
            // cut short
        }
        lease.release();
        return loss;
    }
}
