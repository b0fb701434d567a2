package io.quorumlock.testkit;

/**
 * A JUnit 5 extension that runs one {@link PostgresServer} for a test class: started by the first
 * test that asks for it, closed after all the tests of the class, whether they passed or not.
 *
 * <pre>{@code
 * class FenceIT {
 *     @RegisterExtension
 *     static final PostgresServerExtension postgres = new PostgresServerExtension();
 *
 *     @Test
 *     void writes() throws SQLException {
 *         try (Connection c = DriverManager.getConnection(postgres.jdbcUrl(), postgres.user(), "")) {
 *             // ...
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>Where PostgreSQL is not {@linkplain PostgresServer#available() available}, a test that asks
 * for the server is skipped (aborted by an assumption) with {@link
 * PostgresServer#unavailableReason()}, which names the package to install; the other tests of the
 * class, such as the same test on an embedded database, still run. Register it on a {@code static}
 * field. The server is not reset between tests: each test owns the tables it creates.
 */
public final class PostgresServerExtension extends ServerPerClass<PostgresServer> {

    public PostgresServerExtension() {
        super(PostgresServer::available, PostgresServer::unavailableReason, PostgresServer::start);
    }

    /** {@return the server's JDBC URL, see {@link PostgresServer#jdbcUrl()}; starts it if needed} */
    public String jdbcUrl() {
        return server().jdbcUrl();
    }

    /** {@return the user to connect as, see {@link PostgresServer#user()}; starts the server if needed} */
    public String user() {
        return server().user();
    }
}
