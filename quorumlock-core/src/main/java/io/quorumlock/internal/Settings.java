package io.quorumlock.internal;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.LockListener;
import io.quorumlock.RetryPolicy;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The checks of the builders' settings and of the locks' arguments. Each one returns the value it
 * was given if it is usable, and otherwise throws an {@link IllegalSettingException} that names
 * the setting, the value and the remedy.
 */
public final class Settings {

    private Settings() {}

    /**
     * Refuses {@code setting} unless {@code usable}, with the message {@code messageFormat}
     * formatted with {@code args} ({@link String#format}, in the root locale). For settings, not
     * for the arguments of every call: the arguments are boxed into an array each time.
     */
    public static void requireArgument(boolean usable, String setting, String messageFormat, Object... args) {
        if (!usable) {
            throw new IllegalSettingException(setting, String.format(Locale.ROOT, messageFormat, args));
        }
    }

    /** The value unless it is null: "{@code setting} must not be null: {@code remedy}". */
    public static <T> T notNull(String setting, T value, String remedy) {
        if (value == null) {
            throw new IllegalSettingException(setting, setting + " must not be null: " + remedy);
        }
        return value;
    }

    /** The text unless it is null or empty: "{@code setting} must not be empty: {@code remedy}". */
    public static String notEmpty(String setting, String text, String remedy) {
        if (text == null || text.isEmpty()) {
            throw new IllegalSettingException(setting, setting + " must not be empty: " + remedy);
        }
        return text;
    }

    /** The value unless it is below {@code min}. */
    public static int atLeast(String setting, int value, int min) {
        if (value < min) {
            throw new IllegalSettingException(setting, setting + " must be at least " + min + ", was " + value);
        }
        return value;
    }

    /** The duration unless it is longer than {@code max}; compared and shown in milliseconds. */
    public static Duration atMost(String setting, Duration value, Duration max) {
        if (value.toMillis() > max.toMillis()) {
            throw new IllegalSettingException(
                    setting, setting + " must be at most " + max.toMillis() + " ms, was " + value.toMillis() + " ms");
        }
        return value;
    }

    /** The duration unless it is null, zero or negative. */
    public static Duration positive(String setting, Duration value) {
        return positive(setting, value, "");
    }

    /**
     * The duration unless it is null, zero or negative: "{@code setting} must be positive, was ..."
     * followed by {@code remedy} (such as " (the default is 5 s)").
     */
    public static Duration positive(String setting, Duration value, String remedy) {
        if (value == null || value.isZero() || value.isNegative()) {
            throw new IllegalSettingException(
                    setting,
                    setting + " must be positive, was " + (value == null ? "null" : value.toMillis() + " ms") + remedy);
        }
        return value;
    }

    /** The duration unless it is negative. */
    public static Duration notNegative(String setting, Duration value) {
        if (value.isNegative()) {
            throw new IllegalSettingException(
                    setting, setting + " must not be negative, was " + value.toMillis() + " ms");
        }
        return value;
    }

    /**
     * What a parser makes of the value at {@code index} of {@code setting} (a negative index for
     * the setting as a whole), its refusal named as that setting's.
     */
    public static <T> T parse(String setting, int index, Supplier<T> parser) {
        try {
            return parser.get();
        } catch (IllegalSettingException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new IllegalSettingException(setting, index, e.getMessage(), e);
        }
    }

    // ---- what every lock checks the same way ----------------------------------------------------

    /** The backoff of a builder's {@code retry} setting, unless null. */
    public static RetryPolicy retry(RetryPolicy retry) {
        return notNull("retry", retry, "use RetryPolicy.DEFAULT or RetryPolicy.jitteredBackoff");
    }

    /** The builder's {@code listener}, unless null. */
    public static LockListener listener(LockListener listener) {
        return notNull("listener", listener, "leave it unset, or use LockListener.NONE, for no listener");
    }

    /**
     * The {@code resource} argument of a lock's call, unless null or empty; {@code example} shows
     * a resource name that the lock takes.
     */
    public static String resource(String resource, String example) {
        if (resource == null || resource.isEmpty()) { // not through notEmpty: no remedy built per call
            throw new IllegalSettingException(
                    "resource", "resource must not be empty: name the thing to lock, e.g. \"" + example + "\"");
        }
        return resource;
    }

    /**
     * The {@code ttl} argument of a lock's call, unless zero or negative: "ttl must be positive,
     * was ..." followed by {@code remedy}.
     *
     * @throws NullPointerException if the TTL is null
     */
    public static Duration ttl(Duration ttl, String remedy) {
        return positive("ttl", Objects.requireNonNull(ttl, "ttl"), remedy);
    }

    /**
     * The {@code maxWait} argument of a lock's call, unless negative (zero makes one attempt).
     *
     * @throws NullPointerException if it is null
     */
    public static Duration maxWait(Duration maxWait) {
        return notNegative("maxWait", Objects.requireNonNull(maxWait, "maxWait"));
    }
}
