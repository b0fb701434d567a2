package io.quorumlock.jdbc;

import io.quorumlock.IllegalSettingException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The SQL that differs between the databases {@link JdbcLock} runs on: the lock table's DDL, the
 * fencing-token sequence, and the database's clock. Every time the lock compares or sets is the
 * database's own ({@link #now()}), never a client's.
 */
public enum Dialect {
    /**
     * PostgreSQL 12 or later: {@code timestamptz} and {@code clock_timestamp()}. A resource name
     * takes at most 897 characters: a btree index entry holds 2704 bytes (with 8-kB pages), 2692 of
     * them for the name, and a character as Java counts them (a UTF-16 unit) takes up to 3 bytes
     * in UTF-8.
     */
    POSTGRESQL(897, "a btree index entry holds 2692 bytes of a name, and a Java character takes up to 3 in UTF-8") {
        @Override
        List<String> ddl(String table, int maxResourceLength) {
            return List.of(
                    "CREATE SEQUENCE IF NOT EXISTS " + sequence(table),
                    "CREATE TABLE IF NOT EXISTS " + table + " (resource VARCHAR(" + maxResourceLength
                            + ") PRIMARY KEY, holder VARCHAR(64), token BIGINT NOT NULL,"
                            + " expires_at TIMESTAMP WITH TIME ZONE NOT NULL, attempt BIGINT,"
                            + " wanted_until TIMESTAMP WITH TIME ZONE)",
                    upgrade(table));
        }

        @Override
        String upgrade(String table) {
            return "ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS attempt BIGINT,"
                    + " ADD COLUMN IF NOT EXISTS wanted_until TIMESTAMP WITH TIME ZONE";
        }

        @Override
        String newColumns() {
            return "attempt, wanted_until";
        }

        @Override
        String nextValue(String table) {
            return "nextval('" + sequence(table) + "')";
        }

        @Override
        String now() {
            return "clock_timestamp()";
        }

        @Override
        String nowPlusMillis() {
            return "(clock_timestamp() + INTERVAL '1 millisecond' * CAST(? AS DOUBLE PRECISION))";
        }

        @Override
        String millisLeft() {
            return "CAST(EXTRACT(EPOCH FROM (expires_at - clock_timestamp())) * 1000 AS BIGINT)";
        }

        @Override
        String insertIfAbsent(String insert) {
            return insert + " ON CONFLICT (resource) DO NOTHING";
        }

        @Override
        String millisSinceEpoch() {
            return "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";
        }

        @Override
        String grants(String table) {
            return "GRANT SELECT, INSERT, UPDATE ON " + table + " TO <user>; GRANT USAGE ON SEQUENCE " + sequence(table)
                    + " TO <user>";
        }
    },
    /**
     * MariaDB 10.3 or later (sequences came in 10.3): {@code DATETIME(6)} in UTC, so that the
     * session's time zone plays no part, and a binary, no-pad collation for the resource, so that
     * {@code "A"}, {@code "a"} and {@code "a "} are three resources. A resource name takes at most
     * 768 characters: an InnoDB key holds 3072 bytes, and a character of utf8mb4 takes up to 4.
     */
    MARIADB(768, "an InnoDB key holds at most 3072 bytes, and a character of utf8mb4 takes up to 4") {
        @Override
        List<String> ddl(String table, int maxResourceLength) {
            return List.of(
                    "CREATE SEQUENCE IF NOT EXISTS " + sequence(table),
                    "CREATE TABLE IF NOT EXISTS " + table + " (resource VARCHAR(" + maxResourceLength
                            + ") CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,"
                            + " holder VARCHAR(64), token BIGINT NOT NULL, expires_at DATETIME(6) NOT NULL,"
                            + " attempt BIGINT) ENGINE=InnoDB",
                    upgrade(table));
        }

        @Override
        String nextValue(String table) {
            return "NEXTVAL(" + sequence(table) + ")";
        }

        @Override
        String now() {
            return "UTC_TIMESTAMP(6)";
        }

        @Override
        String nowPlusMillis() {
            return "TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(6))";
        }

        @Override
        String millisLeft() {
            return "(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000)";
        }

        @Override
        String insertIfAbsent(String insert) {
            return null; // INSERT IGNORE would also turn other errors into warnings
        }

        @Override
        String millisSinceEpoch() {
            return "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)";
        }

        @Override
        String grants(String table) {
            return "GRANT SELECT, INSERT, UPDATE ON " + table + " TO <user>; GRANT SELECT, INSERT ON " + sequence(table)
                    + " TO <user>";
        }
    },
    /** H2 2.x, for tests and embedded use. */
    H2(10_000, "the lock takes names up to 10000 characters") {
        @Override
        List<String> ddl(String table, int maxResourceLength) {
            return List.of(
                    "CREATE SEQUENCE IF NOT EXISTS " + sequence(table),
                    "CREATE TABLE IF NOT EXISTS " + table + " (resource VARCHAR(" + maxResourceLength
                            + ") PRIMARY KEY, holder VARCHAR(64), token BIGINT NOT NULL,"
                            + " expires_at TIMESTAMP WITH TIME ZONE NOT NULL, attempt BIGINT)",
                    upgrade(table));
        }

        @Override
        String nextValue(String table) {
            return "NEXT VALUE FOR " + sequence(table);
        }

        @Override
        String now() {
            return "CURRENT_TIMESTAMP";
        }

        @Override
        String nowPlusMillis() {
            return "DATEADD(MILLISECOND, ?, CURRENT_TIMESTAMP)";
        }

        @Override
        String millisLeft() {
            return "DATEDIFF(MILLISECOND, CURRENT_TIMESTAMP, expires_at)";
        }

        @Override
        String insertIfAbsent(String insert) {
            return null; // a plain INSERT, its unique violation caught
        }

        @Override
        String millisSinceEpoch() {
            return "DATEDIFF(MILLISECOND, TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00', CURRENT_TIMESTAMP)";
        }

        @Override
        String grants(String table) {
            return "GRANT SELECT, INSERT, UPDATE ON " + table + " TO <user>";
        }
    };

