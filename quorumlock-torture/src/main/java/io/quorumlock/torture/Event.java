package io.quorumlock.torture;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;

/**
 * One line of a torture history: something a client invoked or observed, a fault the nemesis
 * injected, or the state of the shared record at the start and end of the run.
 *
 * <p>Client operations follow Jepsen's shape: an {@link Kind#INVOKE} is followed by the same
 * client's {@link Kind#OK}, {@link Kind#FAIL} or {@link Kind#INFO} (outcome unknown) for the same
 * {@link Op}. A lost lease is an {@link Op#LEASE_LOST} observed by the client (usually
 * {@link Kind#INFO}). Faults are {@link Kind#FAULT} events with op {@link Op#START} or {@link
 * Op#END} and a label such as {@code "freeze redis-3"}; the first word of the label is the fault's
 * kind. The shared record (a counter or a stock) is recorded as {@link Kind#INITIAL} and
 * {@link Kind#FINAL} events with op {@link Op#STATE} and the value in {@link #written()}.
 *
 * <p>A write is a read-modify-write of the shared record: {@link #read()} is the value read,
 * {@link #written()} the value written (so it decrements by {@code read - written}), and on the
 * completion {@link #accepted()} says whether the storage took it (a fence refuses a stale token).
 *
 * @param client the client id; the nemesis uses {@code "nemesis"}, the harness {@code "harness"}
 * @param kind what happened
 * @param op to which operation
 * @param monotonicNanos the client's monotonic clock ({@link System#nanoTime()})
 * @param wallMillis the wall clock ({@link System#currentTimeMillis()}), comparable across clients
 * @param leaseToken the lease's random token (plain Redis locks), empty if none
 * @param fencingToken the fencing token of a fenced lease
 * @param validityMillis the lease's validity at grant, 0 if not relevant
 * @param read the value read by a write
 * @param written the value written by a write, or the value of an INITIAL/FINAL state
 * @param accepted for a completed write, whether the storage accepted it
 * @param label a free-text label: the fault, or an error message; empty if none
 * @param record the shared record the event is about, where a strategy has several (a semaphore's,
 *     one per permit); empty where it has one
 */
