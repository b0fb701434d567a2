package io.quorumlock.examples;

import io.quorumlock.testkit.PostgresServerExtension;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.postgresql.ds.PGSimpleDataSource;

/** The databases every example runs on: H2 in-process, and a real PostgreSQL from the test kit. */
enum Engine {
    H2,
    POSTGRESQL;

    private static final AtomicInteger databases = new AtomicInteger();

    /**
     * A new, empty database for one test. PostgreSQL: a database on the class's server, started on
     * first use; the test is skipped with the reason if PostgreSQL is not installed.
     */
    DataSource newDatabase(PostgresServerExtension postgres) throws SQLException {
        if (this == H2) {
            JdbcDataSource h2 = new JdbcDataSource();
            h2.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000");
            return h2;
        }
        String name = "examples_" + databases.incrementAndGet();
        try (Connection admin = DriverManager.getConnection(postgres.jdbcUrl(), postgres.user(), "");
                Statement statement = admin.createStatement()) {
            statement.execute("CREATE DATABASE " + name);
        }
        PGSimpleDataSource pg = new PGSimpleDataSource();
        pg.setUrl("jdbc:postgresql://" + postgres.server().host() + ":"
                + postgres.server().port() + "/" + name);
        pg.setUser(postgres.user());
        return pg;
    }
}
