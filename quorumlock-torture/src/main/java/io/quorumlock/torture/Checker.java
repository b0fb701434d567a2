package io.quorumlock.torture;

import io.quorumlock.torture.Event.Kind;
import io.quorumlock.torture.Event.Op;
import io.quorumlock.torture.Verdict.Overlap;
import io.quorumlock.torture.Verdict.StaleWrite;
import io.quorumlock.torture.Verdict.TokenViolation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Checks a torture history from the events alone; pure, no I/O.
 *
 * <p>Events are taken in wall-time order (stable, so equal times keep their recorded order). Each
 * client's operations are sequential: a completion belongs to the same client's last invocation
 * of the same op. Timing questions are answered soundly: a write (or grant) is only said to come
 * "after" another if it was invoked after the other completed, so a history never shows a
 * violation that a different but possible order of the storage's steps would explain.
 */
public final class Checker {

    private static final Comparator<Interval> BY_START =
            Comparator.comparingLong(Interval::startMillis).thenComparing(Interval::client);

    private Checker() {}

    /**
     * An invocation and its completion; {@code invoke} is null when none was recorded. {@code
     * grantToken} is the fencing token of the client's latest grant, used for a write that does
     * not carry its own token.
     */
    record Call(Event invoke, Event completion, OptionalLong grantToken) {
        long start() {
            return invoke == null ? completion.wallMillis() : invoke.wallMillis();
        }

        long end() {
            return completion.wallMillis();
        }

        OptionalLong fencingToken() {
            if (completion.fencingToken().isPresent()) {
                return completion.fencingToken();
            }
            if (invoke != null && invoke.fencingToken().isPresent()) {
                return invoke.fencingToken();
            }
            return grantToken;
        }

        OptionalLong read() {
            OptionalLong value = completion.read();
            return value.isPresent() || invoke == null ? value : invoke.read();
        }

        OptionalLong written() {
            OptionalLong value = completion.written();
            return value.isPresent() || invoke == null ? value : invoke.written();
        }

        boolean acceptedOk() {
            return completion.kind() == Kind.OK && completion.accepted().orElse(true);
        }
    }

    /**
     * Checks the history. One whose events name several shared records (a semaphore's, one per
     * permit) is checked record by record, each as the history of a lock, and the verdicts added up:
     * a client's events before its grant (its acquire's invocation, a refusal) go with the record
     * of its next grant, the faults with every record.
     */
    public static Verdict check(List<Event> history) {
        Map<String, List<Event>> byRecord = byRecord(inWallOrder(history));
        if (byRecord.isEmpty()) {
            return checkOne(history);
        }
        List<Verdict> verdicts = new ArrayList<>();
        byRecord.values().forEach(events -> verdicts.add(checkOne(events)));
        return Verdict.sum(verdicts);
    }

    /** The events of each shared record the history names, in wall order; empty if it names none. */
    private static Map<String, List<Event>> byRecord(List<Event> events) {
        Map<String, List<Event>> byRecord = new java.util.TreeMap<>();
        events.stream()
                .map(Event::record)
                .filter(r -> !r.isEmpty())
                .forEach(r -> byRecord.putIfAbsent(r, new ArrayList<>()));
        if (byRecord.isEmpty()) {
            return byRecord;
        }
        Map<String, List<Event>> pending = new HashMap<>();
        for (Event e : events) {
            if (!e.record().isEmpty()) {
                List<Event> group = byRecord.get(e.record());
                List<Event> before = pending.remove(e.client());
                if (before != null) {
                    group.addAll(before);
                }
                group.add(e);
            } else if (e.kind() == Kind.FAULT) {
                byRecord.values().forEach(group -> group.add(e));
            } else {
                pending.computeIfAbsent(e.client(), c -> new ArrayList<>()).add(e);
            }
        }
        return byRecord;
    }

