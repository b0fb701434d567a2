package io.quorumlock.internal;

import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * What every backend's lease answers from its {@link LeaseCore} alike: its resource, validity and
 * time left, and its notices of loss and doubt, handed out as copies so that a caller who
 * completes or cancels one changes nothing in the lease. A backend's lease adds its rounds (extend,
 * release) and its evidence.
 */
public abstract class CoreLease implements Lease {

    /** The lease's state, end and notices. */
    protected final LeaseCore core;

    protected CoreLease(LeaseCore core) {
        this.core = core;
    }

    @Override
    public final String resource() {
        return core.resource();
    }

    @Override
    public Duration validity() {
        return core.validity();
    }

    @Override
    public final Duration remaining() {
        return core.remaining();
    }

    @Override
    public final boolean isValid() {
        return core.isValid();
    }

    /**
     * Completes, with the evidence, as soon as the lease is known to be lost. Never completes if
     * the lease is released first.
     */
    public final CompletableFuture<LeaseLostException> lost() {
        return core.lost().copy();
    }

    /** Completes once this holder can no longer be sure that it holds the lease (at the latest at the loss). */
    public final CompletableFuture<LeaseLostException> inDoubt() {
        return core.inDoubt().copy();
    }

    /** Whether the lease was released. */
    protected final boolean isReleased() {
        return core.state() == LeaseCore.State.RELEASED;
    }

    /** Throws what a call on a released lease throws, if this lease was released. */
    protected final void checkNotReleased() {
        if (isReleased()) {
            throw new IllegalStateException("the lease on '" + core.resource() + "' was released; acquire a new one");
        }
    }
}
