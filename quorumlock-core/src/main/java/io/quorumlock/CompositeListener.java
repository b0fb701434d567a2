package io.quorumlock;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * The listener of {@link LockListener#composite}: each call goes to every listener, in order; the
 * first exception is thrown again once all were called, for the lock to log.
 */
final class CompositeListener implements LockListener {

    private final List<LockListener> listeners;

    CompositeListener(List<LockListener> listeners) {
        this.listeners = listeners;
    }

    private void each(Consumer<LockListener> call) {
        RuntimeException first = null;
        for (LockListener listener : listeners) {
            try {
                call.accept(listener);
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public void acquired(String backend, String resource, Duration took, int votes, int nodes) {
        each(l -> l.acquired(backend, resource, took, votes, nodes));
    }

    @Override
    public void busy(String backend, String resource, Duration took) {
        each(l -> l.busy(backend, resource, took));
    }

    @Override
    public void unavailable(String backend, String resource, Duration took) {
        each(l -> l.unavailable(backend, resource, took));
    }

    @Override
    public void error(String backend, String resource, Duration took, RuntimeException error) {
        each(l -> l.error(backend, resource, took, error));
    }

    @Override
    public void extended(String backend, String resource, Duration took, boolean held) {
        each(l -> l.extended(backend, resource, took, held));
    }

    @Override
    public void extensionFailed(String backend, String resource, Throwable error) {
        each(l -> l.extensionFailed(backend, resource, error));
    }

    @Override
    public void lost(String backend, String resource, String reason) {
        each(l -> l.lost(backend, resource, reason));
    }

    @Override
    public void released(String backend, String resource, Duration held) {
        each(l -> l.released(backend, resource, held));
    }

    @Override
    public String toString() {
        return "LockListener.composite" + listeners;
    }
}