    /** Checks the history of one shared record. */
    private static Verdict checkOne(List<Event> history) {
        List<Event> events = inWallOrder(history);
        List<Call> writes = calls(events, Op.WRITE);
        List<Call> grants = calls(events, Op.ACQUIRE).stream()
                .filter(c -> c.completion().kind() == Kind.OK)
                .toList();

        List<Call> accepted = writes.stream().filter(Call::acceptedOk).toList();
        List<Call> fencedAccepted =
                accepted.stream().filter(c -> c.fencingToken().isPresent()).toList();
        long staleRejected = writes.stream()
                .filter(c -> c.completion().accepted().equals(Optional.of(false)))
                .count();

        OptionalLong initial = stateValue(events, Kind.INITIAL);
        OptionalLong fin = stateValue(events, Kind.FINAL);
        OptionalLong expected = OptionalLong.empty();
        long lost = 0;
        if (initial.isPresent()) {
            long decrements = 0;
            for (Call write : accepted) {
                if (write.read().isPresent() && write.written().isPresent()) {
                    decrements += write.read().getAsLong() - write.written().getAsLong();
                }
            }
            expected = OptionalLong.of(initial.getAsLong() - decrements);
            if (fin.isPresent()) {
                lost = Math.max(0, fin.getAsLong() - expected.getAsLong());
            }
        }

        List<StaleWrite> stale = new ArrayList<>();
        for (Call[] pair : precededByLargerToken(fencedAccepted, false)) {
            stale.add(new StaleWrite(pair[0].completion(), pair[1].completion()));
        }
        List<TokenViolation> violations = tokenViolations(grants);
        List<Event> torn = events.stream()
                .filter(e ->
                        e.op() == Op.READ && e.kind() == Kind.OK && e.accepted().orElse(false))
                .filter(e -> !e.read().equals(e.written()))
                .toList();

        return new Verdict(
                overlaps(intervals(events)),
                accepted.size(),
                initial,
                fin,
                expected,
                lost,
                stale,
                staleRejected,
                violations,
                torn);
    }

    /**
     * The lease intervals of every client, in order of their start. See {@link Interval} for
     * where an interval starts and ends.
     */
    public static List<Interval> intervals(List<Event> history) {
        List<Event> events = inWallOrder(history);
        long lastWall = events.isEmpty() ? 0 : events.get(events.size() - 1).wallMillis();

        final class Open {
            final Event grant;
            final List<Event> writes = new ArrayList<>();

            Open(Event grant) {
                this.grant = grant;
            }

            Interval close(Event end, long endMillis) {
                return new Interval(
                        grant.client(), grant, Optional.ofNullable(end), grant.wallMillis(), endMillis, writes);
            }
        }

        Map<String, Open> open = new HashMap<>();
        Map<String, Open> writeInvokedIn = new HashMap<>();
        List<Interval> intervals = new ArrayList<>();
        for (Event e : events) {
            String client = e.client();
            if (e.op() == Op.ACQUIRE && e.kind() == Kind.OK) {
                Open previous = open.put(client, new Open(e));
                if (previous != null) {
                    // A second grant without a release: the first lease ends where the second starts.
                    intervals.add(previous.close(null, e.wallMillis()));
                }
            } else if ((e.op() == Op.RELEASE && e.kind() == Kind.INVOKE) || e.op() == Op.LEASE_LOST) {
                Open current = open.remove(client);
                if (current != null) {
                    intervals.add(current.close(e, e.wallMillis()));
                }
            } else if (e.op() == Op.WRITE && e.kind() == Kind.INVOKE) {
                Open current = open.get(client);
                if (current != null) {
                    writeInvokedIn.put(client, current);
                } else {
                    writeInvokedIn.remove(client);
                }
            } else if (e.op() == Op.WRITE && e.isCompletion()) {
                Open in = writeInvokedIn.remove(client);
                if (in != null && e.kind() == Kind.OK && e.accepted().orElse(true)) {
                    in.writes.add(e);
                }
            }
        }
        for (Open current : open.values()) {
            intervals.add(current.close(null, lastWall));
        }
        intervals.sort(BY_START);
        return intervals;
    }