    /** The longest resource name, in characters, whose key the database's index always holds. */
    private final int maxResourceLength;
    /** Why it is that long. */
    private final String why;

    Dialect(int maxResourceLength, String why) {
        this.maxResourceLength = maxResourceLength;
        this.why = why;
    }

    /**
     * Refuses a {@code maxResourceLength} whose names the database could not index, naming the
     * setting, the limit and why.
     */
    void checkMaxResourceLength(int length) {
        if (length > maxResourceLength) {
            throw new IllegalSettingException(
                    "maxResourceLength",
                    "maxResourceLength must be at most " + maxResourceLength + " characters on " + this + ", was "
                            + length + " (" + why + "): lower it; a wider column can stay");
        }
    }

    /**
     * The statements that create the lock table and its token sequence, if they do not exist:
     * first the sequence {@code <table>_token}, then the table, then {@link #upgrade} for a table
     * of an earlier version.
     */
    abstract List<String> ddl(String table, int maxResourceLength);

    /**
     * The statement that gives a lock table made by an earlier version the columns this one uses
     * (the grant's {@code attempt}, and on PostgreSQL the waiters' {@code wanted_until}): it adds
     * empty columns and keeps every row; it does nothing to a table that has them.
     */
    String upgrade(String table) {
        return "ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS attempt BIGINT";
    }

    /** The columns {@link #upgrade} adds, for a query that checks the table has them. */
    String newColumns() {
        return "attempt";
    }

    /** An expression: the sequence's next value, a new fencing token. */
    abstract String nextValue(String table);

    /** A query of one row, one column: the sequence's next value, a new fencing token. */
    String nextToken(String table) {
        return "SELECT " + nextValue(table);
    }

    /** The database's clock now. */
    abstract String now();

    /** The database's clock now plus the milliseconds of one {@code BIGINT} parameter. */
    abstract String nowPlusMillis();

    /** The milliseconds from the database's clock now to {@code expires_at}, negative once passed. */
    abstract String millisLeft();

    /**
     * {@code insert} made to insert nothing, without an error, if the resource's row exists; null
     * where the database cannot, so that the unique violation is caught instead.
     */
    abstract String insertIfAbsent(String insert);

    /** The database's clock in milliseconds since the epoch. */
    abstract String millisSinceEpoch();

    /** The grants a user of the lock needs, for {@code <user>}. */
    abstract String grants(String table);

    /** The name of the token sequence of {@code table}. */
    static String sequence(String table) {
        return table + "_token";
    }

    /**
     * The dialect of a database by the product name and version its JDBC driver reports: MariaDB
     * also through MySQL's driver (its version names MariaDB). Empty for any other database,
     * MySQL included (it has no sequences).
     */
    static Optional<Dialect> of(String productName, String productVersion) {
        String product = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
        String version = productVersion == null ? "" : productVersion.toLowerCase(Locale.ROOT);
        if (product.equals("postgresql")) {
            return Optional.of(POSTGRESQL);
        }
        if (product.equals("mariadb") || (product.equals("mysql") && version.contains("mariadb"))) {
            return Optional.of(MARIADB);
        }
        if (product.equals("h2")) {
            return Optional.of(H2);
        }
        return Optional.empty();
    }
}
