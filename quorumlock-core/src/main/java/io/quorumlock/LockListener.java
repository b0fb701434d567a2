package io.quorumlock;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Hears what the locks of this library do: grants, refusals, extensions, losses and releases,
 * for metrics, logs or traces. Every method has a no-op default, so a listener implements only
 * what it needs. Each call names the backend ({@code "redis"}, {@code "zookeeper"} or {@code
 * "etcd"}) and the resource, so one listener can serve several locks.
 *
 * <p>Calls come on the thread that did the work (the caller's, or a lock's own thread for
 * extensions and losses) and should return quickly. A listener that throws does not break the
 * lock: the exception is logged once per lock at WARN and otherwise ignored. Set one with the
 * {@code listener(...)} method of a lock's builder; without one, the lock builds no event at all.
 */
public interface LockListener {

    /** The listener that does nothing: the default of every lock, at no cost. */
    LockListener NONE = new LockListener() {
        @Override
        public String toString() {
            return "LockListener.NONE";
        }
    };

    /**
     * An acquire granted the lock.
     *
     * @param took how long the acquire took, retries and waits included
     * @param votes the yes votes counted: of {@code nodes} Redis nodes, or 1 of 1 for a consensus service
     * @param nodes how many nodes voted
     */
    default void acquired(String backend, String resource, Duration took, int votes, int nodes) {}

    /** An acquire gave up because the lock is held by another owner. */
    default void busy(String backend, String resource, Duration took) {}

    /** An acquire gave up for another reason than a holder: no quorum, no ensemble, no answer in time. */
    default void unavailable(String backend, String resource, Duration took) {}

    /** An acquire ended in an exception (a misconfigured node, missing permissions, an interrupt). */
    default void error(String backend, String resource, Duration took, RuntimeException error) {}

    /**
     * A renewal of a lease ended: an automatic one while the lease is kept alive, or a caller's
     * {@link Lease#extend}, on every backend.
     *
     * @param held whether the round extended the lease; one that did not may be retried
     */
    default void extended(String backend, String resource, Duration took, boolean held) {}

    /** An extension threw: the lease is given up as lost (a {@link #lost} call follows). */
    default void extensionFailed(String backend, String resource, Throwable error) {}

    /** A lease was lost before its release: another owner may hold the lock now. */
    default void lost(String backend, String resource, String reason) {}

    /** A lease was released, {@code held} after it was granted. */
    default void released(String backend, String resource, Duration held) {}

    /** One listener that calls each of {@code listeners} in turn; one that throws does not stop the others. */
    static LockListener composite(LockListener... listeners) {
        List<LockListener> all = List.of(listeners);
        all.forEach(l -> Objects.requireNonNull(l, "listener"));
        return new CompositeListener(all);
    }
}
