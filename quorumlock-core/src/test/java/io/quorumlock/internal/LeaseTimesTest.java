package io.quorumlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The arithmetic of a lease's life. */
class LeaseTimesTest {

    private static final long MS = 1_000_000L;
    private static final long TTL = 3_000 * MS;

    @Test
    void aLeaseRenewsWhenTwoThirdsOfItsTtlAreLeftCountedFromItsEnd() {
        long end = 10_000 * MS;
        assertThat(LeaseTimes.renewAt(end, TTL)).isEqualTo(8_000 * MS);
        // Granted late (0.77 s of 3 s left): the renewal is already due.
        assertThat(LeaseTimes.renewAt(end, TTL) - (end - 770 * MS)).isNegative();
    }

    @Test
    void doubtComesAtAThirdLeftButNotBeforeHalfTheTimeLeftWhenTheRenewalFellDue() {
        long end = 10_000 * MS;
        assertThat(LeaseTimes.doubtAt(end, TTL, end - 2_000 * MS)).isEqualTo(9_000 * MS);
        assertThat(LeaseTimes.doubtAt(end, TTL, end - 800 * MS)).isEqualTo(9_600 * MS);
    }

    @Test
    void theEndOfARoundIsItsSendPlusTheTtlLessTheDrift() {
        assertThat(LeaseTimes.driftNanos(TTL)).isEqualTo(32 * MS);
        assertThat(LeaseTimes.endAfter(1_000 * MS, TTL)).isEqualTo(3_968 * MS);
    }

    @Test
    void aFailedRoundIsRetriedWhileARoundCanEndWithATenthOfTheTtlLeft() {
        long round = 50 * MS;
        long end = 1_000 * MS;
        assertThat(LeaseTimes.lossNoticeNanos(TTL)).isEqualTo(300 * MS);
        assertThat(LeaseTimes.doubtNoticeNanos(TTL)).isEqualTo(1_000 * MS);
        // Half a round, doubling up to two rounds.
        assertThat(LeaseTimes.retryAfterNanos(0, end, TTL, round, 1)).isEqualTo(25 * MS);
        assertThat(LeaseTimes.retryAfterNanos(0, end, TTL, round, 2)).isEqualTo(50 * MS);
        assertThat(LeaseTimes.retryAfterNanos(0, end, TTL, round, 3)).isEqualTo(100 * MS);
        assertThat(LeaseTimes.retryAfterNanos(0, end, TTL, round, 30)).isEqualTo(100 * MS);
        // Never later than the last round that ends with the notice left: 400 - 50 - 300 ms.
        assertThat(LeaseTimes.retryAfterNanos(600 * MS, end, TTL, round, 3)).isEqualTo(50 * MS);
        assertThat(LeaseTimes.retryAfterNanos(650 * MS, end, TTL, round, 3)).isZero();
        assertThat(LeaseTimes.retryAfterNanos(651 * MS, end, TTL, round, 1))
                .as("no round can end in time: lost now")
                .isEqualTo(-1);
    }

    @Test
    void instantsCompareBySubtractionSoTheTickerMayWrap() {
        assertThat(LeaseTimes.later(Long.MAX_VALUE, Long.MAX_VALUE + 10)).isEqualTo(Long.MAX_VALUE + 10);
    }
}
