package io.quorumlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine.TypeConversionException;

class DurationConverterTest {

    private final DurationConverter converter = new DurationConverter();

    @ParameterizedTest
    @CsvSource({
        "500ms, 500",
        "10s, 10000",
        "1.5s, 1500",
        "2m, 120000",
        "1h, 3600000",
        "' 3 S ', 3000",
        "-1s, -1000",
        "PT0.25S, 250",
        "pt2m, 120000"
    })
    void readsANumberAndAUnitOrIso8601(String text, long millis) {
        assertThat(converter.convert(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @Test
    void keepsFractionsOfAMillisecond() {
        assertThat(converter.convert("0.5ms")).isEqualTo(Duration.ofNanos(500_000));
    }

    @Test
    void rejectsWhatIsNotADurationAndSaysWhatIs() {
        for (String text : new String[] {"", "10", "ten seconds", "10 sec", "1d"}) {
            assertThatThrownBy(() -> converter.convert(text))
                    .isInstanceOf(TypeConversionException.class)
                    .hasMessageContaining("is not a duration: use a number and a unit, such as 500ms, 10s");
        }
    }

    @Test
    void rejectsADurationTooLongToCount() {
        assertThatThrownBy(() -> converter.convert("99999999999999999h"))
                .isInstanceOf(TypeConversionException.class)
                .hasMessage("'99999999999999999h' is too long a duration");
    }
}
