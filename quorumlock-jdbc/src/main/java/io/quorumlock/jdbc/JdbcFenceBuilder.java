package io.quorumlock.jdbc;

import io.quorumlock.IllegalSettingException;
import java.util.Objects;
import java.util.regex.Pattern;

/** Settings of a {@link JdbcFence}, checked by {@link #build()}. */
public final class JdbcFenceBuilder {

    /** A regular SQL identifier (PostgreSQL's limit is 63 bytes), optionally qualified by a schema. */
    private static final Pattern TABLE_NAME =
            Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    // Read by the fence's constructor once build() checked them.
    String table = "quorumlock_fence";
    int maxResourceLength = 255;

    JdbcFenceBuilder() {}

    /**
     * The fence table. The default is {@code quorumlock_fence}.
     *
     * @param table a SQL identifier (letters, digits and underscores, not starting with a digit,
     *     at most 63 characters), optionally qualified by a schema: {@code fencing.quorumlock_fence}.
     *     It is not quoted, so the database folds its case as usual.
     * @return this builder
     */
    public JdbcFenceBuilder table(String table) {
        this.table = Objects.requireNonNull(table, "table");
        return this;
    }

    /**
     * The longest resource name, the width of the {@code resource} column in {@link JdbcFence#ddl()}. The
     * default is 255.
     *
     * @param maxResourceLength from 1 to 10,000 characters
     * @return this builder
     */
    public JdbcFenceBuilder maxResourceLength(int maxResourceLength) {
        this.maxResourceLength = maxResourceLength;
        return this;
    }

    /**
     * {@return the fence}
     *
     * @throws IllegalSettingException if a setting is out of range, naming it
     */
    public JdbcFence build() {
        if (!TABLE_NAME.matcher(table).matches()) {
            throw new IllegalSettingException(
                    "table",
                    "table must be a SQL identifier (letters, digits and underscores,"
                            + " not starting with a digit, at most 63 characters, optionally schema.table), was '"
                            + table + "'");
        }
        if (maxResourceLength < 1 || maxResourceLength > 10_000) {
            throw new IllegalSettingException(
                    "maxResourceLength",
                    "maxResourceLength must be from 1 to 10000 characters, was " + maxResourceLength);
        }
        return new JdbcFence(this);
    }
}
