package io.quorumlock.zookeeper;

import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LockListener;
import io.quorumlock.RetryPolicy;
import io.quorumlock.internal.Holders;
import io.quorumlock.internal.Secrets;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.zookeeper.client.ConnectStringParser;
import org.apache.zookeeper.common.PathUtils;

/** Configures a {@link ZooKeeperLock}; every setting is checked in {@link #build()}. */
public final class ZooKeeperLockBuilder {

    private static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(5);

    private String connectString;
    private CuratorFramework client;
    private Duration sessionTimeout;
    private Duration connectTimeout;
    private String basePath = ZooKeeperLock.DEFAULT_BASE_PATH;
    private RetryPolicy retry = RetryPolicy.DEFAULT;
    private String holder = Holders.defaultName();
    private LockListener listener = LockListener.NONE;
    private Ticker ticker = Ticker.SYSTEM;
    /** Null: the lock makes its own. */
    private Timers timers;

    ZooKeeperLockBuilder() {}

    /**
     * The name stored as the data of each lock node, so that a contender refused a busy lock,
     * and {@link ZooKeeperLock#holder(String)}, learn who holds it ({@code held by
     * billing-worker-1}). Printable ASCII, at most 64 characters, never a secret: it goes into
     * messages and logs. The default is the process's {@code pid@host}.
     */
    public ZooKeeperLockBuilder holder(String name) {
        this.holder = name;
        return this;
    }

    /**
     * The clock every validity and deadline of the lock counts on; by default {@link
     * Ticker#SYSTEM}, the monotonic clock. For tests that run the lock on a clock of their own.
     * {@link Ticker} is an internal type of the library and may change in any release.
     */
    public ZooKeeperLockBuilder ticker(Ticker ticker) {
        this.ticker = Settings.notNull("ticker", ticker, "pass a Ticker, or leave the default");
        return this;
    }

    /**
     * The threads that keep the lock's leases alive: a timer, workers for the renewals and
     * threads for the notices; by default the lock's own, started on first use. For tests that
     * run the leases' lives on timers of their own. The lock closes them when it is closed.
     * {@link Timers} is an internal type of the library and may change in any release.
     */
    public ZooKeeperLockBuilder timers(Timers timers) {
        this.timers = Settings.notNull("timers", timers, "pass Timers, or leave the default");
        return this;
    }

    /**
     * The listener told of every grant, refusal, loss and release of this lock, as backend
     * {@code "zookeeper"} (the session keeps leases alive: there are no extensions to tell
     * of): for metrics ({@code QuorumlockMetrics} of quorumlock-micrometer) or logs. One that
     * throws is logged once and does not break the lock. The default is {@link
     * LockListener#NONE}, which costs nothing.
     */
    public ZooKeeperLockBuilder listener(LockListener listener) {
        this.listener = listener;
        return this;
    }

    /**
     * The ensemble, as ZooKeeper writes it: {@code host:port,host:port,...}, optionally
     * followed by a chroot path ({@code /app}). List every server of the ensemble. Either
     * this or {@link #client} must be set. The client connects to these addresses only, also
     * after the ensemble changes (Curator's ensemble tracker is off, since the addresses the
     * servers publish are wrong behind a proxy, a NAT or a load balancer); to follow dynamic
     * reconfiguration, pass a client built with the tracker on to {@link #client}.
     */
    public ZooKeeperLockBuilder connectString(String connectString) {
        this.connectString = connectString;
        return this;
    }

    /**
     * Uses an existing, started Curator client instead of creating one; {@link
     * ZooKeeperLock#close()} then leaves it open. Its namespace, timeouts and retry policy
     * apply: do not set {@link #connectString}, {@link #sessionTimeout} or {@link
     * #connectTimeout} too.
     */
    public ZooKeeperLockBuilder client(CuratorFramework client) {
        this.client = client;
        return this;
    }

    /**
     * The ZooKeeper session timeout: how long the ensemble keeps the lock nodes of a client it
     * no longer hears from, and so how long a crashed holder blocks the lock and how soon a
     * partitioned holder learns its loss. A lease lives as long as the session: this, not the
     * {@code ttl} passed to {@code acquire} or {@code tryAcquire}, is how long a lease outlives
     * its holder. The server bounds it (by default between 2 and 20 times its {@code
     * tickTime}), without an error; {@link ZooKeeperLock#sessionTimeout()} and each lease's
     * {@link FencedLease#validity()} report the negotiated value. The default is 10 s.
     */
    public ZooKeeperLockBuilder sessionTimeout(Duration timeout) {
        this.sessionTimeout = timeout;
        return this;
    }

    /**
     * How long to wait for a connection to the ensemble: in {@link ZooKeeperLock#tryAcquire}
     * when not connected, and per try in Curator's operations. At most the session timeout.
     * The default is 5 s, or the session timeout if that is shorter.
     */
    public ZooKeeperLockBuilder connectTimeout(Duration timeout) {
        this.connectTimeout = timeout;
        return this;
    }

    /**
     * The parent path of the lock nodes; each resource gets the container node {@code
     * <basePath>/<resource>}. The default is {@value ZooKeeperLock#DEFAULT_BASE_PATH}.
     */
    public ZooKeeperLockBuilder basePath(String path) {
        this.basePath = path;
        return this;
    }

    /**
     * The backoff between two attempts of {@link ZooKeeperLock#acquire} when one fails for a
     * connection problem (waiting for a held lock needs no polling: a watch wakes the next
     * contender), and, for the client this lock creates, between Curator's retries of one
     * operation, for up to the connect timeout. The default is {@link RetryPolicy#DEFAULT}.
     */
    public ZooKeeperLockBuilder retry(RetryPolicy policy) {
        this.retry = policy;
        return this;
    }

