package io.quorumlock.jdbc;

import io.quorumlock.spi.Secrets;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.Properties;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A new connection through {@link DriverManager} for each call, with connect and socket timeouts
 * of the lock's request timeout for the drivers that take them as properties (PostgreSQL's in
 * seconds, MariaDB's and MySQL's in milliseconds). The password goes to the driver only.
 */
final class UrlDataSource implements DataSource {

    private static final Pattern PASSWORD_SETTING = Pattern.compile("(?i)(;\\s*password\\s*=)[^;]*");

    private final String url;
    private final String password;
    private final Properties properties = new Properties();

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
