package io.quorumlock.internal;

import io.quorumlock.LockListener;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a lock of this library tells its {@link LockListener}: times in nanoseconds in, {@link
 * Duration}s out, nothing built when the listener is {@link LockListener#NONE}, and a listener
 * that throws logged once at WARN and otherwise ignored.
 *
 * <p>For the locks of this library; applications implement {@link LockListener} instead.
 */
public final class LockEvents {

    private static final Logger log = LoggerFactory.getLogger(LockEvents.class);

    private final String backend;
    private final LockListener listener;
    private final boolean on;
    private final AtomicBoolean warned = new AtomicBoolean();

    private LockEvents(String backend, LockListener listener) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.on = listener != LockListener.NONE;
    }

    /** The events of one lock of {@code backend} ({@code "redis"}, {@code "zookeeper"}, {@code "etcd"}). */
    public static LockEvents of(String backend, LockListener listener) {
        return new LockEvents(backend, listener);
    }

    /** Whether a listener hears: callers read the clock for an event only if so. */
    public boolean on() {
        return on;
    }

    /** The listener, {@link LockListener#NONE} if none was set. */
    public LockListener listener() {
        return listener;
    }

    /** The backend's name, as the listener hears it. */
    public String backend() {
        return backend;
    }

    /** An acquire granted the lock with {@code votes} of {@code nodes}. */
    public void acquired(String resource, long tookNanos, int votes, int nodes) {
        if (on) {
            try {
                listener.acquired(backend, resource, Duration.ofNanos(tookNanos), votes, nodes);
            } catch (RuntimeException e) {
                failed("acquired", e);
            }
        }
    }

    /** An acquire gave up: the lock is held ({@code busy}), or could not be had for another reason. */
    public void refused(String resource, long tookNanos, boolean busy) {
        if (on) {
            try {
                if (busy) {
                    listener.busy(backend, resource, Duration.ofNanos(tookNanos));
                } else {
                    listener.unavailable(backend, resource, Duration.ofNanos(tookNanos));
                }
            } catch (RuntimeException e) {
                failed(busy ? "busy" : "unavailable", e);
            }
        }
    }

    /** An acquire ended in {@code error}. */
    public void error(String resource, long tookNanos, RuntimeException error) {
        if (on) {
            try {
                listener.error(backend, resource, Duration.ofNanos(tookNanos), error);
            } catch (RuntimeException e) {
                failed("error", e);
            }
        }
    }

    /** An extension round ended, {@code held} or not. */
    public void extended(String resource, long tookNanos, boolean held) {
        if (on) {
            try {
                listener.extended(backend, resource, Duration.ofNanos(tookNanos), held);
            } catch (RuntimeException e) {
                failed("extended", e);
            }
        }
    }

    /** An extension threw {@code error}. */
    public void extensionFailed(String resource, Throwable error) {
        if (on) {
            try {
                listener.extensionFailed(backend, resource, error);
            } catch (RuntimeException e) {
                failed("extensionFailed", e);
            }
        }
    }

    /** A lease was lost. */
    public void lost(String resource, String reason) {
        if (on) {
            try {
                listener.lost(backend, resource, reason);
            } catch (RuntimeException e) {
                failed("lost", e);
            }
        }
    }

    /** A lease was released, {@code heldNanos} after its grant. */
    public void released(String resource, long heldNanos) {
        if (on) {
            try {
                listener.released(backend, resource, Duration.ofNanos(Math.max(0, heldNanos)));
            } catch (RuntimeException e) {
                failed("released", e);
            }
        }
    }

    private void failed(String event, RuntimeException e) {
        if (warned.compareAndSet(false, true)) {
            log.warn(
                    "lock listener {} threw on '{}' of the {} lock; the lock goes on, and further failures of this"
                            + " listener are logged at DEBUG only",
                    listener,
                    event,
                    backend,
                    e);
        } else {
            log.debug("lock listener {} threw on '{}'", listener, event, e);
        }
    }

    @Override
    public String toString() {
        return "LockEvents[" + backend + ", " + listener + "]";
    }
}
