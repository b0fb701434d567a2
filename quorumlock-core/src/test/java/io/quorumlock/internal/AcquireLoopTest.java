package io.quorumlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumlock.LockConfigurationException;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.QuorumlockException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.AcquireLoop.Attempt;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The shared acquire loop over a fake attempt function and a fake clock. */
class AcquireLoopTest {

    private static final long MS = 1_000_000L;
    /** No pause between attempts: the fake clock alone decides when the wait has passed. */
    private static final RetryPolicy NO_PAUSE = RetryPolicy.jitteredBackoff(Duration.ZERO, Duration.ZERO);

    private static final ServerAnswer UNREACHABLE =
            new ServerAnswer("etcd http://e1:2379", ServerAnswer.Kind.UNREACHABLE, "refused");

    /** The fake clock, in nanoseconds; it starts far from zero, as System.nanoTime may. */
    private long now = 7_000_000_000_000L;

    /** The remaining wait that each attempt was given, in ms. */
    private final List<Long> remaining = new ArrayList<>();

    @AfterEach
    void clearInterrupt() {
        Thread.interrupted();
    }

    /** A function whose attempts each take {@code tookMs} on the fake clock and give {@code result}. */
    private AcquireLoop.Attempts<String> taking(long tookMs, Attempt<String> result) {
        return (number, remainingNanos) -> {
            assertThat(number).isEqualTo(remaining.size() + 1);
            remaining.add(remainingNanos / MS);
            now += tookMs * MS;
            return result;
        };
    }

    private String acquire(Duration maxWait, RetryPolicy retry, AcquireLoop.Attempts<String> attempts) {
        return AcquireLoop.acquire("r", maxWait, retry, () -> now, attempts);
    }

    @Test
    void retriesUntilGrantedAndReturnsTheLease() {
        AcquireLoop.Attempts<String> third = (number, remainingNanos) -> {
            remaining.add(remainingNanos / MS);
            now += 10 * MS;
            return number == 3 ? Attempt.granted("lease") : Attempt.refused(UNREACHABLE, true);
        };
        assertThat(acquire(Duration.ofSeconds(1), NO_PAUSE, third)).isEqualTo("lease");
        assertThat(remaining).containsExactly(1000L, 990L, 980L);
    }

    @Test
    void retriesUntilTheBudgetIsSpentPassingWhatIsLeftAndReportsTheLastAttempt() {
        LockUnavailableException e = catchUnavailable(
                () -> acquire(Duration.ofMillis(100), NO_PAUSE, taking(30, Attempt.refused(UNREACHABLE, true))));
        assertThat(remaining).containsExactly(100L, 70L, 40L, 10L);
        assertThat(e.attempts()).isEqualTo(4);
        assertThat(e.lastAttempt()).containsExactly(UNREACHABLE);
        assertThat(e.votes()).isZero();
        assertThat(e.quorum()).isEqualTo(1);
        assertThat(e.getMessage())
                .isEqualTo("could not acquire 'r' within 120 ms (4 attempts): unreachable (refused) on etcd"
                        + " http://e1:2379");
    }

    @Test
    void aNonRetryableRefusalEndsTheLoopAtOnceNamingTheHolder() {
        ServerAnswer held =
                new ServerAnswer("zookeeper://zk1:2181/locks", ServerAnswer.Kind.HELD_BY_OTHER, "holder 42@web-1");
        LockUnavailableException e = catchUnavailable(() ->
                acquire(Duration.ofSeconds(10), NO_PAUSE, taking(200, Attempt.heldBy("42@web-1 (token 0x7)", held))));
        assertThat(remaining).containsExactly(10_000L);
        assertThat(e.attempts()).isEqualTo(1);
        assertThat(e.lastAttempt()).containsExactly(held);
        assertThat(e.getMessage())
                .isEqualTo("could not acquire 'r' within 200 ms (1 attempt): held by 42@web-1 (token 0x7) on"
                        + " zookeeper://zk1:2181/locks")
                .doesNotContain("votes");
        remaining.clear();
        assertThat(catchUnavailable(() -> acquire(
                                Duration.ofSeconds(10), NO_PAUSE, taking(5, Attempt.refused(UNREACHABLE, false))))
                        .attempts())
                .isEqualTo(1);
    }

