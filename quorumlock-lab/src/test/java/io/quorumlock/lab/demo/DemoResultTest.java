package io.quorumlock.lab.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DemoResultTest {

    @Test
    void passesWhenEveryUnitThatLeftTheStockWasSoldOnce() {
        DemoResult result = result(2000, 2000, 0, 0);

        assertThat(result.oversold()).isZero();
        assertThat(result.lost()).isZero();
        assertThat(result.passed()).isTrue();
        assertThat(result.verdict()).startsWith("OK:");
        assertThat(result.table().lines()).anySatisfy(line -> assertThat(line).matches("oversold\\s+0 .*= 0"));
    }

    @Test
    void unitsSoldTwiceAreOversold() {
        // Two clients read 10, both sold 3, both wrote 7: a lost update.
        DemoResult result = result(10, 6, 7, 0);

        assertThat(result.oversold()).isEqualTo(3);
        assertThat(result.lost()).isZero();
        assertThat(result.passed()).isFalse();
        assertThat(result.verdict()).isEqualTo("FAILED: 3 units oversold, 0 lost, 0 client errors.");
    }

    @Test
    void stockBelowZeroIsOversoldEvenWhenTheSumsAgree() {
        DemoResult result = result(10, 12, -2, 0);

        assertThat(result.oversold()).isEqualTo(2);
        assertThat(result.passed()).isFalse();
    }

    @Test
    void unitsGoneWithoutASaleAreLost() {
        DemoResult result = result(10, 4, 5, 0);

        assertThat(result.lost()).isEqualTo(1);
        assertThat(result.oversold()).isZero();
        assertThat(result.passed()).isFalse();
        assertThat(result.table().lines()).anySatisfy(line -> assertThat(line).startsWith("lost"));
    }

    @Test
    void aClientErrorFailsTheRun() {
        DemoResult result = result(10, 10, 0, 1);

        assertThat(result.passed()).isFalse();
        assertThat(result.table().lines()).anySatisfy(line -> assertThat(line).contains("java.sql.SQLException: boom"));
    }

    private static DemoResult result(int initial, long sold, int left, long errors) {
        Tally.Counts counts = new Tally.Counts(sold / 2, 3, 4, sold, errors);
        return new DemoResult(
                List.of("redis://127.0.0.1:1"),
                1,
                "no faults",
                2,
                counts,
                errors == 0 ? Optional.empty() : Optional.of("java.sql.SQLException: boom"),
                initial,
                left,
                Duration.ofSeconds(2),
                Latency.of(new long[] {3_000_000, 1_000_000, 2_000_000}));
    }
}
