package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The restart guard's rule: a node votes once it has been up for the longest TTL. */
class RestartGuardTest {

    private static final long S = 1_000_000_000L;
    private static final long MS = 1_000_000L;

    @Test
    void aNodeUpForLessThanTheLongestTtlWaitsForTheRest() {
        assertThat(RestartGuard.waitNanos(100 * S, 103 * S, 30 * S)).isEqualTo(27 * S);
        assertThat(RestartGuard.exclusion(100 * S, 103 * S, 30 * S)).isEqualTo("restart guard: up 3 s, votes in 27 s");
    }

    @Test
    void aNodeUpForTheLongestTtlOrMoreVotes() {
        assertThat(RestartGuard.waitNanos(100 * S, 130 * S, 30 * S)).isZero();
        assertThat(RestartGuard.exclusion(100 * S, 130 * S, 30 * S)).isNull();
        assertThat(RestartGuard.exclusion(100 * S, 500 * S, 30 * S)).isNull();
    }

    @Test
    void withoutAnyTtlYetEveryNodeVotes() {
        assertThat(RestartGuard.exclusion(100 * S, 100 * S, 0)).isNull();
    }

    @Test
    void aStartEstimatedAfterTheRoundBeganCountsAsUpForNoTime() {
        // The start is estimated from the INFO reply, which may come after the round's start.
        assertThat(RestartGuard.waitNanos(100 * S + 5 * MS, 100 * S, 2 * S)).isEqualTo(2 * S + 5 * MS);
        assertThat(RestartGuard.exclusion(100 * S + 5 * MS, 100 * S, 2 * S))
                .isEqualTo("restart guard: up 0 s, votes in 2.1 s");
    }

    @Test
    void showsTenthsBelowTenSecondsAndRoundsTheWaitUp() {
        assertThat(RestartGuard.seconds(1_250 * MS, false)).isEqualTo("1.2 s");
        assertThat(RestartGuard.seconds(1_250 * MS, true)).isEqualTo("1.3 s");
        assertThat(RestartGuard.seconds(400 * MS, true)).isEqualTo("0.4 s");
        assertThat(RestartGuard.seconds(9_990 * MS, true)).isEqualTo("10 s");
        assertThat(RestartGuard.seconds(26_100 * MS, true)).isEqualTo("27 s");
        assertThat(RestartGuard.seconds(26_900 * MS, false)).isEqualTo("26 s");
    }
}
