package io.quorumlock.redis;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.LockListener;
import io.quorumlock.RetryPolicy;
import io.quorumlock.ServerAnswer;
import io.quorumlock.internal.Holders;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import io.quorumlock.redis.client.ClusterTransport;
import io.quorumlock.redis.client.NioTransport;
import io.quorumlock.redis.client.NodeAddress;
import io.quorumlock.redis.client.TlsConfig;
import io.quorumlock.redis.client.Transport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Configures a {@link Redlock}; every setting is checked in {@link #build()}. */
public final class RedlockBuilder {

    private static final Logger log = LoggerFactory.getLogger(Redlock.class);

    /** How long build() waits for host names to resolve, to refuse two entries of one address. */
    private static final long SAME_ADDRESS_NANOS = 200_000_000L;

    private final List<String> uris = new ArrayList<>();
    private Duration nodeTimeout = Duration.ofMillis(50);
    /** Null until set: the node timeout. */
    private Duration connectTimeout;

    private double clockDriftFactor = 0.01;
    private RetryPolicy retry = RetryPolicy.DEFAULT;
    private Duration recheck = Duration.ofSeconds(1);
    private int maxConnectionsPerNode = 8;
    /** Null until set: on with several nodes, off with one. */
    private Boolean restartGuard;
    /** For nodes whose URI has none; null if not set. */
    private String password;
    /** Null until set: the replicas up for a master behind Sentinel, none otherwise. */
    private Integer replicas;
    /** Null until set: half the node timeout. */
    private Duration replicaTimeout;
    /** Null until set: pid@host. */
    private String holder;

    private final TlsSettings tls = new TlsSettings();
    private LockListener listener = LockListener.NONE;
    private Ticker ticker = Ticker.SYSTEM;
    /** Null: the lock makes its own. */
    private Timers timers;

    RedlockBuilder() {}

    /**
     * Adds a node, {@code redis://[user:password@]host:port[/db]}, or {@code rediss://...} for
     * TLS. One node makes a single-node lock. A single-node lock may be on a master that Redis
     * Sentinel manages, {@code
     * redis-sentinel://[user:password@]host:port[,host:port...][/db]#master} ({@code
     * rediss-sentinel://} for TLS): the lock asks the sentinels for the master and follows its
     * failovers (see docs/redis.md); not for Redlock, whose nodes must each stand alone.
     */
    public RedlockBuilder node(String uri) {
        uris.add(uri);
        return this;
    }

    /** Adds several nodes. */
    public RedlockBuilder nodes(List<String> nodeUris) {
        nodeUris.forEach(this::node);
        return this;
    }

    /**
     * How long a node that owes a reply may stay silent before it counts as a no: a round waits
     * for a node as long as it answers something within this time (its set-up on a new
     * connection, or other callers' requests on a shared one), up to a third of the TTL, and a
     * yes that comes while validity is left counts. Short, so that a dead or frozen node never
     * holds up the caller; a slow but live node, or a busy client, does not lose its vote. The
     * default is 50 ms. TTLs must be longer than 3 x this.
     */
    public RedlockBuilder nodeTimeout(Duration timeout) {
        this.nodeTimeout = timeout;
        return this;
    }

    /**
     * How long a round waits for a node whose connection is being opened (TCP connect, TLS
     * handshake, AUTH), by this round or another sharing the connection, when the outcome
     * cannot be decided without that node. A handshake on a cold JVM, or across a network, can
     * take longer than a command; once the connection is up, the node is waited for while it
     * answers (see {@linkplain #nodeTimeout node timeout}), and a node whose connection stays
     * unopened counts as not reached from the next round on. The default is the node timeout.
     * Over TLS, where the first handshake of a JVM just started can take longer than 50 ms, a
     * single attempt ({@code tryAcquire}) on fresh connections may then miss its quorum;
     * {@code acquire} retries on the opened connections, or set this to about a second
     * ({@code quorumlock run} does, for TLS nodes).
     */
    public RedlockBuilder connectTimeout(Duration timeout) {
        this.connectTimeout = timeout;
        return this;
    }

    /**
     * The fraction of the TTL allowed for clock drift between nodes; validity = ttl - elapsed -
     * (ttl x factor + 2 ms). The default is 0.01.
     */
    public RedlockBuilder clockDriftFactor(double factor) {
        this.clockDriftFactor = factor;
        return this;
    }

    /**
     * The backoff between attempts in {@link Redlock#acquire} that a release does not end: after
     * a refusal in which some nodes said yes (clients that split the vote, a holder whose keys
     * are gone from some nodes), and where the nodes refuse the release channel. The default is
     * {@link RetryPolicy#DEFAULT}.
     */
    public RedlockBuilder retry(RetryPolicy policy) {
        this.retry = policy;
        return this;
    }

    /**
     * A thread waiting in {@link Redlock#acquire} after a refusal by a holder sleeps until the
     * holder's release wakes it (a release in this process, or one published by the release
     * script of another client on channel {@code quorumlock:released:<resource>}, which the lock
     * listens to while threads wait) or the holder's keys run out on a quorum of nodes, and
     * tries again at least this often anyway, in case a release went unheard (a node that
     * refuses the channel to the lock's ACL user, a proxy without pub/sub). The default is 1 s.
     */
    public RedlockBuilder recheck(Duration interval) {
        this.recheck = interval;
        return this;
    }

    /**
     * The most connections kept per node. Connections are opened as more callers run rounds
     * at once, up to this many; beyond that, callers share them, their requests pipelined, and
     * no caller ever waits for a connection. The rounds on one resource share connections, so
     * that callers of one lock contending for a resource reach every node in one order and do
     * not split its vote. The lock starts no threads of its own for I/O: a waiting caller
     * reads the replies for every caller on its connections. The default is 8.
     */
    public RedlockBuilder maxConnectionsPerNode(int max) {
        this.maxConnectionsPerNode = max;
        return this;
    }

    /**
     * Redlock's restart guard, the remedy for nodes that restart without fsync'd persistence:
     * a node that has been up for less than the longest TTL this client has asked for (in any
     * acquire or extension so far, the current one included) does not vote until it has been
     * up that long. Its yes is not counted, shows as {@link ServerAnswer.Kind#EXCLUDED} in the evidence,
     * and is released like any other; a grant still needs N/2 + 1 yes votes from the other
     * nodes. Each new connection reads the node's {@code run_id} and {@code uptime_in_seconds}
     * ({@code INFO server}) and its fsync policy ({@code CONFIG GET append*}), pipelined with
     * its set-up: no extra round trip. The latest start that any reply implies wins; a node
     * whose INFO fails counts as started when the connection was made. A changed {@code
     * run_id} (a restart, or a failover to another server behind the same address) counts as
     * a start when it was seen, whatever the uptime. A node that fsyncs every write ({@code
     * appendonly yes} and {@code appendfsync always}; a denied CONFIG counts as not) lost
     * nothing in its own start and votes at once, unless its run_id changed.
     *
     * <p>What it costs: a node that does not fsync every write gives no vote for the first TTL
     * after it (re)started, so a freshly started set of such nodes gives no quorum at all
     * until its nodes have been up for the longest TTL. It protects against restarts only for
     * the TTLs of this client: clients of the same nodes should use the same TTLs.
     *
     * <p>The default is on with several nodes and off with one node (a single-node lock has
     * no quorum to protect). Turn it off in tests on nodes just started that do not fsync
     * every write.
     */
    public RedlockBuilder restartGuard(boolean enabled) {
        this.restartGuard = enabled;
        return this;
    }

    /**
     * How many replicas of the single node must acknowledge a grant or an extension before it
     * counts: {@code WAIT replicas timeout} is sent right behind the write, on its connection. A
     * write that fewer replicas acknowledged within {@code timeout} is no yes (the evidence says
     * {@code NOREPLICAS 0 of 1 replica(s) acknowledged the write within 25 ms}), and a grant so
     * refused is deleted. The lease's validity is counted from the write's send, as always, so the
     * wait shortens it.
     *
     * <p>What it narrows: a failover right after a grant, to a replica that never got the key (the
     * failure that motivates Redlock). What it does not: a replica that acknowledged and is not the
     * one promoted; a failover that loses writes for other reasons; a master whose replicas are all
     * down then grants nothing.
     *
     * <p>The default for a master behind Sentinel ({@code redis-sentinel://}), whose sentinels fail
     * it over to a replica: as many replicas as its sentinels count up and linked to it when the
     * write is sent (asked every second), each {@code WAIT} within half the node timeout and sent
     * again while too few acknowledged, for 250 ms in all (or half the node timeout, if longer), so
     * that a replica on a busy host acknowledges late rather than costing the grant; none while none
     * is up, so that the lock stays available while its replicas are down. On a Redis Cluster ({@code
     * redis-cluster://}): as many as the cluster lists up for the master of the resource's slot. For
     * a {@code redis://} node: as many
     * as its {@code ROLE} listed connected when the connection was opened; a {@code WAIT} that
     * finds fewer counts only those that acknowledged until the node, asked again with the next
     * request, lists its replicas (so a replica gone costs one refused write); none for a master
     * without replicas. {@code 0} turns it off. Not for Redlock, whose nodes have no replicas.
     *
     * @param replicas how many replicas, 0 for none
     * @param timeout how long they are waited for; shorter than the node timeout
     */
    public RedlockBuilder waitForReplicas(int replicas, Duration timeout) {
        this.replicas = replicas;
        this.replicaTimeout = timeout;
        return this;
    }

    /**
     * The password (Redis AUTH) for every node whose URI carries none, so that a password from
     * a secret store or the environment need not be written into the URIs. A URI's own
     * password wins; {@code redis://user:@host:port} names an ACL user without a password.
     *
     * @param password the password; empty or null means none
     */
    public RedlockBuilder password(String password) {
        this.password = password == null || password.isEmpty() ? null : password;
        return this;
    }

    /**
     * The name stored with each lease's key beside its random token, so that a client refused
     * a busy lock learns who holds it ({@code held by another owner (holder billing-worker-1)}).
     * Release and extension compare the whole value, name included. Printable ASCII, at most
     * 64 characters, never a secret: it goes into messages and logs. The default is the
     * process's {@code pid@host}.
     */
    public RedlockBuilder holder(String name) {
        this.holder = name;
        return this;
    }

    /**
     * The TLS context for the {@code rediss://} nodes, for trust or client keys that PEM files
     * do not serve (a key store, a hardware token). Hostname verification stays on. Not together
     * with {@link #tlsCaBundle}, {@link #tlsClientCertificate} or {@link
     * #insecureTrustAllCertificates}. The default is none: the JDK trust store, no client
     * certificate.
     */
    public RedlockBuilder tls(SSLContext context) {
        tls.context = context;
        return this;
    }

    /**
     * The CAs that the {@code rediss://} nodes' certificates must be issued by, as a PEM file of
     * one or more certificates, in place of the JDK trust store. The nodes' names are checked
     * against their certificates either way. The default is the JDK trust store.
     */
    public RedlockBuilder tlsCaBundle(Path caBundle) {
        tls.caBundle = caBundle;
        return this;
    }

    /**
     * The client certificate presented to {@code rediss://} nodes that require one (mutual TLS,
     * Redis's {@code tls-auth-clients yes}): a PEM certificate (intermediates may follow it)
     * and its private key, an unencrypted PKCS#8 PEM file ({@code -----BEGIN PRIVATE
     * KEY-----}), RSA or EC. Keep the key file readable by this user only. The default is none.
     */
    public RedlockBuilder tlsClientCertificate(Path certificate, Path key) {
        tls.certificate = certificate;
        tls.key = key;
        tls.clientCertificateSet = true;
        return this;
    }

    /**
     * Turns off the verification of the {@code rediss://} nodes' certificates and names: the
     * traffic is encrypted, but anyone on the network path can pose as a node and grant locks.
     * For tests and first trials only; {@link #build()} logs a warning. Prefer {@link
     * #tlsCaBundle} with the CA that issued the nodes' certificates. The default is off.
     */
    public RedlockBuilder insecureTrustAllCertificates() {
        tls.insecureTrustAll = true;
        return this;
    }

    /**
     * The clock every validity and deadline of the lock counts on; by default {@link
     * Ticker#SYSTEM}, the monotonic clock. For tests that run the lock on a clock of their own.
     * {@link Ticker} is an internal type of the library and may change in any release.
     */
    public RedlockBuilder ticker(Ticker ticker) {
        this.ticker = Settings.notNull("ticker", ticker, "pass a Ticker, or leave the default");
        return this;
    }

    /**
     * The threads that keep the lock's leases alive: a timer, workers for the renewals and
     * threads for the notices; by default the lock's own, started on first use. For tests that
     * run the leases' lives on timers of their own. The lock closes them when it is closed.
     * {@link Timers} is an internal type of the library and may change in any release.
     */
    public RedlockBuilder timers(Timers timers) {
        this.timers = Settings.notNull("timers", timers, "pass Timers, or leave the default");
        return this;
    }

    /**
     * The listener told of every grant, refusal, extension, loss and release of this lock, as
     * backend {@code "redis"}: for metrics ({@code QuorumlockMetrics} of quorumlock-micrometer)
     * or logs. One that throws is logged once and does not break the lock. The default is
     * {@link LockListener#NONE}, which costs nothing.
     */
    public RedlockBuilder listener(LockListener listener) {
        this.listener = listener;
        return this;
    }

    /**
     * Checks the configuration and connects lazily to the nodes. Two nodes that reach the same
     * address and port ({@code redis://localhost:6379} and {@code redis://127.0.0.1:6379}) are
     * refused: each server may vote only once. IP literals are compared as addresses; host
     * names are looked up for this, for at most 200 ms in all, and a name not resolved by then
     * is left out of the comparison. Entries that reach one server by different addresses (an
     * alias, a NAT, a proxy) are found at their first connection, by the server's {@code
     * run_id}: their votes then count once, and the duplicate is logged and shown by {@link
     * Redlock#checkNodes()}.
     *
     * @throws IllegalSettingException naming the setting that is wrong and how to fix it
     */
    public Redlock build() {
        List<NodeAddress> addresses = validate();
        TlsConfig tlsConfig = addresses.stream().anyMatch(NodeAddress::tls) ? tls.config() : null;
        if (addresses.get(0).cluster()) {
            return create(
                    new ClusterTransport(
                            addresses.get(0),
                            nodeTimeout.toNanos(),
                            connectTimeout().toNanos(),
                            maxConnectionsPerNode,
                            ticker,
                            tlsConfig,
                            Scripts.ALL),
                    addresses,
                    ticker);
        }
        NioTransport transport = new NioTransport(
                addresses,
                nodeTimeout.toNanos(),
                connectTimeout().toNanos(),
                maxConnectionsPerNode,
                ticker,
                tlsConfig,
                Scripts.ALL);
        // The lookups started with the transport; a name that takes longer is compared by its run_id.
        IllegalSettingException same =
                addresses.size() > 1 ? transport.sameAddress(ticker.nanos() + SAME_ADDRESS_NANOS) : null;
        if (same != null) {
            transport.close();
            throw same;
        }
        return create(transport, addresses, ticker);
    }

    /** Builds over a given transport: for tests of the algorithm. */
    Redlock build(Transport transport, Ticker ticker) {
        return create(transport, validate(), ticker);
    }

    /** The connect timeout set, or the node timeout. */
    private Duration connectTimeout() {
        return connectTimeout != null ? connectTimeout : nodeTimeout;
    }

    private Redlock create(Transport transport, List<NodeAddress> addresses, Ticker ticker) {
        List<String> names = addresses.stream().map(NodeAddress::toString).toList();
        boolean guard = restartGuard != null ? restartGuard : addresses.size() > 1;
        return new Redlock(
                transport,
                names,
                nodeTimeout,
                connectTimeout(),
                clockDriftFactor,
                retry,
                recheck,
                ticker,
                guard,
                replicaSync(addresses),
                holder != null ? holder : Holders.defaultName(),
                listener,
                timers);
    }

    /** The WAIT behind each write: as set, or for a single node as many replicas as it has up. */
    private ReplicaSync replicaSync(List<NodeAddress> addresses) {
        long millis = Math.max(1, (replicaTimeout != null ? replicaTimeout : nodeTimeout.dividedBy(2)).toMillis());
        if (replicas == null) {
            return addresses.size() == 1 ? ReplicaSync.up(millis) : ReplicaSync.NONE;
        }
        return replicas == 0 ? ReplicaSync.NONE : ReplicaSync.fixed(replicas, millis);
    }

    private List<NodeAddress> validate() {
        Settings.requireArgument(
                !uris.isEmpty(),
                "nodes",
                "no nodes: add at least one with node(\"redis://host:port\") (one node for a single-node lock,"
                        + " 3 or 5 for Redlock)");
        List<NodeAddress> addresses = NodeAddresses.parse(uris, password, restartGuard);
        Settings.positive("nodeTimeout", nodeTimeout, " (the default is 50 ms)");
        if (replicas != null) {
            Settings.requireArgument(
                    replicas >= 0 && replicas <= 64,
                    "waitForReplicas",
                    "waitForReplicas needs 0 to 64 replicas, was %d",
                    replicas);
            Settings.requireArgument(
                    replicas == 0 || uris.size() == 1,
                    "waitForReplicas",
                    "waitForReplicas is for the single-node lock: Redlock's nodes are independent masters without"
                            + " replicas; use waitForReplicas(0, ...) with several nodes");
            Settings.requireArgument(
                    replicas == 0
                            || replicaTimeout != null
                                    && replicaTimeout.toMillis() >= 1
                                    && replicaTimeout.compareTo(nodeTimeout) < 0,
                    "waitForReplicas",
                    "waitForReplicas needs a timeout of at least 1 ms and shorter than nodeTimeout (%d ms), was %s:"
                            + " a node that owes the answer longer counts as silent",
                    nodeTimeout.toMillis(),
                    replicaTimeout);
        }
        Settings.requireArgument(
                nodeTimeout.toMillis() >= 1 && nodeTimeout.toMillis() <= Integer.MAX_VALUE,
                "nodeTimeout",
                "nodeTimeout must be between 1 ms and 24 days, was %s",
                nodeTimeout);
        Settings.requireArgument(
                connectTimeout == null
                        || (connectTimeout.compareTo(nodeTimeout) >= 0
                                && connectTimeout.toMillis() <= Integer.MAX_VALUE),
                "connectTimeout",
                "connectTimeout must be at least nodeTimeout (%d ms) and at most 24 days, was %d ms (the default"
                        + " is nodeTimeout)",
                nodeTimeout.toMillis(),
                connectTimeout == null ? 0 : connectTimeout.toMillis());
        Settings.requireArgument(
                clockDriftFactor >= 0 && clockDriftFactor < 0.5,
                "clockDriftFactor",
                "clockDriftFactor must be at least 0 and below 0.5, was %s (the default is 0.01)",
                clockDriftFactor);
        Settings.retry(retry);
        Settings.positive("recheck", recheck, " (the default is 1 s)");
        Settings.listener(listener);
        String holderProblem = holder == null ? null : Holders.problem(holder).orElse(null);
        Settings.requireArgument(holderProblem == null, "holder", "%s", holderProblem);
        Settings.atLeast("maxConnectionsPerNode", maxConnectionsPerNode, 1);
        tls.validate(addresses);
        if (addresses.size() > 1 && addresses.size() % 2 == 0) {
            log.warn(
                    "{} nodes tolerate no more failures than {}: a quorum of {} is needed; use an odd number of nodes",
                    addresses.size(),
                    addresses.size() - 1,
                    QuorumMath.quorum(addresses.size()));
        }
        return addresses;
    }
}
