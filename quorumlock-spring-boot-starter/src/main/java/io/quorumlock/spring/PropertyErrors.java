package io.quorumlock.spring;

import io.quorumlock.spi.Secrets;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/** Turns a builder's IllegalArgumentException, which names a builder setting, into one naming the property. */
final class PropertyErrors {

    private PropertyErrors() {}

    /** Builds; a refusal's message is prefixed with the property that {@code property} finds in it. */
    static <T> T naming(Function<String, String> property, Supplier<T> build) {
        try {
            return build.get();
        } catch (QuorumlockPropertyException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            String message = String.valueOf(e.getMessage());
            throw new QuorumlockPropertyException(property.apply(message) + ": " + message, e);
        }
    }

    /**
     * The entry of a list property that a message quotes ({@code quorumlock.redis.nodes[1]}), the
     * last one quoted if several are (the second of two duplicates), or else the list property.
     */
    static String entry(String property, List<String> values, String message) {
        for (int i = values.size() - 1; i >= 0; i--) {
            String value = values.get(i);
            boolean quoted = value == null || value.isBlank()
                    ? message.contains("must not be empty")
                    : message.contains(Secrets.redactUri(value.trim()));
            if (quoted) {
                return property + "[" + i + "]";
            }
        }
        return property;
    }
}
