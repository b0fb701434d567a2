package io.quorumlock.testkit;

/**
 * A JUnit 5 extension that runs one {@link MariaDbServer} for a test class: started by the first
 * test that asks for it, closed after all the tests of the class, whether they passed or not.
 *
 * <pre>{@code
 * class FenceIT {
 *     @RegisterExtension
 *     static final MariaDbServerExtension mariadb = new MariaDbServerExtension();
 *
 *     @Test
 *     void writes() throws SQLException {
 *         try (Connection c =
 *                 DriverManager.getConnection(mariadb.jdbcUrl(), mariadb.user(), mariadb.password())) {
 *             // ...
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>Where MariaDB is not {@linkplain MariaDbServer#available() available}, a test that asks
 * for the server is skipped (aborted by an assumption) with {@link
 * MariaDbServer#unavailableReason()}, which names the package to install; the other tests of the
 * class, such as the same test on an embedded database, still run. Register it on a {@code static}
 * field. The server is not reset between tests: each test owns the tables it creates.
 */
public final class MariaDbServerExtension extends ServerPerClass<MariaDbServer> {

    public MariaDbServerExtension() {
        super(MariaDbServer::available, MariaDbServer::unavailableReason, MariaDbServer::start);
    }

    /** {@return the server's JDBC URL, see {@link MariaDbServer#jdbcUrl()}; starts it if needed} */
    public String jdbcUrl() {
        return server().jdbcUrl();
    }

    /** {@return the user to connect as, see {@link MariaDbServer#user()}; starts the server if needed} */
    public String user() {
        return server().user();
    }

    /** {@return the user's password, see {@link MariaDbServer#password()}; starts the server if needed} */
    public String password() {
        return server().password();
    }
}
