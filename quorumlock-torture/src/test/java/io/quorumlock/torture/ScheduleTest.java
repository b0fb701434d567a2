package io.quorumlock.torture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ScheduleTest {

    private static final Duration LEASE = Duration.ofSeconds(2);

    @Test
    void theSameSeedGivesTheSameSchedule() {
        Set<FaultKind> all = EnumSet.allOf(FaultKind.class);
        assertThat(Schedule.draw(42, Duration.ofSeconds(60), all, LEASE))
                .isEqualTo(Schedule.draw(42, Duration.ofSeconds(60), all, LEASE))
                .isNotEqualTo(Schedule.draw(43, Duration.ofSeconds(60), all, LEASE));
    }

    @Test
    void aTwentySecondRunFitsEveryKindOneAfterAnother() {
        for (long seed = 0; seed < 500; seed++) {
            List<Fault> faults = Schedule.draw(seed, Duration.ofSeconds(20), EnumSet.allOf(FaultKind.class), LEASE);
            assertThat(faults.stream().map(Fault::kind).collect(Collectors.toSet()))
                    .as("seed %d", seed)
                    .containsAll(EnumSet.allOf(FaultKind.class));
            for (int i = 1; i < faults.size(); i++) {
                assertThat(faults.get(i).atMillis())
                        .isGreaterThan(faults.get(i - 1).endMillis());
            }
            assertThat(faults.get(faults.size() - 1).endMillis()).isLessThan(20_000);
        }
    }

    @Test
    void aPauseOutlastsTheLeaseTwice() {
        List<Fault> faults = Schedule.draw(1, Duration.ofSeconds(30), EnumSet.of(FaultKind.PAUSE), LEASE);
        assertThat(faults)
                .isNotEmpty()
                .allSatisfy(f -> assertThat(f.durationMillis()).isEqualTo(5_000));
    }

    @Test
    void onlyTheKindsAskedForAreDrawn() {
        assertThat(Schedule.draw(1, Duration.ofSeconds(30), EnumSet.of(FaultKind.KILL), LEASE))
                .isNotEmpty()
                .allSatisfy(f -> assertThat(f.kind()).isEqualTo(FaultKind.KILL));
        assertThat(Schedule.draw(1, Duration.ofSeconds(30), EnumSet.noneOf(FaultKind.class), LEASE))
                .isEmpty();
    }

    @Test
    void restartsAndClockJumpsHitAQuorumOtherFaultsOneNode() {
        Fault fault = new Fault(FaultKind.CLOCK, 0, 0, 4);
        assertThat(fault.nodes(5, true)).containsExactly(4, 0, 1);
        assertThat(fault.nodes(5, false)).containsExactly(4);
        assertThat(fault.nodes(1, true)).containsExactly(0);
    }

    @Test
    void unknownNamesAreRefusedWithTheKnownOnes() {
        assertThat(FaultKind.parse("all")).isEqualTo(EnumSet.allOf(FaultKind.class));
        assertThat(FaultKind.parse("kill, clock")).containsExactlyInAnyOrder(FaultKind.KILL, FaultKind.CLOCK);
        assertThatThrownBy(() -> FaultKind.parse("kill,partition"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--faults")
                .hasMessageContaining("'partition'")
                .hasMessageContaining("kill, freeze, restart, clock, pause, expire");
        assertThat(Strategy.parse("redlock,etcd")).containsExactlyInAnyOrder(Strategy.REDLOCK, Strategy.ETCD);
        assertThatThrownBy(() -> Strategy.parse("redisson"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--strategies")
                .hasMessageContaining("redlock-guarded");
    }
}
