package io.quorumlock.lab.demo;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcConnectionPool;

/** An embedded H2 database in memory, private to one run, with a small connection pool. */
final class InventoryDatabase implements AutoCloseable {

    private final JdbcConnectionPool pool;

    private InventoryDatabase(JdbcConnectionPool pool) {
        this.pool = pool;
    }

    /** Opens a new, empty database that lives until {@link #close()}. */
    static InventoryDatabase inMemory(int maxConnections) {
        String url = "jdbc:h2:mem:quorumlock-demo-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        JdbcConnectionPool pool = JdbcConnectionPool.create(url, "sa", "");
        pool.setMaxConnections(maxConnections);
        return new InventoryDatabase(pool);
    }

    DataSource dataSource() {
        return pool;
    }

    /** Drops the database (DB_CLOSE_DELAY=-1 would otherwise keep it for the life of the JVM). */
    @Override
    public void close() throws SQLException {
        try (Connection connection = pool.getConnection();
                Statement statement = connection.createStatement()) {
            statement.execute("SHUTDOWN");
        } finally {
            pool.dispose();
        }
    }
}
