package io.quorumlock.testkit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

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
public final class MariaDbServerExtension implements BeforeAllCallback, AfterAllCallback {

    private MariaDbServer server;
    private String owner;

    /**
     * {@return the running server, started on the first call}
     *
     * @throws org.opentest4j.TestAbortedException if MariaDB is not available here: the test is
     *     skipped with the reason
     * @throws IllegalStateException if the server does not start
     */
    public synchronized MariaDbServer server() {
        Assumptions.assumeTrue(
                MariaDbServer.available(),
                () -> MariaDbServer.unavailableReason().orElse(""));
        if (server == null) {
            server = MariaDbServer.start();
        }
        return server;
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

    /** Remembers the outermost class, so that nested classes share its server. */
    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (owner == null) {
            owner = context.getUniqueId();
        }
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (!context.getUniqueId().equals(owner)) {
            return;
        }
        owner = null;
        if (server != null) {
            try {
                server.close();
            } finally {
                server = null;
            }
        }
    }
}
