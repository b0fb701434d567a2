package io.quorumlock.jdbc;

import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.Holders;
import java.net.SocketTimeoutException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * What a failure of the database means for a lock: which {@link ServerAnswer.Kind} it is, and for
 * the failures only a change of configuration fixes (a missing table, missing privileges, a wrong
 * password) the remedy. The database's own message goes into the detail cut short: it names
 * objects and users, never a password.
 */
final class SqlErrors {

    /**
     * A table or sequence that does not exist: the standard 42S02, H2's 42S03 and 42S04 (and 90036
     * for a sequence), PostgreSQL's 42P01.
     */
    static final Set<String> TABLE_NOT_FOUND = Set.of("42S02", "42S03", "42S04", "42P01", "90036");

    /**
     * A column that does not exist: the standard 42S22 (MariaDB's), PostgreSQL's 42703, H2's 42122:
     * on the lock's table, one made by an earlier version.
     */
    static final Set<String> COLUMN_NOT_FOUND = Set.of("42S22", "42703", "42122");

    /** A read-only transaction (25006: a replica, or sessions set read-only), H2's read-only database (90097). */
    private static final Set<String> READ_ONLY = Set.of("25006", "90097");

    /** PostgreSQL's insufficient_privilege (42501), H2's 90096. */
    private static final Set<String> NO_PRIVILEGE = Set.of("42501", "90096");

    /** MariaDB's and MySQL's error codes for a command, column or routine denied to the user. */
    private static final Set<Integer> MARIADB_DENIED = Set.of(1142, 1143, 1370, 1044);

    /**
     * Values the database cannot store: SQLSTATE class 22 (data exception: too long for the column,
     * a character the encoding has not), and PostgreSQL's program_limit_exceeded (54000: an index
     * entry too large).
     */
    private static final String DATA_EXCEPTION_CLASS = "22";

    private static final String PROGRAM_LIMIT_EXCEEDED = "54000";

    /** MariaDB's error codes for an incorrect string value (1366) and data too long (1406). */
    private static final Set<Integer> MARIADB_DATA = Set.of(1366, 1406);

    /** Invalid authorization (28000, 28P01): a wrong user or password. */
    private static final String INVALID_AUTHORIZATION_CLASS = "28";

    /**
     * A connection the client refused to make (08004), as PostgreSQL's driver does when the server
     * asks for a password and none was given: an authentication failure when its message says so
     * (MariaDB's "too many connections" is an 08004 too, and passes).
     */
    private static final String CONNECTION_REJECTED = "08004";

    /** A database that does not exist: PostgreSQL's invalid_catalog_name. */
    private static final String UNKNOWN_DATABASE = "3D000";

    /** MariaDB's and MySQL's "Unknown database". */
    private static final Set<Integer> MARIADB_UNKNOWN_DATABASE = Set.of(1049);

    private SqlErrors() {}

    /** How a failure is told to the caller. */
    record Failure(ServerAnswer.Kind kind, String detail) {
        boolean retryable() {
            return kind != ServerAnswer.Kind.MISCONFIGURED;
        }
    }

