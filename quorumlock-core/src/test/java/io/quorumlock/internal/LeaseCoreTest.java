package io.quorumlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.LeaseLostException;
import io.quorumlock.RecordingListener;
import io.quorumlock.internal.LeaseCore.State;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lease core's states, its end on the ticker, and the events told once: pure, on a fake ticker. */
@Timeout(10)
class LeaseCoreTest {

    private final AtomicLong now = new AtomicLong(1_000);
    private final RecordingListener listener = new RecordingListener();
    private final LockEvents events = LockEvents.of("test", listener);

    private LeaseCore valid(long end, long validity) {
        return new LeaseCore("r", now::get, events, State.VALID, end, validity);
    }

    private static LeaseLostException loss(String why) {
        return new LeaseLostException("r", why, null);
    }

    @Test
    void remainingCountsDownOnTheTickerAndIsZeroUnlessValid() {
        LeaseCore core = valid(2_000, 1_000);
        assertThat(core.remaining()).isEqualTo(Duration.ofNanos(1_000));
        now.set(1_999);
        assertThat(core.isValid()).isTrue();
        now.set(2_000);
        assertThat(core.isValid()).isFalse();
        assertThat(core.remaining()).isZero();

        LeaseCore pending = new LeaseCore("r", now::get, events, State.PENDING, 5_000, 3_000);
        assertThat(pending.isValid()).isFalse();
        assertThat(pending.remaining()).isZero();
    }

    @Test
    void uncertaintyOnlyShortensAndEvidenceOnlyLengthens() {
        LeaseCore core = valid(5_000, 4_000);
        core.endNoLaterThan(6_000);
        assertThat(core.endNanos()).isEqualTo(5_000);
        core.endNoLaterThan(3_000);
        assertThat(core.endNanos()).isEqualTo(3_000);
        assertThat(core.extendTo(2_500, 1_500)).isTrue();
        assertThat(core.endNanos()).isEqualTo(3_000);
        assertThat(core.extendTo(7_000, 6_000)).isTrue();
        assertThat(core.endNanos()).isEqualTo(7_000);
        assertThat(core.validity()).isEqualTo(Duration.ofNanos(6_000));
        core.setEnd(4_000, 3_000); // a round known to have held sets its end, earlier or not
        assertThat(core.endNanos()).isEqualTo(4_000);
    }

    @Test
    void aPendingLeaseIsHandedOutOnlyWhileItsEndIsAhead() {
        LeaseCore core = new LeaseCore("r", now::get, events, State.PENDING, 1_500, 500);
        now.set(1_600);
        assertThat(core.hold(1_550, 1_600)).isFalse();
        assertThat(core.state()).isEqualTo(State.PENDING);
        assertThat(core.hold(9_000, 1_600)).isTrue();
        assertThat(core.state()).isEqualTo(State.VALID);
        assertThat(core.validity()).isEqualTo(Duration.ofNanos(7_400));
        assertThat(core.hold(9_500, 1_700)).isFalse(); // once
    }

    @Test
    void aResumeBegunBeforeTheLatestSuspensionDoesNotMakeTheLeaseValid() {
        LeaseCore core = valid(10_000, 9_000);
        int first = core.suspend(loss("down"));
        assertThat(core.inDoubt()).isCompleted();
        assertThat(core.lost()).isNotDone();
        assertThat(core.remaining()).isZero();
        int second = core.suspend(loss("down again"));
        assertThat(core.resume(first, 20_000)).isFalse();
        assertThat(core.state()).isEqualTo(State.SUSPENDED);
        now.set(1_500);
        assertThat(core.suspendedMillis()).isZero();
        assertThat(core.resume(second, 20_000)).isTrue();
        assertThat(core.remaining()).isEqualTo(Duration.ofNanos(18_500));
        assertThat(core.suspension()).isEqualTo(-1);
    }

    @Test
    void theListenerHearsALossOrARelease_onlyOnce_andAReleasedLeaseIsNeverLost() {
        LeaseCore lost = valid(10_000, 9_000);
        assertThat(lost.lose(loss("gone"), Runnable::run)).isTrue();
        assertThat(lost.lose(loss("gone twice"), Runnable::run)).isFalse();
        assertThat(lost.lost().join().getMessage()).contains("gone").doesNotContain("twice");
        assertThat(lost.inDoubt()).isCompleted();
        State before = lost.release(); // a lost lease's keys are still deleted
        assertThat(before).isEqualTo(State.LOST);
        lost.released(before);

        LeaseCore released = valid(10_000, 9_000);
        now.set(4_000);
        State was = released.release();
        released.released(was);
        assertThat(released.release()).isEqualTo(State.RELEASED);
        assertThat(released.lose(loss("late"), Runnable::run)).isFalse();
        assertThat(released.lost()).isNotDone();

        LeaseCore pending = new LeaseCore("r", now::get, events, State.PENDING, 10_000, 9_000);
        assertThat(pending.lose(loss("while acquiring"), Runnable::run)).isTrue();
        pending.released(pending.release());

        assertThat(listener.names()).containsExactly("lost r", "released r");
        assertThat(listener.events().get(1).duration()).isEqualTo(Duration.ofNanos(3_000));
    }

    @Test
    void aLossIsToldOnTheExecutorGivenAfterTheStateChanged() {
        LeaseCore core = valid(10_000, 9_000);
        List<Runnable> later = new ArrayList<>();
        assertThat(core.lose(loss("gone"), later::add)).isTrue();
        assertThat(core.state()).isEqualTo(State.LOST);
        assertThat(core.isValid()).isFalse();
        assertThat(core.lost()).isNotDone();
        later.forEach(Runnable::run);
        assertThat(core.lost()).isCompleted();
    }

    @Test
    void racingLossesAndReleasesEndTheLeaseOnceWithOneEvent() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            for (int round = 0; round < 200; round++) {
                LeaseCore core = valid(Long.MAX_VALUE / 2, 1_000);
                AtomicInteger ends = new AtomicInteger();
                CountDownLatch go = new CountDownLatch(1);
                List<java.util.concurrent.Future<?>> all = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    boolean lose = i % 2 == 0;
                    all.add(pool.submit(() -> {
                        go.await();
                        if (lose) {
                            if (core.lose(loss("gone"), Runnable::run)) {
                                ends.incrementAndGet();
                            }
                        } else {
                            State before = core.release();
                            if (before != State.RELEASED && before != State.LOST) {
                                ends.incrementAndGet();
                            }
                            core.released(before);
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (var f : all) {
                    f.get(5, TimeUnit.SECONDS);
                }
                assertThat(ends).as("round " + round).hasValue(1);
            }
            assertThat(listener.events()).hasSize(200);
        } finally {
            pool.shutdownNow();
        }
    }
}
