package io.quorumlock;

import java.util.Objects;

/**
 * Runs work under a fenced lease that reports its own loss: the {@code withLock} of the fenced
 * backends. On loss, the thread running the work is interrupted and the run ends with {@link
 * LeaseLostException}.
 */
public final class CriticalSections {

    private CriticalSections() {}

    /**
     * Runs {@code work} while {@code lease} holds, then releases the lease.
     *
     * @throws LeaseLostException if the lease was lost before the work ended (the work's own
     *     exception, if any, is attached as suppressed)
     * @throws X what the work throws, when the lease held throughout
     */
    public static <T, X extends Exception> T run(FencedLease lease, CriticalSection<T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        Thread worker = Thread.currentThread();
        Object guard = new Object();
        boolean[] running = {true};
        lease.lost().thenRun(() -> {
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
            LeaseLostException lost = finish(lease, guard, running);
            if (lost != null) {
                lost.addSuppressed(failure);
                throw lost;
            }
            throw failure;
        }
        LeaseLostException lost = finish(lease, guard, running);
        if (lost != null) {
            throw lost;
        }
        return result;
    }

    /** Stops interrupting, releases, and returns the loss if there was one (clearing its interrupt). */
    private static LeaseLostException finish(FencedLease lease, Object guard, boolean[] running) {
        synchronized (guard) {
            running[0] = false;
        }
        LeaseLostException lost = lease.lost().getNow(null);
        if (lost == null && !lease.isValid()) {
            lost = new LeaseLostException(lease.resource(), "its validity ran out before the work ended", null);
        }
        if (lost != null) {
            Thread.interrupted();
        }
        lease.release();
        return lost;
    }
}
