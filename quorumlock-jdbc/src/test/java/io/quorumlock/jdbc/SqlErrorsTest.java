package io.quorumlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.ServerAnswer;
import java.net.SocketTimeoutException;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** What each database failure means to the lock, and the dialect each driver's metadata names. */
class SqlErrorsTest {

    private static SqlErrors.Failure classify(SQLException e, boolean connected) {
        return SqlErrors.classify(e, connected, "quorumlock_locks", Dialect.POSTGRESQL);
    }

    @Test
    void aMissingTableOrSequenceNamesBothRemedies() {
        for (String state : new String[] {"42P01", "42S02"}) {
            SqlErrors.Failure failure = classify(new SQLException("relation does not exist", state), true);
            assertThat(failure.kind()).isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
            assertThat(failure.retryable()).isFalse();
            assertThat(failure.detail()).contains("quorumlock_locks_token", "createTable()", "ddl()");
        }
    }

    @Test
    void missingPrivilegesNameTheGrants() {
        SqlErrors.Failure postgres = classify(new SQLException("permission denied for table", "42501"), true);
        assertThat(postgres.kind()).isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
        assertThat(postgres.detail()).contains("GRANT SELECT, INSERT, UPDATE ON quorumlock_locks", "USAGE ON SEQUENCE");
        SqlErrors.Failure mariadb = SqlErrors.classify(
                new SQLException("UPDATE command denied to user", "42000", 1142), true, "t", Dialect.MARIADB);
        assertThat(mariadb.kind()).isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
        assertThat(mariadb.detail()).contains("GRANT SELECT, INSERT ON t_token");
        SqlErrors.Failure syntax =
                SqlErrors.classify(new SQLException("syntax error", "42000", 1064), true, "t", Dialect.MARIADB);
        assertThat(syntax.kind()).isEqualTo(ServerAnswer.Kind.ERROR);
    }

    @Test
    void aNameTheDatabaseCannotStoreIsAConfigurationError() {
        for (String state : new String[] {"22001", "22021", "54000"}) {
            SqlErrors.Failure failure = classify(new SQLException("value too long", state), true);
            assertThat(failure.kind()).isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
            assertThat(failure.retryable()).isFalse();
            assertThat(failure.detail()).contains("cannot store the resource name", "maxResourceLength");
        }
        SqlErrors.Failure mariadb = SqlErrors.classify(
                new SQLException("Incorrect string value", "HY000", 1366), true, "t", Dialect.MARIADB);
        assertThat(mariadb.kind()).isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
    }

    @Test
    void aRefusedUserIsAConfigurationErrorAndTimeoutsAndBrokenConnectionsAreRetried() {
        assertThat(classify(new SQLException("password authentication failed", "28P01"), false)
                        .kind())
                .isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
        SQLException timeout = new SQLException("I/O error", "08006", new SocketTimeoutException("Read timed out"));
        assertThat(classify(timeout, true).kind()).isEqualTo(ServerAnswer.Kind.TIMED_OUT);
        assertThat(classify(new SQLException("canceling statement", "57014"), true)
                        .kind())
                .isEqualTo(ServerAnswer.Kind.TIMED_OUT);
        assertThat(classify(new SQLException("Connection refused", "08001"), false)
                        .kind())
                .isEqualTo(ServerAnswer.Kind.UNREACHABLE);
        SqlErrors.Failure broken = classify(new SQLException("connection reset", "08006"), true);
        assertThat(broken.kind()).isEqualTo(ServerAnswer.Kind.ERROR);
        assertThat(broken.retryable()).isTrue();
    }

    @Test
    void aMissingPasswordAndAnUnknownDatabaseAreConfigurationErrorsNotAnOutage() {
        SqlErrors.Failure noPassword = classify(
                new SQLException(
                        "The server requested SCRAM-based authentication, but no password was provided.", "08004"),
                false);
        assertThat(noPassword.kind()).isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
        assertThat(noPassword.detail())
                .startsWith("the database asks for a password and none was given")
                .endsWith("give the password");
        assertThat(classify(new SQLException("Too many connections", "08004", 1040), false)
                        .kind())
                .as("a full server is no configuration error")
                .isEqualTo(ServerAnswer.Kind.UNREACHABLE);

        SqlErrors.Failure postgres =
                classify(new SQLException("FATAL: database \"nosuch\" does not exist", "3D000"), false);
        SqlErrors.Failure mariadb = SqlErrors.classify(
                new SQLException("Unknown database 'nosuch'", "42000", 1049), false, "t", Dialect.MARIADB);
        for (SqlErrors.Failure unknown : new SqlErrors.Failure[] {postgres, mariadb}) {
            assertThat(unknown.kind()).isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
            assertThat(unknown.detail())
                    .startsWith("the database named in the URL does not exist")
                    .contains("nosuch")
                    .endsWith("check the database name in the URL, or create the database");
        }
    }

    @Test
    void theServersMessageIsShownOnOnePrintableLine() {
        String shown = SqlErrors.shortMessage(new SQLException("bad\n\u0007thing " + "x".repeat(500), "XX000"));
        assertThat(shown).doesNotContain("\n").doesNotContain("\u0007").contains("characters)", "[SQLSTATE XX000]");
        assertThat(shown.length()).isLessThan(260);
    }

    @Test
    void uniqueViolationsOfEachDatabase() {
        assertThat(SqlErrors.isUniqueViolation(new SQLException("dup", "23505")))
                .isTrue();
        assertThat(SqlErrors.isUniqueViolation(new SQLException("Duplicate entry", "23000", 1062)))
                .isTrue();
        assertThat(SqlErrors.isUniqueViolation(new SQLException("null in not-null column", "23502")))
                .isFalse();
    }

    @Test
    void theDialectComesFromTheDriversMetadata() {
        assertThat(Dialect.of("PostgreSQL", "15.14")).hasValue(Dialect.POSTGRESQL);
        assertThat(Dialect.of("MariaDB", "10.11.19-MariaDB-0+deb12u1")).hasValue(Dialect.MARIADB);
        assertThat(Dialect.of("MySQL", "5.5.5-10.11.19-MariaDB")).hasValue(Dialect.MARIADB);
        assertThat(Dialect.of("H2", "2.3.232")).hasValue(Dialect.H2);
        assertThat(Dialect.of("MySQL", "8.4.0")).isEmpty();
        assertThat(Dialect.of(null, null)).isEmpty();
    }

    @Test
    void aUrlIsShownWithoutItsPasswordWhereverTheDriverTakesIt() {
        assertThat(UrlDataSource.redact("jdbc:h2:tcp://h:9092/db;USER=sa;PASSWORD=s3cret;MODE=PostgreSQL"))
                .isEqualTo("jdbc:h2:tcp://h:9092/db;USER=sa;PASSWORD=***;MODE=PostgreSQL");
        assertThat(UrlDataSource.redact("jdbc:postgresql://db:5432/app?user=u&password=s3cret"))
                .isEqualTo("jdbc:postgresql://db:5432/app?***");
        assertThat(UrlDataSource.redact("jdbc:mariadb://u:s3cret@db:3306/app")).doesNotContain("s3cret");
    }

    @Test
    void h2sOwnStatesForAMissingSequenceAndMissingRightsAreConfigurationErrors() {
        assertThat(classify(new SQLException("Sequence not found", "90036"), true)
                        .kind())
                .isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
        assertThat(classify(new SQLException("Not enough rights", "90096"), true)
                        .kind())
                .isEqualTo(ServerAnswer.Kind.MISCONFIGURED);
    }
}
