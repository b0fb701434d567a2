package io.quorumlock.cli;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads a duration option: a number and a unit, such as {@code 500ms}, {@code 10s}, {@code 1.5s},
 * {@code 2m} or {@code 1h}, or ISO-8601 such as {@code PT10S}. A sign is kept, so that the command
 * can say a negative value is not allowed rather than that it is not a duration.
 */
public final class DurationConverter implements ITypeConverter<Duration> {

    private static final Pattern NUMBER_AND_UNIT = Pattern.compile("([-+]?\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)");

    @Override
    public Duration convert(String value) {
        String text = value.trim().toLowerCase(Locale.ROOT);
        Matcher matcher = NUMBER_AND_UNIT.matcher(text);
        try {
            if (matcher.matches()) {
                BigDecimal nanos =
                        new BigDecimal(matcher.group(1)).multiply(BigDecimal.valueOf(nanosPer(matcher.group(2))));
                return Duration.ofNanos(nanos.setScale(0, RoundingMode.HALF_UP).longValueExact());
            }
            return Duration.parse(text.toUpperCase(Locale.ROOT));
        } catch (ArithmeticException e) {
            throw new TypeConversionException("'" + value + "' is too long a duration");
        } catch (DateTimeParseException e) {
            throw new TypeConversionException(
                    "'" + value + "' is not a duration: use a number and a unit, such as 500ms, 10s, 2m or 1h");
        }
    }

    private static long nanosPer(String unit) {
        return switch (unit) {
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m" -> 60_000_000_000L;
            default -> 3_600_000_000_000L;
        };
    }
}
