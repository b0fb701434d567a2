package io.quorumlock;

import java.util.OptionalInt;

/**
 * A setting of a lock's builder, or an argument of a lock's call, that cannot be used. The message
 * names the setting and the remedy; {@link #setting()} names it for programs, such as a framework
 * that maps it back to the property it came from.
 */
public class IllegalSettingException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String setting;
    /** The index of the value refused, or -1 if the setting holds one value. */
    private final int index;

    /** A refusal of {@code setting} as a whole. */
    public IllegalSettingException(String setting, String message) {
        this(setting, -1, message, null);
    }

    /** A refusal of the value at {@code index} of {@code setting}, counted from 0. */
    public IllegalSettingException(String setting, int index, String message) {
        this(setting, index, message, null);
    }

    /**
     * A refusal of the value at {@code index} of {@code setting}, or of the setting as a whole if
     * {@code index} is negative, for the reason {@code cause} gave.
     */
    public IllegalSettingException(String setting, int index, String message, Throwable cause) {
        super(message, cause);
        this.setting = setting;
        this.index = Math.max(index, -1);
    }

    /**
     * The setting refused, named exactly as the builder's method that sets it ({@code
     * "nodeTimeout"}, {@code "nodes"}, {@code "sessionTimeout"}, {@code "endpoints"}), or as the
     * parameter of the call ({@code "resource"}, {@code "ttl"}, {@code "maxWait"}).
     */
    public String setting() {
        return setting;
    }

    /**
     * Which of the setting's values was refused, counted from 0: the entry of a list (the second
     * node is 1), or the argument of a setting that takes several (the key of {@code
     * tlsClientCertificate} is 1). Empty when the setting as a whole was refused.
     */
    public OptionalInt index() {
        return index < 0 ? OptionalInt.empty() : OptionalInt.of(index);
    }
}
