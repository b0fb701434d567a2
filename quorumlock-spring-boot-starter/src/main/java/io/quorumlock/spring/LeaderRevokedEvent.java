package io.quorumlock.spring;

import io.quorumlock.LeaseLostException;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * This instance's term ended: at the lease's notice of loss ({@link #cause()} present), or by a
 * step-down or the context's stop ({@link #cause()} empty). Published before another instance can
 * be elected; stop what the leader does before returning.
 */
public class LeaderRevokedEvent extends LeadershipEvent {
    private static final long serialVersionUID = 1L;

    private final LeaseLostException cause;

    LeaderRevokedEvent(QuorumlockLeadership source, OptionalLong fencingToken, Optional<LeaseLostException> cause) {
        super(source, fencingToken);
        this.cause = cause.orElse(null);
    }

    /** Why the term ended, when the lease was lost (the servers unreachable, the lease expired); empty for a step-down or a stop. */
    public Optional<LeaseLostException> cause() {
        return Optional.ofNullable(cause);
    }

    @Override
    public String toString() {
        return super.toString() + (cause == null ? "" : ": " + cause.getMessage());
    }
}
