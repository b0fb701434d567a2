package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.redis.QuorumMath.Tally;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class QuorumMathTest {

    private static final long MS = 1_000_000L;

    @ParameterizedTest
    @CsvSource({"1,1", "2,2", "3,2", "4,3", "5,3", "6,4", "7,4"})
    void quorumIsAMajority(int nodes, int quorum) {
        assertThat(QuorumMath.quorum(nodes)).isEqualTo(quorum);
    }

    @Test
    void aResourceIsFreeOnAQuorumWhenItsQuorumthShortestTtlRunsOut() {
        // no key (-2) is free now; no TTL (-1, or no answer) never frees a node by itself
        assertThat(QuorumMath.quorumFreeInNanos(new long[] {300, -2, 100, 200, -1}))
                .isEqualTo(200 * MS);
        assertThat(QuorumMath.quorumFreeInNanos(new long[] {-2, -2, 5000})).isZero();
        assertThat(QuorumMath.quorumFreeInNanos(new long[] {-1, -1, 10})).isEqualTo(Long.MAX_VALUE);
        assertThat(QuorumMath.quorumFreeInNanos(new long[] {42})).isEqualTo(42 * MS);
    }

    @Test
    void aSplitVoteBacksOffARandomPartOfTwoAttemptsDoublingUpTo16Times() {
        for (int i = 0; i < 1000; i++) {
            assertThat(QuorumMath.contestBackoffNanos(MS, 1, 10 * MS, 200 * MS)).isBetween(0L, 2 * MS);
            assertThat(QuorumMath.contestBackoffNanos(MS, 3, 10 * MS, 200 * MS)).isBetween(0L, 8 * MS);
            assertThat(QuorumMath.contestBackoffNanos(MS, 30, 10 * MS, 200 * MS))
                    .isBetween(0L, 32 * MS);
            // an attempt slowed by a busy machine is no measure: the base is at most the retry's minimum
            assertThat(QuorumMath.contestBackoffNanos(500 * MS, 1, 10 * MS, 200 * MS))
                    .isBetween(0L, 10 * MS);
            assertThat(QuorumMath.contestBackoffNanos(500 * MS, 9, 10 * MS, 100 * MS))
                    .isBetween(0L, 100 * MS);
        }
    }

    @Test
    void wokenWaitersOfOtherClientsTryInTheOrderTheyCameOneAttemptApart() {
        // 8 clients listen, the releaser among them: the oldest of the 7 waiters (6 releases
        // waited through) tries at once, the newest 6 attempts later
        assertThat(QuorumMath.turnDelayNanos(8, 6, MS)).isZero();
        assertThat(QuorumMath.turnDelayNanos(8, 0, MS)).isEqualTo(6 * MS);
        assertThat(QuorumMath.turnDelayNanos(8, 3, 300_000)).isEqualTo(3 * 300_000);
        // a lone waiter, or one woken by a release nobody else heard, never waits
        assertThat(QuorumMath.turnDelayNanos(1, 0, MS)).isZero();
        assertThat(QuorumMath.turnDelayNanos(2, 0, MS)).isZero();
        // an attempt's time counts between 0.1 and 2 ms
        assertThat(QuorumMath.turnDelayNanos(3, 0, 10)).isEqualTo(100_000);
        assertThat(QuorumMath.turnDelayNanos(3, 0, 50 * MS)).isEqualTo(2 * MS);
    }

    @Test
    void aReleaseMessageNamesHowManyClientsListened() {
        assertThat(ReleaseChannels.listeners("3f786850e387550fdab836ed7e6dc881de23001b 7"))
                .isEqualTo(7);
        assertThat(ReleaseChannels.listeners("3f786850e387550fdab836ed7e6dc881de23001b 0"))
                .isEqualTo(1);
        // a message of something else on the channel: no count, or garbage, or a huge number
        assertThat(ReleaseChannels.listeners("3f786850e387550fdab836ed7e6dc881de23001b"))
                .isEqualTo(1);
        assertThat(ReleaseChannels.listeners("x abc")).isEqualTo(1);
        assertThat(ReleaseChannels.listeners("x 123456789012")).isEqualTo(1);
        assertThat(ReleaseChannels.listeners("")).isEqualTo(1);
    }

    @Test
    void aReleaseMessageMayNameWhoseTurnItIs() {
        String digest = "3f786850e387550fdab836ed7e6dc881de23001b";
        assertThat(ReleaseChannels.listeners(digest + " 7 4611686018427387904")).isEqualTo(7);
        assertThat(ReleaseChannels.turnOf(digest + " 7 4611686018427387904")).isEqualTo(4611686018427387904L);
        assertThat(ReleaseChannels.turnOf(digest + " 7 " + Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
        // no turn named (nobody in line, or an older release script), or not a waiter's id
        assertThat(ReleaseChannels.turnOf(digest + " 7")).isZero();
        assertThat(ReleaseChannels.turnOf(digest)).isZero();
        assertThat(ReleaseChannels.turnOf(digest + " 7 x")).isZero();
        assertThat(ReleaseChannels.turnOf(digest + " 7 -5")).isZero();
        assertThat(ReleaseChannels.turnOf(digest + " 7 99999999999999999999999"))
                .isZero();
        assertThat(ReleaseChannels.turnOf("")).isZero();
    }

    @Test
    void aReleaseToWaitersElsewhereLeavesThemAtLeast5Ms() {
        assertThat(QuorumMath.yieldNanos(100_000)).isEqualTo(5 * MS);
        assertThat(QuorumMath.yieldNanos(3 * MS)).isEqualTo(12 * MS);
    }

    @Test
    void validityIsTtlMinusElapsedMinusDrift() {
        // ttl 10 s, 1% drift => 100 ms + 2 ms; 30 ms elapsed
        assertThat(QuorumMath.validityNanos(10_000 * MS, 30 * MS, 0.01)).isEqualTo((10_000 - 30 - 102) * MS);
        assertThat(QuorumMath.driftNanos(10_000 * MS, 0.0)).isEqualTo(2 * MS);
    }

    @Test
    void validityIsAlwaysShorterThanTtl() {
        assertThat(QuorumMath.validityNanos(5 * MS, 0, 0.0)).isLessThan(5 * MS);
        assertThat(QuorumMath.isHeld(3, 5, QuorumMath.validityNanos(2 * MS, 0, 0.0)))
                .isFalse();
    }

    /** Every vote pattern of every small cluster: held iff a majority said yes and validity is left. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7})
    void everyVotePatternIsDecidedByMajority(int nodes) {
        for (int pattern = 0; pattern < (1 << nodes); pattern++) {
            int yes = Integer.bitCount(pattern);
            boolean majority = yes * 2 > nodes;
            assertThat(QuorumMath.isHeld(yes, nodes, 1))
                    .as("%d nodes, votes %s", nodes, Integer.toBinaryString(pattern))
                    .isEqualTo(majority);
            assertThat(QuorumMath.isHeld(yes, nodes, 0)).isFalse();
            assertThat(QuorumMath.tally(yes, nodes - yes, nodes)).isEqualTo(majority ? Tally.QUORUM : Tally.NO_QUORUM);
        }
    }

    /** The early decision never contradicts the final one, whatever the order the answers arrive in. */
    @ParameterizedTest
    @ValueSource(ints = {1, 3, 5})
    void earlyDecisionAgreesWithTheFinalCount(int nodes) {
        for (int pattern = 0; pattern < (1 << nodes); pattern++) {
            Tally finalTally = QuorumMath.tally(Integer.bitCount(pattern), nodes - Integer.bitCount(pattern), nodes);
            int yes = 0;
            int no = 0;
            for (int i = 0; i < nodes; i++) {
                if ((pattern & (1 << i)) != 0) {
                    yes++;
                } else {
                    no++;
                }
                Tally now = QuorumMath.tally(yes, no, nodes);
                if (now != Tally.OPEN) {
                    assertThat(now).isEqualTo(finalTally);
                }
            }
            assertThat(QuorumMath.tally(yes, no, nodes)).isNotEqualTo(Tally.OPEN);
        }
    }

    @Test
    void tallyDecidesAsSoonAsCertain() {
        assertThat(QuorumMath.tally(3, 0, 5)).isEqualTo(Tally.QUORUM);
        assertThat(QuorumMath.tally(2, 2, 5)).isEqualTo(Tally.OPEN);
        assertThat(QuorumMath.tally(0, 3, 5)).isEqualTo(Tally.NO_QUORUM);
        assertThat(QuorumMath.tally(2, 3, 5)).isEqualTo(Tally.NO_QUORUM);
    }

    @Test
    void ttlMustBePositiveAndLongerThanThreeNodeTimeouts() {
        Duration timeout = Duration.ofMillis(50);
        assertThat(QuorumMath.ttlProblem(Duration.ofMillis(151), timeout)).isNull();
        assertThat(QuorumMath.ttlProblem(Duration.ofMillis(150), timeout))
                .isEqualTo(
                        "ttl must be longer than 3 x nodeTimeout (150 ms), was 150 ms: raise the ttl or lower nodeTimeout");
        assertThat(QuorumMath.ttlProblem(Duration.ZERO, timeout)).isEqualTo("ttl must be positive, was 0 ms");
        assertThat(QuorumMath.ttlProblem(Duration.ofSeconds(-1), timeout)).startsWith("ttl must be positive");
        assertThat(QuorumMath.ttlProblem(null, timeout)).isEqualTo("ttl must not be null");
    }
}
