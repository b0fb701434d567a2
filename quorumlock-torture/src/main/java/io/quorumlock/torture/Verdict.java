package io.quorumlock.torture;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * What the {@link Checker} found in one history: counts and the evidence behind each of them.
 *
 * @param overlaps pairs of clients whose lease intervals overlapped while both wrote inside
 * @param writesAcknowledged writes the storage acknowledged as accepted
 * @param initialValue the shared record's value in the INITIAL event, if any
 * @param finalValue the shared record's value in the FINAL event, if any
 * @param expectedFinal the initial value minus every acknowledged decrement, if the initial value
 *     is known
 * @param lostUpdates how much the final value exceeds the expected one (decrements acknowledged
 *     but lost); 0 when either value is unknown
 * @param staleAccepted writes the storage accepted although a newer fencing token had been accepted
 *     before they started
 * @param staleRejected writes the storage refused (the fence doing its job)
 * @param tokenViolations grants whose fencing token was not larger than an earlier grant's
 * @param tornReads reads under a read lease, valid throughout, whose two reads of the record
 *     differ: a write was accepted while a reader held the lock
 */
public record Verdict(
        List<Overlap> overlaps,
        long writesAcknowledged,
        OptionalLong initialValue,
        OptionalLong finalValue,
        OptionalLong expectedFinal,
        long lostUpdates,
        List<StaleWrite> staleAccepted,
        long staleRejected,
        List<TokenViolation> tokenViolations,
        List<Event> tornReads) {

    /** Copies the lists. */
    public Verdict {
        overlaps = List.copyOf(overlaps);
        staleAccepted = List.copyOf(staleAccepted);
        tokenViolations = List.copyOf(tokenViolations);
        tornReads = List.copyOf(tornReads);
    }

    /**
     * Two clients that each believed they held the lock at the same time and both wrote.
     *
     * @param first the interval that started first
     * @param second the interval that started while the first was still held
     */
    public record Overlap(Interval first, Interval second) {
        /**
         * Whether the two holders' accepted writes still ran one after the other: of each pair, one
         * read what the other wrote or a value written after it (the record only goes down). A
         * fence that the write checks in its transaction before the read keeps every overlap so;
         * without one, both may read the same value and one decrement is lost.
         */
        public boolean serial() {
            for (Event x : first.acceptedWrites()) {
                for (Event y : second.acceptedWrites()) {
                    if (!sawTheOther(x, y) && !sawTheOther(y, x)) {
                        return false;
                    }
                }
            }
            return true;
        }

        /** Whether {@code later} read what {@code earlier} wrote, or a value written after it. */
        private static boolean sawTheOther(Event later, Event earlier) {
            return later.read().isPresent()
                    && earlier.written().isPresent()
                    && later.read().getAsLong() <= earlier.written().getAsLong();
        }

        /** The two grants, and each client's first accepted write inside its interval. */
        @Override
        public String toString() {
            return (serial() ? "overlap, writes in order: " : "overlap: ") + first.grant() + " / " + second.grant()
                    + "; writes " + first.acceptedWrites().get(0) + " / "
                    + second.acceptedWrites().get(0);
        }
    }

    /**
     * A write accepted with a fencing token older than one accepted before it started.
     *
     * @param write the stale write's completion
     * @param newer the completion of the newer-token write accepted before
     */
    public record StaleWrite(Event write, Event newer) {}

    /**
     * A grant whose token is not strictly larger than an earlier grant's.
     *
     * @param grant the offending ACQUIRE OK
     * @param earlier the earlier grant with an equal or larger token
     */
    public record TokenViolation(Event grant, Event earlier) {}

    /**
     * The verdicts of several shared records as one: their evidence together, their counts and
     * values added up (a value is known only if it is for every record).
     */
    static Verdict sum(List<Verdict> verdicts) {
        List<Overlap> overlaps = new ArrayList<>();
        List<StaleWrite> stale = new ArrayList<>();
        List<TokenViolation> violations = new ArrayList<>();
        List<Event> torn = new ArrayList<>();
        long acknowledged = 0;
        long lost = 0;
        long rejected = 0;
        for (Verdict v : verdicts) {
            overlaps.addAll(v.overlaps());
            stale.addAll(v.staleAccepted());
            violations.addAll(v.tokenViolations());
            torn.addAll(v.tornReads());
            acknowledged += v.writesAcknowledged();
            lost += v.lostUpdates();
            rejected += v.staleRejected();
        }
        return new Verdict(
                overlaps,
                acknowledged,
                total(verdicts, Verdict::initialValue),
                total(verdicts, Verdict::finalValue),
                total(verdicts, Verdict::expectedFinal),
                lost,
                stale,
                rejected,
                violations,
                torn);
    }

    private static OptionalLong total(List<Verdict> verdicts, java.util.function.Function<Verdict, OptionalLong> of) {
        long total = 0;
        for (Verdict v : verdicts) {
            OptionalLong value = of.apply(v);
            if (value.isEmpty()) {
                return OptionalLong.empty();
            }
            total += value.getAsLong();
        }
        return OptionalLong.of(total);
    }

    /** The overlaps whose writes did not run one after the other ({@link Overlap#serial()}). */
    public List<Overlap> conflictingOverlaps() {
        return overlaps.stream().filter(o -> !o.serial()).toList();
    }

    /**
     * True if the history shows no overlap, no lost update, no stale write accepted, no token
     * violation and no torn read.
     */
    public boolean safe() {
        return overlaps.isEmpty()
                && lostUpdates == 0
                && staleAccepted.isEmpty()
                && tokenViolations.isEmpty()
                && tornReads.isEmpty();
    }
}
