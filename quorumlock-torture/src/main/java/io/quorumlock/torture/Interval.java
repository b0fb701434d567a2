package io.quorumlock.torture;

import java.util.List;
import java.util.Optional;

/**
 * The time one client believed it held the lock: from its ACQUIRE OK to its RELEASE INVOKE or
 * LEASE_LOST, whichever came first, in wall time. A lease never released nor lost runs to the end
 * of the history. The validity is deliberately not used to cut it short: a paused client wakes up
 * still believing it holds the lock, which is exactly what the checker looks for.
 *
 * @param client the client id
 * @param grant the ACQUIRE OK event
 * @param end the RELEASE INVOKE or LEASE_LOST event, empty if the lease ran to the end of the history
 * @param startMillis the wall time of the grant
 * @param endMillis the wall time of the end event, or of the last event of the history
 * @param acceptedWrites the completions of the writes invoked inside the interval and accepted
 */
public record Interval(
        String client, Event grant, Optional<Event> end, long startMillis, long endMillis, List<Event> acceptedWrites) {

    /** Copies the list of writes. */
    public Interval {
        acceptedWrites = List.copyOf(acceptedWrites);
    }

    /** True if both intervals are open at some common instant (touching ends do not overlap). */
    public boolean overlaps(Interval other) {
        return startMillis < other.endMillis && other.startMillis < endMillis;
    }
}
