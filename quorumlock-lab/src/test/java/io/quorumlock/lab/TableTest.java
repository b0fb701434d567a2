package io.quorumlock.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.cli.Formats;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class TableTest {

    @Test
    void alignsLabelsLeftAndValuesRightWithNotesAfterThem() {
        Table table = new Table()
                .row("clients", 8)
                .row("units sold", "2,000", "all of them")
                .row("oversold", 0, "ok");

        assertThat(table.lines())
                .containsExactly("clients         8", "units sold  2,000   all of them", "oversold        0   ok");
    }

    @Test
    void formatsCountsRatesAndDurationsForPeople() {
        assertThat(Formats.count(1234567)).isEqualTo("1,234,567");
        assertThat(Formats.perSecond(1234.4)).isEqualTo("1,234 /s");
        assertThat(Formats.duration(Duration.ofMillis(4823))).isEqualTo("4.82 s");
        assertThat(Formats.duration(Duration.ofMillis(48))).isEqualTo("48 ms");
        assertThat(Formats.duration(Duration.ofNanos(1_260_000))).isEqualTo("1.3 ms");
    }

    @Test
    void aRecentRateForgetsWhatIsOlderThanItsWindow() {
        RecentRate rate = new RecentRate(Duration.ofSeconds(1));
        long second = 1_000_000_000L;

        assertThat(rate.update(0, 0)).isZero();
        assertThat(rate.update(second / 2, 500)).isEqualTo(1000.0);
        assertThat(rate.update(second, 1000)).isEqualTo(1000.0);
        assertThat(rate.update(2 * second, 1100)).isEqualTo(100.0); // the burst of the first second is forgotten
    }
}