    /** Pairs of intervals of different clients that overlap and both hold an accepted write. */
    static List<Overlap> overlaps(List<Interval> intervals) {
        List<Interval> writing = intervals.stream()
                .filter(i -> !i.acceptedWrites().isEmpty())
                .sorted(BY_START)
                .toList();
        List<Overlap> overlaps = new ArrayList<>();
        for (int i = 0; i < writing.size(); i++) {
            Interval a = writing.get(i);
            for (int j = i + 1; j < writing.size(); j++) {
                Interval b = writing.get(j);
                if (b.startMillis() >= a.endMillis()) {
                    break;
                }
                if (!a.client().equals(b.client()) && a.overlaps(b)) {
                    overlaps.add(new Overlap(a, b));
                }
            }
        }
        return overlaps;
    }

    private static List<TokenViolation> tokenViolations(List<Call> grants) {
        List<Call> fenced =
                grants.stream().filter(g -> g.fencingToken().isPresent()).toList();
        List<TokenViolation> violations = new ArrayList<>();
        Set<Event> reported = new HashSet<>();
        for (Call[] pair : precededByLargerToken(fenced, true)) {
            violations.add(new TokenViolation(pair[0].completion(), pair[1].completion()));
            reported.add(pair[0].completion());
        }
        // Two grants with the same token are a violation even when they were concurrent.
        Map<Long, Call> byToken = new HashMap<>();
        for (Call grant :
                fenced.stream().sorted(Comparator.comparingLong(Call::end)).toList()) {
            Call first = byToken.putIfAbsent(grant.fencingToken().getAsLong(), grant);
            if (first != null && !reported.contains(grant.completion())) {
                violations.add(new TokenViolation(grant.completion(), first.completion()));
            }
        }
        return violations;
    }

    /**
     * For each call, the call with the largest token among those completed before it was invoked,
     * when that token is larger than its own (or equal, if {@code orEqual}). Returns pairs
     * {@code [call, earlier]} in order of invocation.
     */
    private static List<Call[]> precededByLargerToken(List<Call> calls, boolean orEqual) {
        List<Call> byStart =
                calls.stream().sorted(Comparator.comparingLong(Call::start)).toList();
        List<Call> byEnd =
                calls.stream().sorted(Comparator.comparingLong(Call::end)).toList();
        List<Call[]> found = new ArrayList<>();
        Call max = null;
        int done = 0;
        for (Call call : byStart) {
            while (done < byEnd.size() && byEnd.get(done).end() < call.start()) {
                Call finished = byEnd.get(done++);
                if (max == null
                        || finished.fencingToken().getAsLong()
                                > max.fencingToken().getAsLong()) {
                    max = finished;
                }
            }
            if (max != null && max != call) {
                long mine = call.fencingToken().getAsLong();
                long newest = max.fencingToken().getAsLong();
                if (mine < newest || (orEqual && mine == newest)) {
                    found.add(new Call[] {call, max});
                }
            }
        }
        return found;
    }

    static List<Call> calls(List<Event> events, Op op) {
        Map<String, Event> pending = new HashMap<>();
        Map<String, OptionalLong> grantTokens = new HashMap<>();
        List<Call> calls = new ArrayList<>();
        for (Event e : events) {
            if (e.op() == Op.ACQUIRE && e.kind() == Kind.OK) {
                grantTokens.put(e.client(), e.fencingToken());
            }
            if (e.op() != op) {
                continue;
            }
            if (e.kind() == Kind.INVOKE) {
                pending.put(e.client(), e);
            } else if (e.isCompletion()) {
                calls.add(new Call(
                        pending.remove(e.client()), e, grantTokens.getOrDefault(e.client(), OptionalLong.empty())));
            }
        }
        return calls;
    }

    private static OptionalLong stateValue(List<Event> events, Kind kind) {
        OptionalLong value = OptionalLong.empty();
        for (Event e : events) {
            if (e.kind() == kind && e.written().isPresent()) {
                value = e.written();
                if (kind == Kind.INITIAL) {
                    break;
                }
            }
        }
        return value;
    }

    static List<Event> inWallOrder(List<Event> history) {
        List<Event> events = new ArrayList<>(history);
        events.sort(Comparator.comparingLong(Event::wallMillis));
        return events;
    }
}