    /**
     * Checks the configuration and builds the lock. A client created here starts connecting
     * in the background: {@code build()} does not wait for the ensemble.
     *
     * @throws IllegalSettingException naming the setting that is wrong and how to fix it
     */
    public ZooKeeperLock build() {
        validateBasePath();
        String holderProblem = Holders.problem(holder).orElse(null);
        Settings.requireArgument(holderProblem == null, "holder", "%s", holderProblem);
        Settings.retry(retry);
        Settings.listener(listener);
        if (client != null) {
            return withClient();
        }
        Settings.requireArgument(
                connectString != null && !connectString.isBlank(),
                "connectString",
                "no ensemble: set connectString(\"zk1:2181,zk2:2181,zk3:2181\") or pass a started Curator client"
                        + " with client(...)");
        validateConnectString();
        Duration session = sessionTimeout == null ? DEFAULT_SESSION_TIMEOUT : sessionTimeout;
        Duration connection = connectTimeout != null
                ? connectTimeout
                : DEFAULT_CONNECTION_TIMEOUT.compareTo(session) < 0 ? DEFAULT_CONNECTION_TIMEOUT : session;
        checkTimeout("sessionTimeout", session, "10 s");
        checkTimeout("connectTimeout", connection, "5 s");
        Settings.requireArgument(
                connection.compareTo(session) <= 0,
                "connectTimeout",
                "connectTimeout (%d ms) must not be longer than sessionTimeout (%d ms): the session is lost"
                        + " before such a connection is given up; lower connectTimeout or raise sessionTimeout",
                connection.toMillis(),
                session.toMillis());
        CuratorFramework created = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs((int) session.toMillis())
                .connectionTimeoutMs((int) connection.toMillis())
                .retryPolicy(new CuratorRetry(retry, connection))
                // The connect string given is the one used: the ensemble tracker would swap in
                // the addresses the servers publish, around a proxy, a NAT or a load balancer.
                .ensembleTracker(false)
                .build();
        created.start();
        return new ZooKeeperLock(created, true, basePath, retry, holder, listener, ticker, timers);
    }

    private ZooKeeperLock withClient() {
        Settings.requireArgument(
                connectString == null,
                "connectString",
                "both connectString and client are set: the client already knows its ensemble; set only one of"
                        + " them");
        Settings.requireArgument(
                sessionTimeout == null && connectTimeout == null,
                sessionTimeout != null ? "sessionTimeout" : "connectTimeout",
                "sessionTimeout and connectTimeout configure the client this lock creates; with client(...)"
                        + " set them on that CuratorFramework instead");
        CuratorFrameworkState state = client.getState();
        Settings.requireArgument(
                state == CuratorFrameworkState.STARTED,
                "client",
                "the client passed to client(...) is %s, not STARTED: %s",
                state,
                state == CuratorFrameworkState.LATENT
                        ? "call client.start() before build()"
                        : "it was closed; pass an open client");
        return new ZooKeeperLock(client, false, basePath, retry, holder, listener, ticker, timers);
    }

    private void validateConnectString() {
        String redacted = Secrets.redactUri(connectString.trim());
        if (!redacted.equals(connectString.trim())) {
            // Not shown as given: what is before the last '@' may be a password.
            throw new IllegalSettingException(
                    "connectString",
                    "connectString '" + redacted
                            + "' is not a ZooKeeper connect string (it holds '@', '?' or '#': ZooKeeper takes no"
                            + " credentials there; give them to your own Curator client with client(...)): write"
                            + " host:port,host:port[/chroot], e.g. \"zk1:2181,zk2:2181,zk3:2181\"");
        }
        String problem;
        try {
            ConnectStringParser parsed = new ConnectStringParser(connectString.trim());
            problem = parsed.getServerAddresses().isEmpty() ? "it names no server" : null;
            for (InetSocketAddress address : parsed.getServerAddresses()) {
                if (address.getHostString().isBlank() || address.getPort() == 0) {
                    problem = "'" + address.getHostString() + ":" + address.getPort() + "' is not host:port";
                }
            }
        } catch (RuntimeException e) {
            problem = e.getMessage();
        }
        Settings.requireArgument(
                problem == null,
                "connectString",
                "connectString '%s' is not a ZooKeeper connect string (%s): write host:port,host:port[/chroot],"
                        + " e.g. \"zk1:2181,zk2:2181,zk3:2181\"",
                connectString,
                problem);
    }

    private void validateBasePath() {
        String problem = null;
        if (basePath == null || !basePath.startsWith("/") || basePath.length() < 2) {
            problem = "it must start with '/' and name a node";
        } else if (basePath.endsWith("/")) {
            problem = "it must not end with '/'";
        } else if (basePath.equals("/zookeeper") || basePath.startsWith("/zookeeper/")) {
            problem = "ZooKeeper reserves /zookeeper for itself";
        } else {
            try {
                PathUtils.validatePath(basePath);
            } catch (IllegalArgumentException e) {
                problem = e.getMessage();
            }
        }
        Settings.requireArgument(
                problem == null,
                "basePath",
                "basePath %s is not usable (%s): use an absolute ZooKeeper path such as the default %s",
                basePath == null ? "null" : "'" + basePath + "'",
                problem,
                ZooKeeperLock.DEFAULT_BASE_PATH);
    }

    private static void checkTimeout(String setting, Duration timeout, String byDefault) {
        Settings.positive(setting, timeout, " (the default is " + byDefault + ")");
        Settings.atMost(setting, timeout, Duration.ofMillis(Integer.MAX_VALUE));
    }
}