    @Test
    void aZeroWaitMakesExactlyOneAttemptEvenOnAClockThatDoesNotMove() {
        LockUnavailableException e =
                catchUnavailable(() -> acquire(Duration.ZERO, NO_PAUSE, taking(0, Attempt.refused(UNREACHABLE, true))));
        assertThat(e.attempts()).isEqualTo(1);
        assertThat(remaining).containsExactly(0L);
    }

    @Test
    void anAttemptThatOverrunsTheWaitIsTheLast() {
        LockUnavailableException e = catchUnavailable(
                () -> acquire(Duration.ofMillis(50), NO_PAUSE, taking(80, Attempt.refused(UNREACHABLE, true))));
        assertThat(e.attempts()).isEqualTo(1);
        assertThat(e.getMessage()).startsWith("could not acquire 'r' within 80 ms (1 attempt): ");
    }

    @Test
    void votesAreCountedAndTheirEvidenceIsReadOnlyForTheLastAttempt() {
        AtomicInteger reads = new AtomicInteger();
        List<ServerAnswer> answers = List.of(
                new ServerAnswer("redis://a:6379", ServerAnswer.Kind.HELD_BY_OTHER, "holder 42@web-1"),
                new ServerAnswer("redis://b:6379", ServerAnswer.Kind.GRANTED, ""),
                new ServerAnswer("redis://c:6379", ServerAnswer.Kind.TIMED_OUT, ""));
        Attempt<String> outvoted = Attempt.outvoted(1, 2, () -> {
            reads.incrementAndGet();
            return answers;
        });
        LockUnavailableException e =
                catchUnavailable(() -> acquire(Duration.ofMillis(100), NO_PAUSE, taking(40, outvoted)));
        assertThat(e.attempts()).isEqualTo(3);
        assertThat(reads).hasValue(1);
        assertThat(e.votes()).isEqualTo(1);
        assertThat(e.quorum()).isEqualTo(2);
        assertThat(e.lastAttempt()).isEqualTo(answers);
        assertThat(e.getMessage()).contains("(3 attempts): last attempt got 1 of 3 votes, 2 needed");
    }

    @Test
    void whatAnAttemptThrowsEndsTheLoopWithoutAnotherAttempt() {
        AtomicInteger made = new AtomicInteger();
        assertThatThrownBy(() -> acquire(Duration.ofSeconds(1), NO_PAUSE, (number, remainingNanos) -> {
                    made.incrementAndGet();
                    throw new LockConfigurationException("r", number, List.of(UNREACHABLE));
                }))
                .isInstanceOf(LockConfigurationException.class);
        assertThat(made).hasValue(1);
    }

    @Test
    void anInterruptDuringThePauseEndsTheLoopAndKeepsTheFlag() {
        RetryPolicy pause = RetryPolicy.jitteredBackoff(Duration.ofMillis(1), Duration.ofMillis(1));
        AcquireLoop.Attempts<String> interrupted = (number, remainingNanos) -> {
            remaining.add(remainingNanos / MS);
            Thread.currentThread().interrupt();
            return Attempt.refused(UNREACHABLE, true);
        };
        long start = System.nanoTime();
        assertThatThrownBy(() -> acquire(Duration.ofSeconds(10), pause, interrupted))
                .isExactlyInstanceOf(QuorumlockException.class)
                .hasMessage("interrupted while waiting to acquire 'r'");
        assertThat(Thread.currentThread().isInterrupted()).isTrue();
        assertThat(remaining).hasSize(1);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void aNegativeWaitIsRefusedBeforeAnyAttempt() {
        assertThatThrownBy(() -> acquire(Duration.ofMillis(-1), NO_PAUSE, taking(0, Attempt.granted("lease"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxWait must not be negative, was -1 ms");
        assertThat(remaining).isEmpty();
    }

    @Test
    void aWaitLongerThanTheClockCanCountIsKeptWithoutOverflow() {
        assertThat(acquire(Duration.ofSeconds(Long.MAX_VALUE), NO_PAUSE, (number, remainingNanos) -> {
                    assertThat(remainingNanos).isPositive();
                    assertThat(now + remainingNanos).as("no overflow").isGreaterThan(now);
                    return Attempt.granted("lease");
                }))
                .isEqualTo("lease");
    }

    private static LockUnavailableException catchUnavailable(Runnable call) {
        try {
            call.run();
        } catch (LockUnavailableException e) {
            return e;
        }
        throw new AssertionError("no LockUnavailableException");
    }
}
