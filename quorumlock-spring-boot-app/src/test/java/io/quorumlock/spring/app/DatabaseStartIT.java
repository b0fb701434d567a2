package io.quorumlock.spring.app;

import static io.quorumlock.spring.app.StartupFailureIT.refused;
import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.testkit.PostgresServerExtension;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * The database lock's start on a real PostgreSQL, when what it meets is not right: the report's
 * one line gives the remedy of what failed (the password, the database down, a privilege, the
 * table), not the remedy of another failure. The server takes passwords (SCRAM) from the user
 * {@code app}, and trusts {@code postgres}, which sets the scene.
 */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DatabaseStartIT {

    private static final String PASSWORD = "right-Pa55w0rd";

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    /** Roles {@code app} (with a password, which the server asks for) and {@code reader} (no rights). */
    @BeforeAll
    static void roles() throws Exception {
        Path hba = postgres.server().dir().resolve("data/pg_hba.conf");
        Files.writeString(hba, "host all app 127.0.0.1/32 scram-sha-256\n" + Files.readString(hba));
        execute(
                "CREATE ROLE app LOGIN PASSWORD '" + PASSWORD + "'",
                "CREATE ROLE reader LOGIN",
                "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
                "SELECT pg_reload_conf()");
    }

    private static void execute(String... statements) throws SQLException {
        try (Connection connection = dataSource(postgres.user(), null).getConnection();
                Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        }
    }

    private static PGSimpleDataSource dataSource(String user, String password) {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(postgres.jdbcUrl());
        dataSource.setUser(user);
        dataSource.setPassword(password);
        dataSource.setConnectTimeout(5);
        return dataSource;
    }

    @Test
    void aWrongPasswordNamesTheCredentialsNotTheRightToCreateTheTable(CapturedOutput output) {
        assertThat(refused(
                        output,
                        "quorumlock.jdbc.create-table: ",
                        dataSource("app", "wrong-" + PASSWORD),
                        "quorumlock.jdbc.create-table=true"))
                .contains("the database refused the user (", "28P01")
                .contains("check spring.datasource.username and spring.datasource.password")
                .doesNotContain("grant");
        assertThat(output.toString()).doesNotContain(PASSWORD);
    }

    @Test
    void aDatabaseDownNamesTheUrl(CapturedOutput output) throws IOException {
        PGSimpleDataSource down = dataSource("app", PASSWORD);
        try (ServerSocket free = new ServerSocket(0)) {
            down.setUrl("jdbc:postgresql://127.0.0.1:" + free.getLocalPort() + "/postgres");
        }
        assertThat(refused(output, "quorumlock.jdbc: ", down, "quorumlock.jdbc.enabled=true"))
                .contains("the database did not answer (")
                .contains("start it, or check the host and port in spring.datasource.url");
    }

    @Test
    void aMissingTableNamesCreateTableAndTheMigration(CapturedOutput output) {
        assertThat(refused(
                        output,
                        "quorumlock.jdbc: ",
                        dataSource(postgres.user(), null),
                        "quorumlock.jdbc.table=not_created"))
                .contains("the lock table or its sequence does not exist (")
                .contains(
                        "set quorumlock.jdbc.create-table=true to create them at start, or create them in a migration");
    }

    @Test
    void noRightToCreateTheTableNamesTheGrantOrTheMigration(CapturedOutput output) {
        assertThat(refused(
                        output,
                        "quorumlock.jdbc.create-table: ",
                        dataSource("reader", null),
                        "quorumlock.jdbc.create-table=true",
                        "quorumlock.jdbc.table=reader_locks"))
                .contains("could not create the lock table reader_locks: the database user lacks the privilege (")
                .contains("grant the database user the right to create it, or create the table in a migration");
    }

    @Test
    void noRightOnTheTableNamesTheGrants(CapturedOutput output) {
        try (JdbcLock owner = JdbcLock.builder()
                .dataSource(dataSource(postgres.user(), null))
                .table("granted_locks")
                .build()) {
            owner.createTable();
        }
        assertThat(refused(
                        output, "quorumlock.jdbc: ", dataSource("reader", null), "quorumlock.jdbc.table=granted_locks"))
                .contains("lacks a privilege the lock needs")
                .contains("GRANT");
    }
}
