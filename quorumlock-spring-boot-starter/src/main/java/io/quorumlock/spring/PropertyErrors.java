package io.quorumlock.spring;

import io.quorumlock.IllegalSettingException;
import java.util.Map;
import java.util.function.Supplier;

/** Turns a builder's refusal of a setting into one naming the property that the setting came from. */
final class PropertyErrors {

    /** How a table marks a list property: its entry is named by the refused value's index. */
    private static final String LIST = "[]";

    private PropertyErrors() {}

    /**
     * Builds; a refusal's message is prefixed with the property that {@code properties} maps its
     * setting to. A table maps a builder setting to its property, {@code "quorumlock.redis.nodes[]"}
     * for a list property, and may map one value of a setting apart ({@code
     * "tlsClientCertificate[1]"}). A setting without a property is named as the builder names it,
     * and a refusal that names no setting by {@code otherwise}.
     */
    static <T> T naming(String otherwise, Map<String, String> properties, Supplier<T> build) {
        try {
            return build.get();
        } catch (QuorumlockPropertyException e) {
            throw e;
        } catch (IllegalSettingException e) {
            throw new QuorumlockPropertyException(property(properties, e) + ": " + e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new QuorumlockPropertyException(otherwise + ": " + e.getMessage(), e);
        }
    }

    /** The property of a refused setting, with the entry of a list property ({@code quorumlock.redis.nodes[1]}). */
    static String property(Map<String, String> properties, IllegalSettingException e) {
        String entry = e.index().isPresent() ? "[" + e.index().getAsInt() + "]" : "";
        String value = entry.isEmpty() ? null : properties.get(e.setting() + entry);
        if (value != null) {
            return value;
        }
        String property = properties.get(e.setting());
        if (property == null) {
            return e.setting() + entry;
        }
        return property.endsWith(LIST) ? property.substring(0, property.length() - LIST.length()) + entry : property;
    }
}
