package io.quorumlock.torture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashSet;
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
    void aTwentyFiveSecondRunFitsEveryKindOneAfterAnother() {
        for (long seed = 0; seed < 500; seed++) {
            // A failover (the lease and 4 s) has runs of its own.
            Set<FaultKind> kinds = EnumSet.complementOf(EnumSet.of(FaultKind.FAILOVER));
            List<Fault> faults = Schedule.draw(seed, Duration.ofSeconds(25), kinds, LEASE);
            assertThat(faults.stream().map(Fault::kind).collect(Collectors.toSet()))
                    .as("seed %d", seed)
                    .containsAll(kinds);
            for (int i = 1; i < faults.size(); i++) {
                assertThat(faults.get(i).atMillis())
                        .isGreaterThan(faults.get(i - 1).endMillis());
            }
            assertThat(faults.get(faults.size() - 1).endMillis()).isLessThan(25_000);
        }
    }

    @Test
    void aPartitionLastsTwiceTheLeaseAndCutsOffAClientDrawnFromTheSeed() {
        Set<Integer> clients = new HashSet<>();
        for (long seed = 0; seed < 50; seed++) {
            List<Fault> faults = Schedule.draw(seed, Duration.ofSeconds(30), EnumSet.of(FaultKind.PARTITION), LEASE);
            assertThat(faults)
                    .isNotEmpty()
                    .allSatisfy(f -> assertThat(f.durationMillis()).isEqualTo(4_000))
                    .allSatisfy(f -> assertThat(f.latencyMillis()).isZero());
            faults.forEach(f -> clients.add(f.client(5)));
        }
        assertThat(clients).containsExactlyInAnyOrder(0, 1, 2, 3, 4);
        assertThat(Schedule.draw(1, Duration.ofSeconds(30), EnumSet.of(FaultKind.PARTITION), Duration.ofSeconds(3)))
                .isNotEmpty()
                .allSatisfy(f -> assertThat(f.durationMillis()).isEqualTo(6_000));
    }

    @Test
    void aFailoverOutlastsTheLeaseByTheReplicasCutAndThePromotion() {
        assertThat(Schedule.draw(3, Duration.ofSeconds(60), EnumSet.of(FaultKind.FAILOVER), Duration.ofSeconds(5)))
                .hasSizeBetween(5, 6)
                .allSatisfy(f -> assertThat(f.durationMillis()).isEqualTo(9_000));
        assertThat(FaultKind.parse("failover,kill")).containsExactlyInAnyOrder(FaultKind.FAILOVER, FaultKind.KILL);
        // A lease shorter than the promotion runs out before a replica serves: the run says so.
        assertThat(Torture.failoverNote(failovers(Strategy.SENTINEL_LEADER, Duration.ofSeconds(2))))
                .hasValue("failover: a lease of 2.0 s runs out before the sentinels promote a replica (about 2.5 s),"
                        + " so no failover can give two holders; --ttl 5s shows what a failover does to a lease that"
                        + " outlasts it");
        assertThat(Torture.failoverNote(failovers(Strategy.SENTINEL_LEADER, Duration.ofSeconds(5))))
                .isEmpty();
        assertThat(Torture.failoverNote(failovers(Strategy.REDLOCK, Duration.ofSeconds(2))))
                .as("no Sentinel strategy: nothing to say")
                .isEmpty();
    }

    /** 60 s of failovers on {@code strategy} with leases of {@code ttl}. */
    private static Torture.Options failovers(Strategy strategy, Duration ttl) {
        return new Torture.Options(
                EnumSet.of(strategy),
                EnumSet.of(FaultKind.FAILOVER),
                Duration.ofSeconds(60),
                3,
                1,
                Path.of("unused"),
                true,
                ttl);
    }

    @Test
    void aSlowFaultAddsFiftyToThreeHundredMillisecondsForOneToTwoSeconds() {
        Set<Long> latencies = new HashSet<>();
        for (long seed = 0; seed < 50; seed++) {
            List<Fault> faults = Schedule.draw(seed, Duration.ofSeconds(30), EnumSet.of(FaultKind.SLOW), LEASE);
            assertThat(faults).isNotEmpty().allSatisfy(f -> {
                assertThat(f.durationMillis()).isBetween(1_000L, 1_999L);
                assertThat(f.latencyMillis()).isBetween(50L, 300L);
            });
            faults.forEach(f -> latencies.add(f.latencyMillis()));
        }
        assertThat(latencies).as("latencies drawn per fault").hasSizeGreaterThan(100);
        assertThat(Schedule.draw(7, Duration.ofSeconds(60), EnumSet.allOf(FaultKind.class), LEASE))
                .filteredOn(f -> f.kind() != FaultKind.SLOW)
                .isNotEmpty()
                .allSatisfy(f -> assertThat(f.latencyMillis()).isZero());
    }

    @Test
    void networkFaultsAreDrawnAgainForTheSameSeed() {
        Set<FaultKind> network = EnumSet.of(FaultKind.PARTITION, FaultKind.SLOW);
        List<Fault> faults = Schedule.draw(42, Duration.ofSeconds(60), network, LEASE);
        assertThat(faults).extracting(Fault::kind).contains(FaultKind.PARTITION, FaultKind.SLOW);
        assertThat(Schedule.draw(42, Duration.ofSeconds(60), network, LEASE)).isEqualTo(faults);
        assertThat(Schedule.draw(43, Duration.ofSeconds(60), network, LEASE)).isNotEqualTo(faults);
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
        assertThat(FaultKind.parse("partition,SLOW")).containsExactlyInAnyOrder(FaultKind.PARTITION, FaultKind.SLOW);
        assertThatThrownBy(() -> FaultKind.parse("kill,netsplit"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--faults")
                .hasMessageContaining("'netsplit'")
                .hasMessageContaining("kill, freeze, restart, clock, pause, expire, partition, slow");
        assertThat(Strategy.parse("redlock,etcd")).containsExactlyInAnyOrder(Strategy.REDLOCK, Strategy.ETCD);
        assertThat(Strategy.parse("postgres,mariadb,postgres-unfenced"))
                .containsExactlyInAnyOrder(Strategy.POSTGRES, Strategy.MARIADB, Strategy.POSTGRES_UNFENCED);
        assertThatThrownBy(() -> Strategy.parse("redisson"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--strategies")
                .hasMessageContaining("redlock-guarded");
    }
}