    /**
     * The meaning of {@code e}; {@code sent} says whether a statement had been sent, so that a
     * broken connection is told apart from one never made.
     */
    static Failure classify(SQLException e, boolean sent, String table, Dialect dialect) {
        if (sqlState(e, TABLE_NOT_FOUND::contains).isPresent()) {
            return new Failure(
                    ServerAnswer.Kind.MISCONFIGURED,
                    "the lock table " + table + " or its sequence " + Dialect.sequence(table)
                            + " does not exist: call lock.createTable() once, or run lock.ddl() in a migration");
        }
        if (sqlState(e, COLUMN_NOT_FOUND::contains).isPresent() && dialect != null) {
            return new Failure(
                    ServerAnswer.Kind.MISCONFIGURED,
                    "the lock table " + table + " was made by an earlier version, without the columns "
                            + dialect.newColumns() + " (" + shortMessage(e) + "): call lock.createTable() once,"
                            + " which adds them, or run " + dialect.upgrade(table) + " in a migration (the last"
                            + " statement of lock.ddl()); every row is kept");
        }
        if (sqlState(e, NO_PRIVILEGE::contains).isPresent() || deniedByMariaDb(e)) {
            return new Failure(
                    ServerAnswer.Kind.MISCONFIGURED,
                    "the database user lacks a privilege the lock needs (" + shortMessage(e) + "): "
                            + (dialect == null
                                    ? "GRANT SELECT, INSERT, UPDATE on the table and its sequence"
                                    : dialect.grants(table)));
        }
        if (sqlState(e, READ_ONLY::contains).isPresent()) {
            return new Failure(
                    ServerAnswer.Kind.MISCONFIGURED,
                    "the database refuses writes in these sessions (" + shortMessage(e) + "): the lock writes its"
                            + " table, so point it at the primary, not a replica, with sessions that are not read-only"
                            + " (default_transaction_read_only, tx_read_only, a read-only pool)");
        }
        if (sqlState(e, state -> state.startsWith(INVALID_AUTHORIZATION_CLASS)).isPresent()) {
            return new Failure(
                    ServerAnswer.Kind.MISCONFIGURED,
                    "the database refused the user (" + shortMessage(e) + "): check the user and the password");
        }
        if (sqlState(e, CONNECTION_REJECTED::equals).isPresent() && asksForPassword(e)) {
            return new Failure(
                    ServerAnswer.Kind.MISCONFIGURED,
                    "the database asks for a password and none was given (" + shortMessage(e) + "): give the password");
        }
        if (sqlState(e, UNKNOWN_DATABASE::equals).isPresent() || hasErrorCode(e, MARIADB_UNKNOWN_DATABASE)) {
            return new Failure(
                    ServerAnswer.Kind.MISCONFIGURED,
                    "the database named in the URL does not exist (" + shortMessage(e)
                            + "): check the database name in the URL, or create the database");
        }
        if (sqlState(e, state -> state.startsWith(DATA_EXCEPTION_CLASS) || state.equals(PROGRAM_LIMIT_EXCEEDED))
                        .isPresent()
                || (dialect == Dialect.MARIADB && hasErrorCode(e, MARIADB_DATA))) {
            return new Failure(
                    ServerAnswer.Kind.MISCONFIGURED,
                    "the database cannot store the resource name (" + shortMessage(e) + "): use shorter names"
                            + " without NUL characters, or make the table's resource column as wide as"
                            + " maxResourceLength");
        }
        if (String.valueOf(e.getMessage()).startsWith("No suitable driver")) {
            return new Failure(
                    ServerAnswer.Kind.MISCONFIGURED,
                    "no JDBC driver for the URL on the class path: add org.postgresql:postgresql or"
                            + " org.mariadb.jdbc:mariadb-java-client");
        }
        if (timedOut(e)) {
            return new Failure(ServerAnswer.Kind.TIMED_OUT, shortMessage(e));
        }
        if (!sent) {
            return new Failure(ServerAnswer.Kind.UNREACHABLE, shortMessage(e));
        }
        return new Failure(ServerAnswer.Kind.ERROR, shortMessage(e));
    }

    private static boolean asksForPassword(SQLException e) {
        String message = String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT);
        return message.contains("password") || message.contains("authentication");
    }

    /** Whether {@code e} is a unique violation (SQLSTATE 23505, or MariaDB's 23000 with error 1062). */
    static boolean isUniqueViolation(SQLException e) {
        for (SQLException next = e; next != null; next = next.getNextException()) {
            String state = next.getSQLState();
            if ("23505".equals(state) || ("23000".equals(state) && next.getErrorCode() == 1062)) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasErrorCode(SQLException e, Set<Integer> codes) {
        for (SQLException next = e; next != null; next = next.getNextException()) {
            if (codes.contains(next.getErrorCode())) {
                return true;
            }
        }
        return false;
    }

    private static boolean deniedByMariaDb(SQLException e) {
        for (SQLException next = e; next != null; next = next.getNextException()) {
            if (MARIADB_DENIED.contains(next.getErrorCode()) && "42000".equals(next.getSQLState())) {
                return true;
            }
        }
        return false;
    }

    private static boolean timedOut(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLTimeoutException || cause instanceof SocketTimeoutException) {
                return true;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return "57014".equals(((SQLException) e).getSQLState()); // PostgreSQL: canceled by the query timeout
    }

    /** The first SQLSTATE in the exception's chain that matches, if any. */
    static Optional<String> sqlState(SQLException e, Predicate<String> matches) {
        for (SQLException next = e; next != null; next = next.getNextException()) {
            String state = next.getSQLState();
            if (state != null && matches.test(state)) {
                return Optional.of(state);
            }
        }
        return Optional.empty();
    }

    /** The database's message on one line, printable ASCII cut as {@link Holders#shown} cuts it, with its SQLSTATE. */
    static String shortMessage(SQLException e) {
        String message = Holders.shown(
                String.valueOf(e.getMessage()).replaceAll("\\s+", " ").trim());
        return e.getSQLState() == null ? message : message + " [SQLSTATE " + e.getSQLState() + "]";
    }
}
