package io.quorumlock.spring;

import io.quorumlock.internal.Holders;
import io.quorumlock.jdbc.JdbcLock;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * The database lock's start: the table created where {@code quorumlock.jdbc.create-table} asks,
 * and, once every singleton of the context is up (a Flyway or Liquibase migration has run by
 * then), the lock's check of the database: the table, its sequence, the privileges. A failure stops
 * the start with the remedy of what failed: the user refused, the database missing or not
 * answering, a privilege or the table missing.
 */
final class DatabaseStart implements SmartInitializingSingleton {

    /** PostgreSQL's and the standard's codes of a table or sequence that does not exist. */
    private static final Set<String> NO_TABLE = Set.of("42P01", "42S02");

    /** PostgreSQL's insufficient_privilege; MariaDB's command, table and database denied. */
    private static final String NO_PRIVILEGE = "42501";

    private static final Set<Integer> MARIADB_DENIED = Set.of(1142, 1143, 1044);

    /** PostgreSQL's invalid_catalog_name (3D000), MariaDB's unknown database (1049). */
    private static final String NO_DATABASE = "3D000";

    private static final int MARIADB_NO_DATABASE = 1049;

    private final JdbcLock lock;
    private final Duration timeout;

    DatabaseStart(JdbcLock lock, Duration timeout) {
        this.lock = lock;
        this.timeout = timeout;
    }

    /** {@link JdbcLock#createTable()}, its failure told with the remedy. */
    static void createTable(JdbcLock lock, String table) {
        try {
            lock.createTable();
        } catch (RuntimeException e) {
            throw failure(
                    "quorumlock.jdbc.create-table: could not create the lock table " + table,
                    e,
                    "grant the database user the right to create it, or create the table in a migration (JdbcLock.ddl)"
                            + " and leave quorumlock.jdbc.create-table false");
        }
    }

    /** Checks the database once the context's singletons are up. */
    @Override
    public void afterSingletonsInstantiated() {
        try {
            lock.check(timeout);
        } catch (RuntimeException e) {
            throw failure("quorumlock.jdbc: the database lock cannot start", e, null);
        }
    }

    /**
     * What stops the start: {@code what} failed, and why, with the remedy of the failure's cause;
     * {@code noPrivilege} is the remedy of a missing privilege (null: the lock's own, its grants).
     */
    static QuorumlockPropertyException failure(String what, RuntimeException e, String noPrivilege) {
        Optional<SQLException> sql = sqlException(e);
        String cause = sql.map(DatabaseStart::shortMessage).orElse(Holders.shown(String.valueOf(e.getMessage())));
        String state = sql.map(s -> String.valueOf(s.getSQLState())).orElse("");
        int code = sql.map(SQLException::getErrorCode).orElse(0);
        String message;
        if (state.startsWith("28")) {
            message = "the database refused the user (" + cause
                    + "): check spring.datasource.username and spring.datasource.password";
        } else if (state.equals(NO_DATABASE) || code == MARIADB_NO_DATABASE) {
            message = "the database does not exist (" + cause + "): check its name in spring.datasource.url";
        } else if (unreachable(e, state)) {
            message = "the database did not answer (" + cause
                    + "): start it, or check the host and port in spring.datasource.url";
        } else if (NO_TABLE.contains(state)) {
            message = "the lock table or its sequence does not exist (" + cause
                    + "): set quorumlock.jdbc.create-table=true to create them at start, or create them in a"
                    + " migration (JdbcLock.ddl)";
        } else if (noPrivilege != null && (state.equals(NO_PRIVILEGE) || MARIADB_DENIED.contains(code))) {
            message = "the database user lacks the privilege (" + cause + "): " + noPrivilege;
        } else {
            message = String.valueOf(e.getMessage()); // the lock's own, with its remedy
        }
        return new QuorumlockPropertyException(what + ": " + message, e);
    }

    private static boolean unreachable(Throwable e, String state) {
        if (state.startsWith("08")) {
            return true;
        }
        for (Throwable cause = e; cause != null && cause.getCause() != cause; cause = cause.getCause()) {
            if (cause instanceof ConnectException
                    || cause instanceof UnknownHostException
                    || cause instanceof NoRouteToHostException
                    || (cause instanceof SQLTimeoutException
                            && cause.getMessage() != null
                            && cause.getMessage().startsWith("no connection"))) {
                return true;
            }
        }
        return false;
    }

    private static Optional<SQLException> sqlException(Throwable e) {
        for (Throwable cause = e; cause != null && cause.getCause() != cause; cause = cause.getCause()) {
            if (cause instanceof SQLException sql) {
                return Optional.of(sql);
            }
        }
        return Optional.empty();
    }

    /** The database's message on one line, cut short, with its SQLSTATE: it names users and objects, never a password. */
    private static String shortMessage(SQLException e) {
        String message = Holders.shown(
                String.valueOf(e.getMessage()).replaceAll("\\s+", " ").trim());
        return e.getSQLState() == null ? message : message + " [SQLSTATE " + e.getSQLState() + "]";
    }
}
