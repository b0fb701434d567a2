package io.quorumlock.torture;

import static io.quorumlock.torture.Events.accepted;
import static io.quorumlock.torture.Events.grant;
import static io.quorumlock.torture.Events.invoke;
import static io.quorumlock.torture.Events.lost;
import static io.quorumlock.torture.Events.ok;
import static io.quorumlock.torture.Events.rejected;
import static io.quorumlock.torture.Events.release;
import static io.quorumlock.torture.Events.write;
import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.torture.Event.Kind;
import io.quorumlock.torture.Event.Op;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CheckerTest {

    /** One clean cycle of a client: acquire, read-modify-write, release. */
    private static List<Event> cycle(String client, long t, long fence, long read) {
        return List.of(
                invoke(client, Op.ACQUIRE, t),
                grant(client, t + 1, fence),
                write(client, t + 2, read, read - 1),
                accepted(client, t + 3),
                release(client, t + 4),
                ok(client, Op.RELEASE, t + 5));
    }

    private static List<Event> history(List<?>... parts) {
        List<Event> events = new ArrayList<>();
        for (List<?> part : parts) {
            for (Object e : part) {
                events.add((Event) e);
            }
        }
        return events;
    }

    @Test
    void aCleanSequentialHistoryIsSafe() {
        List<Event> events = history(
                List.of(Event.state(Kind.INITIAL, 10, 0, 0)),
                cycle("c1", 10, 1, 10),
                cycle("c2", 13, 2, 9), // granted at 14, exactly when c1's release was invoked: touching, no overlap
                cycle("c1", 30, 3, 8),
                List.of(Event.state(Kind.FINAL, 7, 0, 100)));

        Verdict verdict = Checker.check(events);

        assertThat(verdict.safe()).isTrue();
        assertThat(verdict.writesAcknowledged()).isEqualTo(3);
        assertThat(verdict.expectedFinal()).hasValue(7);
        assertThat(verdict.lostUpdates()).isZero();
        assertThat(Checker.intervals(events)).extracting(Interval::startMillis).containsExactly(11L, 14L, 31L);
    }

    @Test
    void theGcPauseIsAnOverlapWithTheExactPairOfEvents() {
        // c1 is granted, pauses past its lease; c2 is granted, writes, releases; c1 wakes and writes.
        List<Event> events = List.of(
                invoke("c1", Op.ACQUIRE, 0),
                grant("c1", 1, 1),
                invoke("c2", Op.ACQUIRE, 2),
                grant("c2", 20, 2),
                write("c2", 21, 10, 9),
                accepted("c2", 22),
                release("c2", 23),
                write("c1", 40, 10, 9),
                accepted("c1", 41),
                release("c1", 42));

        Verdict verdict = Checker.check(events);

        assertThat(verdict.overlaps()).hasSize(1);
        Verdict.Overlap overlap = verdict.overlaps().get(0);
        assertThat(overlap.first().grant()).isEqualTo(events.get(1));
        assertThat(overlap.second().grant()).isEqualTo(events.get(3));
        assertThat(overlap.first().acceptedWrites()).containsExactly(events.get(8));
        assertThat(overlap.second().acceptedWrites()).containsExactly(events.get(5));
        assertThat(overlap.toString()).contains("c1 OK ACQUIRE fence=1").contains("c2 OK ACQUIRE fence=2");
        // The storage took c1's token 1 after token 2: a stale write accepted.
        assertThat(verdict.staleAccepted()).hasSize(1);
        assertThat(verdict.staleAccepted().get(0).write()).isEqualTo(events.get(8));
        assertThat(verdict.staleAccepted().get(0).newer()).isEqualTo(events.get(5));
        assertThat(verdict.safe()).isFalse();
    }

    @Test
    void theFenceRejectingTheWokenClientLeavesNoOverlapAndCountsTheRejection() {
        List<Event> events = List.of(
                grant("c1", 1, 1),
                grant("c2", 20, 2),
                write("c2", 21, 10, 9),
                accepted("c2", 22),
                release("c2", 23),
                write("c1", 40, 10, 9),
                rejected("c1", 41),
                release("c1", 42));

        Verdict verdict = Checker.check(events);

        assertThat(verdict.overlaps()).isEmpty();
        assertThat(verdict.staleAccepted()).isEmpty();
        assertThat(verdict.staleRejected()).isEqualTo(1);
        assertThat(verdict.safe()).isTrue();
    }

    @Test
    void overlappingLeasesWhereOnlyOneClientWroteAreNoOverlap() {
        List<Event> events = List.of(
                grant("c1", 1, 1),
                grant("c2", 5, 2),
                write("c2", 6, 10, 9),
                accepted("c2", 7),
                release("c2", 8),
                release("c1", 9));

        assertThat(Checker.check(events).overlaps()).isEmpty();
    }

    @Test
    void aLostLeaseEndsTheIntervalAndAWriteAfterItDoesNotCount() {
        List<Event> events = List.of(
                grant("c1", 1, 1),
                write("c1", 2, 10, 9),
                accepted("c1", 3),
                lost("c1", 4),
                grant("c2", 5, 2),
                write("c2", 6, 9, 8),
                accepted("c2", 7),
                // c1 writes after it knew the lease was lost: outside any interval of its own.
                write("c1", 8, 8, 7),
                accepted("c1", 9),
                release("c2", 10));

        Verdict verdict = Checker.check(events);

        assertThat(verdict.overlaps()).isEmpty();
        assertThat(Checker.intervals(events))
                .extracting(i -> i.client() + ":" + i.startMillis() + "-" + i.endMillis())
                .containsExactly("c1:1-4", "c2:5-10");
    }

    @Test
    void aLeaseNeverReleasedRunsToTheEndOfTheHistory() {
        List<Event> events = List.of(
                grant("c1", 1, 1),
                write("c1", 2, 10, 9),
                accepted("c1", 3),
                grant("c2", 50, 2),
                write("c2", 51, 9, 8),
                accepted("c2", 52),
                release("c2", 53),
                Event.fault("kill c1", true, 0, 60));

        List<Interval> intervals = Checker.intervals(events);

        assertThat(intervals.get(0).end()).isEmpty();
        assertThat(intervals.get(0).endMillis()).isEqualTo(60);
        assertThat(Checker.check(events).overlaps()).hasSize(1);
    }

    @Test
    void threeClientsAtOnceGiveEveryPair() {
        List<Event> events = new ArrayList<>();
        for (String c : List.of("c1", "c2", "c3")) {
            events.add(grant(c, 1, 1));
        }
        for (String c : List.of("c1", "c2", "c3")) {
            events.add(write(c, 2, 10, 9));
            events.add(accepted(c, 3));
        }
        // c1 holds on; later a fourth interval of c2 alone does not pair with c2's earlier one.
        events.add(release("c2", 4));
        events.add(release("c3", 4));
        events.add(grant("c2", 20, 2));
        events.add(write("c2", 21, 9, 8));
        events.add(accepted("c2", 22));
        events.add(release("c2", 23));
        events.add(release("c1", 30));

        assertThat(Checker.check(events).overlaps())
                .extracting(o -> o.first().client() + "+" + o.second().client() + "@"
                        + o.second().startMillis())
                .containsExactlyInAnyOrder("c1+c2@1", "c1+c3@1", "c2+c3@1", "c1+c2@20");
    }

    @Test
    void twoAcknowledgedDecrementsOfTheSameValueAreALostUpdate() {
        List<Event> events = List.of(
                Event.state(Kind.INITIAL, 10, 0, 0),
                grant("c1", 1, 1),
                grant("c2", 1, 2),
                write("c1", 2, 10, 9),
                write("c2", 2, 10, 9),
                accepted("c1", 3),
                accepted("c2", 3),
                write("c1", 4, 9, 7),
                Event.of("c1", Kind.INFO, Op.WRITE, 0, 5), // unknown outcome: not counted as acknowledged
                Event.state(Kind.FINAL, 9, 0, 10));

        Verdict verdict = Checker.check(events);

        assertThat(verdict.writesAcknowledged()).isEqualTo(2);
        assertThat(verdict.expectedFinal()).hasValue(8);
        assertThat(verdict.finalValue()).hasValue(9);
        assertThat(verdict.lostUpdates()).isEqualTo(1);
    }

    /**
     * A semaphore's history names a record per permit: two holders of two permits at once are no
     * overlap, each record's value is checked on its own, and two holders of one permit are.
     */
    @Test
    void aHistoryOfSeveralRecordsIsCheckedRecordByRecord() {
        List<Event> events = List.of(
                Event.state(Kind.INITIAL, 10, 0, 0).withRecord("s#1"),
                Event.state(Kind.INITIAL, 10, 0, 0).withRecord("s#2"),
                invoke("c1", Op.ACQUIRE, 1), // before the grant: no record yet
                invoke("c2", Op.ACQUIRE, 1),
                grant("c1", 2, 1).withRecord("s#1"),
                grant("c2", 2, 2).withRecord("s#2"),
                write("c1", 3, 10, 9).withRecord("s#1"),
                write("c2", 3, 10, 9).withRecord("s#2"),
                accepted("c1", 4).withRecord("s#1"),
                accepted("c2", 4).withRecord("s#2"),
                release("c1", 5).withRecord("s#1"),
                release("c2", 5).withRecord("s#2"),
                Event.state(Kind.FINAL, 9, 0, 10).withRecord("s#1"),
                Event.state(Kind.FINAL, 9, 0, 10).withRecord("s#2"));

        Verdict verdict = Checker.check(events);

        assertThat(verdict.safe()).as("two permits held at once: %s", verdict).isTrue();
        assertThat(verdict.writesAcknowledged()).isEqualTo(2);
        assertThat(verdict.initialValue()).hasValue(20);
        assertThat(verdict.expectedFinal()).hasValue(18);

        List<Event> onePermitTwice = new java.util.ArrayList<>(events);
        onePermitTwice.replaceAll(
                e -> e.record().equals("s#2") && !e.client().equals("harness") ? e.withRecord("s#1") : e);
        Verdict twice = Checker.check(onePermitTwice);
        assertThat(twice.overlaps()).as("two holders of permit 1 at once").hasSize(1);
        assertThat(twice.lostUpdates())
                .as("both decremented 10 on s#1, whose final is 9")
                .isEqualTo(1);
    }

    /**
     * A reader's two reads under one read lease: equal, or different after its lease ended (a
     * pause), are fine; different while the lease held is a torn read, a write beside a reader.
     */
    @Test
    void aReadThatChangedUnderAValidReadLeaseIsATornRead() {
        Event steady = ok("r1", Op.READ, 5).withWrite(10, 10).withAccepted(true);
        Event afterItsLease = ok("r2", Op.READ, 6).withWrite(10, 9).withAccepted(false);
        Event torn = ok("r3", Op.READ, 7).withWrite(9, 8).withAccepted(true);

        assertThat(Checker.check(List.of(steady, afterItsLease)).safe()).isTrue();
        Verdict verdict = Checker.check(List.of(steady, afterItsLease, torn));
        assertThat(verdict.safe()).isFalse();
        assertThat(verdict.tornReads()).containsExactly(torn);
    }

    @Test
    void withoutInitialOrFinalStateNoLostUpdateIsClaimed() {
        Verdict verdict = Checker.check(cycle("c1", 0, 1, 5));

        assertThat(verdict.initialValue()).isEmpty();
        assertThat(verdict.expectedFinal()).isEmpty();
        assertThat(verdict.lostUpdates()).isZero();
    }

    @Test
    void aWriteConcurrentWithANewerTokensWriteIsNotStale() {
        // Token 5's write was invoked at 10, before token 6's write completed at 15: the storage may
        // have taken token 5 first. Only a write invoked after 15 with token 5 is surely stale.
        List<Event> concurrent = List.of(
                write("c1", 10, 10, 9).withFencingToken(5),
                write("c2", 12, 10, 9).withFencingToken(6),
                accepted("c2", 15),
                accepted("c1", 20));
        List<Event> after = List.of(
                write("c2", 12, 10, 9).withFencingToken(6),
                accepted("c2", 15),
                write("c1", 16, 9, 8).withFencingToken(5),
                accepted("c1", 20));

        assertThat(Checker.check(concurrent).staleAccepted()).isEmpty();
        assertThat(Checker.check(after).staleAccepted()).hasSize(1);
    }

    @Test
    void theSameTokenWritingTwiceIsNotStale() {
        List<Event> events = List.of(
                grant("c1", 1, 7),
                write("c1", 2, 10, 9),
                accepted("c1", 3).withFencingToken(7),
                write("c1", 4, 9, 8),
                accepted("c1", 5).withFencingToken(7));

        assertThat(Checker.check(events).staleAccepted()).isEmpty();
    }

    @Test
    void grantsMustCarryStrictlyIncreasingTokens() {
        List<Event> events = List.of(
                invoke("c1", Op.ACQUIRE, 0),
                grant("c1", 1, 1),
                invoke("c2", Op.ACQUIRE, 2),
                grant("c2", 3, 2),
                invoke("c3", Op.ACQUIRE, 4),
                grant("c3", 5, 2), // equal to an earlier grant: a violation
                invoke("c1", Op.ACQUIRE, 6),
                grant("c1", 7, 1)); // smaller than the newest: a violation

        Verdict verdict = Checker.check(events);

        assertThat(verdict.tokenViolations())
                .extracting(v -> v.grant().wallMillis() + "<=" + v.earlier().wallMillis())
                .containsExactly("5<=3", "7<=3");
    }

    @Test
    void concurrentGrantsMayCompleteOutOfTokenOrderButNeverShareAToken() {
        // c1 is granted token 3 but its OK is recorded after c2's token 4: both were in flight.
        List<Event> outOfOrder =
                List.of(invoke("c1", Op.ACQUIRE, 0), invoke("c2", Op.ACQUIRE, 1), grant("c2", 2, 4), grant("c1", 3, 3));
        List<Event> shared =
                List.of(invoke("c1", Op.ACQUIRE, 0), invoke("c2", Op.ACQUIRE, 1), grant("c2", 2, 4), grant("c1", 3, 4));

        assertThat(Checker.check(outOfOrder).tokenViolations()).isEmpty();
        assertThat(Checker.check(shared).tokenViolations()).hasSize(1);
    }

    @Test
    void plainLeasesWithoutTokensHaveNoTokenChecks() {
        List<Event> events = List.of(
                ok("c1", Op.ACQUIRE, 1).withLease("t1", 900),
                release("c1", 2),
                ok("c2", Op.ACQUIRE, 3).withLease("t2", 900));

        Verdict verdict = Checker.check(events);

        assertThat(verdict.tokenViolations()).isEmpty();
        assertThat(verdict.staleAccepted()).isEmpty();
    }

    @Test
    void eventsOutOfFileOrderAreCheckedInWallOrder() {
        List<Event> events = new ArrayList<>(cycle("c1", 0, 1, 10));
        events.addAll(0, cycle("c2", 10, 2, 9));

        assertThat(Checker.check(events).safe()).isTrue();
        assertThat(Checker.intervals(events)).extracting(Interval::client).containsExactly("c1", "c2");
    }
}
