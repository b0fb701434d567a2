package io.quorumlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The limit of a wait for a server, scaled by the time scale and the load, and what it tells, on fake time. */
class ServerWaitTest {

    private static final String MEMBER = "etcd member member-2 at http://127.0.0.1:21824";

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final double[] load = {1.0};
    private final WaitRecorder told = new WaitRecorder();
    private final List<String> statuses = told.statuses;
    private final List<String> lines = told.lines;

    private ServerWait serverWait(double scale) {
        return new ServerWait(MEMBER, "healthy", Duration.ofSeconds(15), scale, () -> load[0], now::get, List.of(told));
    }

    private void advance(Duration duration) {
        now.addAndGet(duration.toNanos());
    }

    @Test
    void theLimitIsTheBoundTimesTheTimeScaleTimesTheLoad() {
        load[0] = 2.0;
        ServerWait wait = serverWait(3);

        assertThat(wait.limit()).isEqualTo(Duration.ofSeconds(90));
        advance(Duration.ofSeconds(89));
        assertThat(wait.expired()).isFalse();
        advance(Duration.ofSeconds(1));
        assertThat(wait.expired()).isTrue();
    }

    @Test
    void aMachineThatGetsBusierWaitsLongerAndTheLimitNeverShrinks() {
        ServerWait wait = serverWait(1);
        assertThat(wait.limit()).isEqualTo(Duration.ofSeconds(15));

        load[0] = 4.0;
        advance(Duration.ofSeconds(14));
        assertThat(wait.expired()).isFalse();
        assertThat(wait.limit()).isEqualTo(Duration.ofSeconds(60));

        load[0] = 1.0;
        advance(Duration.ofSeconds(10));
        assertThat(wait.expired()).isFalse();
        assertThat(wait.limit()).isEqualTo(Duration.ofSeconds(60));
        advance(Duration.ofSeconds(36));
        assertThat(wait.expired()).isTrue();
    }

    @Test
    void aQuickWaitTellsNothing() {
        ServerWait wait = serverWait(1);
        advance(Duration.ofMillis(600));
        assertThat(wait.expired()).isFalse();
        wait.done();

        assertThat(statuses).isEmpty();
        assertThat(lines).isEmpty();
    }

    @Test
    void aSlowWaitShowsWhatItWaitsForSaysOnceThatItIsSlowAndWhenItEnds() {
        ServerWait wait = serverWait(3);
        advance(Duration.ofSeconds(1));
        assertThat(wait.expired()).isFalse();
        assertThat(statuses).containsExactly("waiting for " + MEMBER + " to be healthy: 1.0 s (at most 45 s)");
        assertThat(lines).isEmpty();

        for (int second = 2; second <= 23; second++) {
            advance(Duration.ofSeconds(1));
            assertThat(wait.expired()).isFalse();
        }
        wait.done();

        assertThat(statuses)
                .hasSize(23)
                .last()
                .isEqualTo("waiting for " + MEMBER + " to be healthy: 23 s (at most 45 s)");
        assertThat(lines)
                .containsExactly(
                        MEMBER + " not healthy after 5.0 s; waiting up to 45 s (load 1 per processor)",
                        MEMBER + " healthy after 23 s");
    }

    @Test
    void theFailureSaysWhatWasAwaitedTheLimitHowItCameAboutAndTheRemedy() {
        load[0] = 2.5;
        ServerWait wait = serverWait(0.5);
        advance(Duration.ofSeconds(19));

        assertThat(wait.expired()).isTrue();
        assertThat(wait.failure())
                .isEqualTo(MEMBER + " was not healthy within 19 s (the test kit's 15 s × quorumlock.test.timeScale"
                        + " 0.5 × load 2.5 per processor); on a machine this busy, set quorumlock.test.timeScale"
                        + " higher");
    }

    @Test
    void aLookAtTheServerWaitsTheProbeTimesTheLoadAtMostTenTimes() {
        assertThat(ServerWait.probeTimeout(Duration.ofMillis(500)))
                .isBetween(Duration.ofMillis(500), Duration.ofSeconds(5));
    }

    @Test
    void durationsReadAsATerminalShowsThem() {
        assertThat(ServerWait.format(Duration.ofMillis(500))).isEqualTo("500 ms");
        assertThat(ServerWait.format(Duration.ofMillis(2_540))).isEqualTo("2.5 s");
        assertThat(ServerWait.format(Duration.ofMillis(44_600))).isEqualTo("45 s");
    }

    @Test
    void theLoadScaleIsTheLoadPerProcessorBetweenOneAndTheMost() {
        assertThat(TestTime.loadScale(8.0, 2)).isEqualTo(4.0);
        assertThat(TestTime.loadScale(0.5, 2)).isEqualTo(1.0);
        assertThat(TestTime.loadScale(-1.0, 2))
                .as("no load average on this system")
                .isEqualTo(1.0);
        assertThat(TestTime.loadScale(Double.NaN, 2)).isEqualTo(1.0);
        assertThat(TestTime.loadScale(100.0, 2)).isEqualTo(TestTime.MAX_LOAD_SCALE);
    }
}
