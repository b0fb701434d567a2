package io.quorumlock.cli.run;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** What {@code run} does when the lease is lost while the command runs: {@code --on-lost}. */
enum OnLost {
    /** SIGTERM to the command and what it started, SIGKILL after the grace period; exit code 76. */
    TERMINATE,
    /** A line on stderr; the command goes on, and its exit code is run's. */
    CONTINUE;

    /** The option's spelling: {@code terminate}, {@code continue}. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Reads {@code terminate} or {@code continue}, in any case. */
    static final class Converter implements ITypeConverter<OnLost> {
        @Override
        public OnLost convert(String value) {
            for (OnLost choice : values()) {
                if (choice.toString().equalsIgnoreCase(value.trim())) {
                    return choice;
                }
            }
            throw new TypeConversionException("'" + value + "' is not one of terminate, continue");
        }
    }

    /** The choices, for the help's {@code ${COMPLETION-CANDIDATES}}. */
    static final class Choices implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(values()).map(OnLost::toString).iterator();
        }
    }
}
