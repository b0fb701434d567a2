package io.quorumlock.jdbc;

import io.quorumlock.internal.Secrets;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Connections through {@link DriverManager}, with connect and socket timeouts of the lock's request
 * timeout for the drivers that take them as properties (PostgreSQL's in seconds, MariaDB's and
 * MySQL's in milliseconds). The password goes to the driver only.
 *
 * <p>A connection given back open, in auto-commit, is kept for the next call (one at most), so
 * that a lock that renews one lease, as {@code quorumlock run} does, opens no connection per
 * statement; one kept idle for more than a second is checked with {@link Connection#isValid}
 * before it is used again. {@link #close()} closes it.
 */
final class UrlDataSource implements DataSource, AutoCloseable {

    /** How long a kept connection may sit idle before it is checked. */
    private static final long CHECK_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** A connection given back, and when. */
    private record Idle(Connection connection, long sinceNanos) {}

    private static final Pattern PASSWORD_SETTING = Pattern.compile("(?i)(;\\s*password\\s*=)[^;]*");

    private final String url;
    private final String password;
    private final Properties properties = new Properties();
    private final int checkSeconds;

    private Idle idle;
    private boolean closed;

    UrlDataSource(String url, String user, String password, Duration timeout) {
        this.url = url;
        this.password = password;
        if (user != null) {
            properties.setProperty("user", user);
        }
        if (password != null) {
            properties.setProperty("password", password);
        }
        long seconds = Math.max(1, (timeout.toMillis() + 999) / 1000);
        this.checkSeconds = (int) Math.min(Integer.MAX_VALUE, seconds);
        if (url.startsWith("jdbc:postgresql:")) {
            properties.setProperty("connectTimeout", Long.toString(seconds));
            properties.setProperty("loginTimeout", Long.toString(seconds));
        } else if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:")) {
            properties.setProperty("connectTimeout", Long.toString(timeout.toMillis()));
            properties.setProperty("socketTimeout", Long.toString(timeout.toMillis()));
        }
    }

    /**
     * A JDBC URL fit for a message: {@link Secrets#redactUri} hides credentials before the host and
     * a query ({@code ?password=}), and this also hides a {@code ;password=} setting (H2's, and
     * other drivers' that take settings after semicolons).
     */
    static String redact(String url) {
        return PASSWORD_SETTING.matcher(Secrets.redactUri(url)).replaceAll("$1" + Secrets.MASK);
    }

    @Override
    public Connection getConnection() throws SQLException {
        Idle kept = take();
        if (kept != null) {
            if (System.nanoTime() - kept.sinceNanos() < CHECK_AFTER_NANOS || valid(kept.connection())) {
                return keeping(kept.connection());
            }
            closeQuietly(kept.connection());
        }
        return keeping(open());
    }

    private synchronized Idle take() {
        Idle kept = idle;
        idle = null;
        return kept;
    }

    /** Keeps {@code connection} for the next call, unless one is kept already or this source is closed. */
    private void giveBack(Connection connection) {
        try {
            if (connection.isClosed() || !connection.getAutoCommit()) {
                connection.close();
                return;
            }
        } catch (SQLException e) {
            closeQuietly(connection);
            return;
        }
        synchronized (this) {
            if (!closed && idle == null) {
                idle = new Idle(connection, System.nanoTime());
                return;
            }
        }
        closeQuietly(connection);
    }

    private boolean valid(Connection connection) {
        try {
            return connection.isValid(checkSeconds);
        } catch (SQLException e) {
            return false;
        }
    }

    /** {@code connection}, whose {@code close()} gives it back to this source instead. */
    private Connection keeping(Connection connection) {
        AtomicBoolean givenBack = new AtomicBoolean();
        return (Connection) Proxy.newProxyInstance(
                Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "close" -> {
                            if (!givenBack.getAndSet(true)) {
                                giveBack(connection);
                            }
                            return null;
                        }
                        case "isClosed" -> {
                            return givenBack.get() || connection.isClosed();
                        }
                        case "toString" -> {
                            return "connection to " + redact(url);
                        }
                        default -> {
                            if (givenBack.get() && !method.getName().equals("hashCode")) {
                                throw new SQLException("the connection was closed");
                            }
                            try {
                                return method.invoke(connection, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        }
                    }
                });
    }

    /** Closes the connection kept, and every one given back from now on. */
    @Override
    public void close() {
        Idle kept;
        synchronized (this) {
            closed = true;
            kept = idle;
            idle = null;
        }
        if (kept != null) {
            closeQuietly(kept.connection());
        }
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (SQLException e) {
            // broken already: nothing to give back
        }
    }

    private Connection open() throws SQLException {
        try {
            return DriverManager.getConnection(url, properties);
        } catch (SQLException e) {
            // DriverManager names the URL ("No suitable driver found for ..."), which may hold a password
            String message = String.valueOf(e.getMessage());
            String redacted = message.replace(url, redact(url));
            if (password != null && !password.isEmpty()) {
                redacted = redacted.replace(password, Secrets.MASK);
            }
            if (redacted.equals(message)) {
                throw e;
            }
            throw new SQLException(redacted, e.getSQLState(), e.getErrorCode()); // not the cause: it holds the secret
        }
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException("the lock's URL data source connects as its configured user");
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        // DriverManager logs where its own log writer says
    }

    @Override
    public void setLoginTimeout(int seconds) {
        // set per connection from the request timeout
    }

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException("no java.util.logging here");
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        if (type.isInstance(this)) {
            return type.cast(this);
        }
        throw new SQLException("not a wrapper of " + type.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> type) {
        return type.isInstance(this);
    }

    @Override
    public String toString() {
        return "UrlDataSource[" + redact(url) + ", user " + properties.getProperty("user", "(in the URL)") + "]";
    }
}
