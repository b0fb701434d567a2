package io.quorumlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.LockListener;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.RecordingListener;
import io.quorumlock.RetryPolicy;
import io.quorumlock.ServerAnswer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The events of the acquire loop on a clock the test moves, and the guard around listeners. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class LockEventsTest {

    private final AtomicLong clock = new AtomicLong(1_000);
    private final RecordingListener recorder = new RecordingListener();
    private final LockEvents events = LockEvents.of("redis", recorder);
    private static final RetryPolicy NO_PAUSE = RetryPolicy.jitteredBackoff(Duration.ofNanos(1), Duration.ofNanos(1));

    @Test
    void aGrantAfterTwoRefusalsIsOneAcquiredEventWithTheWholeDurationAndTheVotes() {
        String lease =
                AcquireLoop.acquire("r", Duration.ofSeconds(1), NO_PAUSE, clock::get, events, (number, remaining) -> {
                    clock.addAndGet(7_000_000);
                    return number < 3
                            ? AcquireLoop.Attempt.outvoted(1, 3, true, List::of)
                            : AcquireLoop.Attempt.granted("lease", 4, 5);
                });
        assertThat(lease).isEqualTo("lease");
        assertThat(recorder.names()).containsExactly("acquired r 4/5");
        assertThat(recorder.events().get(0).duration()).isEqualTo(Duration.ofMillis(21));
        assertThat(recorder.events().get(0).backend()).isEqualTo("redis");
    }

    @Test
    void theLastRefusalSaysBusyForAHolderAndUnavailableOtherwise() {
        assertThatThrownBy(() -> AcquireLoop.acquire("held", Duration.ZERO, NO_PAUSE, clock::get, events, (n, r) -> {
                    clock.addAndGet(2_000_000);
                    return AcquireLoop.Attempt.heldBy(
                            "other", new ServerAnswer("zk", ServerAnswer.Kind.HELD_BY_OTHER, ""));
                }))
                .isInstanceOf(LockUnavailableException.class);
        assertThatThrownBy(() -> AcquireLoop.acquire(
                        "down",
                        Duration.ZERO,
                        NO_PAUSE,
                        clock::get,
                        events,
                        (n, r) -> AcquireLoop.Attempt.outvoted(1, 3, false, List::of)))
                .isInstanceOf(LockUnavailableException.class);
        assertThat(recorder.names()).containsExactly("busy held", "unavailable down");
        assertThat(recorder.events().get(0).duration()).isEqualTo(Duration.ofMillis(2));
    }

    @Test
    void anAttemptThatThrowsIsAnErrorEventAndTheExceptionStillReachesTheCaller() {
        IllegalStateException failure = new IllegalStateException("boom");
        assertThatThrownBy(
                        () -> AcquireLoop.acquire("r", Duration.ofSeconds(1), NO_PAUSE, clock::get, events, (n, r) -> {
                            throw failure;
                        }))
                .isSameAs(failure);
        assertThat(recorder.names()).containsExactly("error r IllegalStateException");
    }

    @Test
    void aSingleAttemptTellsItsOutcome() {
        assertThat(AcquireLoop.once("r", clock::get, events, () -> AcquireLoop.Attempt.granted("x")))
                .contains("x");
        assertThat(AcquireLoop.once(
                        "r",
                        clock::get,
                        events,
                        () -> AcquireLoop.Attempt.busy(
                                "other", new ServerAnswer("db", ServerAnswer.Kind.HELD_BY_OTHER, "other"))))
                .isEmpty();
        assertThatThrownBy(() -> AcquireLoop.once(
                        "r",
                        clock::get,
                        events,
                        () -> AcquireLoop.Attempt.refused(
                                new ServerAnswer("etcd", ServerAnswer.Kind.UNREACHABLE, ""), true)))
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("unreachable on etcd");
        assertThat(recorder.names()).containsExactly("acquired r 1/1", "busy r", "unavailable r");
    }

    @Test
    void aListenerThatThrowsIsCaughtEveryTime() {
        LockListener throwing = new LockListener() {
            @Override
            public void acquired(String backend, String resource, Duration took, int votes, int nodes) {
                throw new IllegalStateException("listener bug");
            }

            @Override
            public void released(String backend, String resource, Duration held) {
                throw new IllegalStateException("listener bug");
            }
        };
        LockEvents guarded = LockEvents.of("etcd", throwing);
        guarded.acquired("r", 1, 1, 1);
        guarded.acquired("r", 1, 1, 1);
        guarded.released("r", 5);
        assertThat(guarded.on()).isTrue();
    }

    @Test
    void withoutAListenerNothingIsOnAndNothingIsCalled() {
        LockEvents none = LockEvents.of("redis", LockListener.NONE);
        assertThat(none.on()).isFalse();
        none.acquired("r", 1, 1, 1);
        none.lost("r", "why");
        AtomicLong reads = new AtomicLong();
        String lease = AcquireLoop.acquire(
                "r", Duration.ZERO, NO_PAUSE, reads::incrementAndGet, none, (n, r) -> AcquireLoop.Attempt.granted("x"));
        assertThat(lease).isEqualTo("x");
        assertThat(reads)
                .as("the loop's own reads only: its start and the wait left")
                .hasValue(2);
    }

    @Test
    void aCompositeCallsEveryListenerEvenAfterOneThrowsThenThrowsTheFirstFailure() {
        RecordingListener second = new RecordingListener();
        LockListener throwing = new LockListener() {
            @Override
            public void lost(String backend, String resource, String reason) {
                throw new IllegalStateException("first");
            }
        };
        LockListener both = LockListener.composite(throwing, second);
        assertThatThrownBy(() -> both.lost("redis", "r", "why")).hasMessage("first");
        assertThat(second.names()).containsExactly("lost r");
        LockEvents.of("redis", both).lost("r", "again"); // caught there
        assertThat(second.names()).containsExactly("lost r", "lost r");
    }
}