public record Event(
        String client,
        Kind kind,
        Op op,
        long monotonicNanos,
        long wallMillis,
        String leaseToken,
        OptionalLong fencingToken,
        long validityMillis,
        OptionalLong read,
        OptionalLong written,
        Optional<Boolean> accepted,
        String label,
        String record) {

    /** What happened. */
    public enum Kind {
        INVOKE,
        OK,
        FAIL,
        INFO,
        FAULT,
        INITIAL,
        FINAL
    }

    /** The operation an event belongs to. */
    public enum Op {
        ACQUIRE,
        WRITE,
        RELEASE,
        LEASE_LOST,
        /** The start of a fault. */
        START,
        /** The end of a fault (node thawed, restarted, clock set back). */
        END,
        /** The value of the shared record, for INITIAL and FINAL. */
        STATE,
        /**
         * A reader's two reads of the record under one read lease: the first value in {@code read},
         * the second in {@code written}, {@code accepted} if the lease was valid after both.
         */
        READ
    }

    /** Checks that no component is null. */
    public Event {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(leaseToken, "leaseToken");
        Objects.requireNonNull(fencingToken, "fencingToken");
        Objects.requireNonNull(read, "read");
        Objects.requireNonNull(written, "written");
        Objects.requireNonNull(accepted, "accepted");
        Objects.requireNonNull(label, "label");
        Objects.requireNonNull(record, "record");
    }

    /** A bare event; add details with the {@code with...} methods. */
    public static Event of(String client, Kind kind, Op op, long monotonicNanos, long wallMillis) {
        return new Event(
                client,
                kind,
                op,
                monotonicNanos,
                wallMillis,
                "",
                OptionalLong.empty(),
                0,
                OptionalLong.empty(),
                OptionalLong.empty(),
                Optional.empty(),
                "",
                "");
    }

    /** A fault mark: {@code start} true for the start of the fault, false for its end. */
    public static Event fault(String label, boolean start, long monotonicNanos, long wallMillis) {
        return of("nemesis", Kind.FAULT, start ? Op.START : Op.END, monotonicNanos, wallMillis)
                .withLabel(label);
    }

    /** The value of the shared record: {@code kind} is {@link Kind#INITIAL} or {@link Kind#FINAL}. */
    public static Event state(Kind kind, long value, long monotonicNanos, long wallMillis) {
        if (kind != Kind.INITIAL && kind != Kind.FINAL) {
            throw new IllegalArgumentException("kind must be INITIAL or FINAL, was " + kind);
        }
        return of("harness", kind, Op.STATE, monotonicNanos, wallMillis).withWritten(value);
    }

    /** This event with a plain lease's token and validity. */
    public Event withLease(String token, long validityMillis) {
        return with(e -> {
            e.leaseToken = token;
            e.validityMillis = validityMillis;
        });
    }

    /** This event with a fencing token. */
    public Event withFencingToken(long token) {
        return with(e -> e.fencingToken = OptionalLong.of(token));
    }

    /** This event with the validity of the lease in milliseconds. */
    public Event withValidity(long millis) {
        return with(e -> e.validityMillis = millis);
    }

    /** This event with the value a write read and the value it writes. */
    public Event withWrite(long readValue, long writtenValue) {
        return with(e -> {
            e.read = OptionalLong.of(readValue);
            e.written = OptionalLong.of(writtenValue);
        });
    }

    /** This event with a written value (or state value) only. */
    public Event withWritten(long value) {
        return with(e -> e.written = OptionalLong.of(value));
    }

    /** This event with whether the storage accepted the write. */
    public Event withAccepted(boolean isAccepted) {
        return with(e -> e.accepted = Optional.of(isAccepted));
    }

    /** This event with a label. */
    public Event withLabel(String text) {
        return with(e -> e.label = text);
    }

    /** This event about the shared record {@code name}, one of a strategy's several. */
    public Event withRecord(String name) {
        return with(e -> e.record = name);
    }

    /** The details a {@code with...} method may change; the identity (client, kind, op, clocks) stays. */
    private static final class Details {
        String leaseToken;
        OptionalLong fencingToken;
        long validityMillis;
        OptionalLong read;
        OptionalLong written;
        Optional<Boolean> accepted;
        String label;
        String record;
    }

    private Event with(Consumer<Details> change) {
        Details e = new Details();
        e.leaseToken = leaseToken;
        e.fencingToken = fencingToken;
        e.validityMillis = validityMillis;
        e.read = read;
        e.written = written;
        e.accepted = accepted;
        e.label = label;
        e.record = record;
        change.accept(e);
        return new Event(
                client,
                kind,
                op,
                monotonicNanos,
                wallMillis,
                e.leaseToken,
                e.fencingToken,
                e.validityMillis,
                e.read,
                e.written,
                e.accepted,
                e.label,
                e.record);
    }

    /** True for a client operation's completion: OK, FAIL or INFO. */
    public boolean isCompletion() {
        return kind == Kind.OK || kind == Kind.FAIL || kind == Kind.INFO;
    }

    /** The fault's kind: the first word of the label of a FAULT event ("freeze" for "freeze redis-3"). */
    public String faultKind() {
        String trimmed = label.strip();
        int space = trimmed.indexOf(' ');
        return space < 0 ? trimmed : trimmed.substring(0, space);
    }

    /** A short human-readable form, for evidence in reports and assertion messages. */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder()
                .append(wallMillis)
                .append(' ')
                .append(client)
                .append(' ')
                .append(kind)
                .append(' ')
                .append(op);
        fencingToken.ifPresent(t -> s.append(" fence=").append(t));
        if (!leaseToken.isEmpty()) {
            s.append(" token=").append(leaseToken);
        }
        read.ifPresent(v -> s.append(" read=").append(v));
        written.ifPresent(v -> s.append(" written=").append(v));
        accepted.ifPresent(a -> s.append(" accepted=").append(a));
        if (!record.isEmpty()) {
            s.append(" record=").append(record);
        }
        if (!label.isEmpty()) {
            s.append(" \"").append(label).append('"');
        }
        return s.toString();
    }
}
