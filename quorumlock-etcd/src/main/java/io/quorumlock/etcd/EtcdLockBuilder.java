package io.quorumlock.etcd;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.quorumlock.FencedLease;
import io.quorumlock.IllegalSettingException;
import io.quorumlock.LockListener;
import io.quorumlock.RetryPolicy;
import io.quorumlock.internal.Holders;
import io.quorumlock.internal.Secrets;
import io.quorumlock.internal.Settings;
import io.quorumlock.internal.Ticker;
import io.quorumlock.internal.Timers;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/** Configures an {@link EtcdLock}; every setting is checked in {@link #build()}. */
public final class EtcdLockBuilder {
    private final List<String> endpoints = new ArrayList<>();
    private Client client;
    private Duration connectTimeout;
    private Path tlsCaBundle;
    private Path tlsCertificate;
    private Path tlsKey;

    // Read by the lock's constructor once build() checked them.
    String keyPrefix = "/quorumlock/locks/";
    RetryPolicy retry = RetryPolicy.DEFAULT;
    Duration requestTimeout = Duration.ofSeconds(5);
    Duration tryAcquireWait = Duration.ofMillis(100);
    String holder = Holders.defaultName();
    LockListener listener = LockListener.NONE;
    Ticker ticker = Ticker.SYSTEM;
    /** Null: the lock makes its own. */
    Timers timers;

    EtcdLockBuilder() {}

    /**
     * The name stored as the value of each lock key, so that a client refused a busy lock, and
     * {@link EtcdLock#holder(String)}, learn who holds it ({@code holder billing-worker-1}).
     * Printable ASCII, at most 64 characters, never a secret: it goes into messages and logs.
     * The default is the process's {@code pid@host}.
     */
    public EtcdLockBuilder holder(String name) {
        this.holder = name;
        return this;
    }

    /**
     * The clock every validity and deadline of the lock counts on; by default {@link
     * Ticker#SYSTEM}, the monotonic clock. For tests that run the lock on a clock of their own.
     * {@link Ticker} is an internal type of the library and may change in any release.
     */
    public EtcdLockBuilder ticker(Ticker ticker) {
        this.ticker = Settings.notNull("ticker", ticker, "pass a Ticker, or leave the default");
        return this;
    }

    /**
     * The threads that keep the lock's leases alive: a timer, workers for the renewals and
     * threads for the notices; by default the lock's own, started on first use. For tests that
     * run the leases' lives on timers of their own. The lock closes them when it is closed.
     * {@link Timers} is an internal type of the library and may change in any release.
     */
    public EtcdLockBuilder timers(Timers timers) {
        this.timers = Settings.notNull("timers", timers, "pass Timers, or leave the default");
        return this;
    }

    /**
     * The listener told of every grant, refusal, extension (each renewal of the keep-alive, and
     * {@link FencedLease#extend}), loss and release of this lock, as backend {@code "etcd"}: for
     * metrics ({@code QuorumlockMetrics} of quorumlock-micrometer) or logs. One that throws is
     * logged once and does not break the lock. The default is {@link LockListener#NONE}, which
     * costs nothing.
     */
    public EtcdLockBuilder listener(LockListener listener) {
        this.listener = listener;
        return this;
    }

    /**
     * Adds the client URLs of etcd members, {@code http://host:port}, or {@code https://host:port}
     * for members that serve TLS (all alike); list every member of the cluster, so that the
     * client can go on when one is down. The lock builds its own jetcd client and closes it in
     * {@link EtcdLock#close()}. Either this or {@link #client(Client)}.
     */
    public EtcdLockBuilder endpoints(String... urls) {
        Objects.requireNonNull(urls, "urls");
        endpoints.addAll(List.of(urls));
        return this;
    }

    /** Same as {@link #endpoints(String...)}. */
    public EtcdLockBuilder endpoints(List<String> urls) {
        Objects.requireNonNull(urls, "urls");
        endpoints.addAll(urls);
        return this;
    }

    /**
     * The CAs that the {@code https://} members' certificates must be issued by, as a PEM file of
     * one or more certificates, in place of the JDK trust store. The members' names (the host of
     * each endpoint) are checked against their certificates either way. The default is the JDK
     * trust store.
     */
    public EtcdLockBuilder tlsCaBundle(Path caBundle) {
        this.tlsCaBundle = caBundle;
        return this;
    }

    /**
     * The client certificate presented to {@code https://} members that require one (etcd's
     * {@code --client-cert-auth}): a PEM certificate (intermediates may follow it) and its private
     * key, an unencrypted PKCS#8 PEM file ({@code -----BEGIN PRIVATE KEY-----}). Keep the key file
     * readable by this user only. The default is none.
     */
    public EtcdLockBuilder tlsClientCertificate(Path certificate, Path key) {
        this.tlsCertificate = certificate;
        this.tlsKey = key;
        return this;
    }

    /**
     * Uses a jetcd client that the application configured (TLS, authentication, namespace). The
     * lock does not close it. Either this or {@link #endpoints(String...)}.
     */
    public EtcdLockBuilder client(Client etcdClient) {
        this.client = etcdClient;
        return this;
    }

    /**
     * The key prefix under which the locks live: the lock of {@code resource} is {@code
     * keyPrefix + resource} (with {@code %} and {@code /} in the resource escaped as {@code %25}
     * and {@code %2F}), and each waiter's key is that name, {@code /}, and its lease id in hex.
     * Give the locks a range of keys that nothing else writes. The default is {@code
     * "/quorumlock/locks/"}.
     */
    public EtcdLockBuilder keyPrefix(String prefix) {
        this.keyPrefix = prefix;
        return this;
    }

    /**
     * The backoff between two attempts of {@link EtcdLock#acquire} after an attempt failed
     * (etcd unreachable, the lease lost while waiting). Waiting for a holder needs no retries:
     * etcd queues the waiters. The default is {@link RetryPolicy#DEFAULT} (10 to 200 ms).
     */
    public EtcdLockBuilder retry(RetryPolicy policy) {
        this.retry = policy;
        return this;
    }

    /**
     * How long one request to etcd (grant, joining the queue, read-back, revoke) may take
     * before it counts as failed. The default is 5 s, to cover the client's first connection
     * (about 1 s).
     */
    public EtcdLockBuilder requestTimeout(Duration timeout) {
        this.requestTimeout = timeout;
        return this;
    }

    /**
     * How long the client the lock builds from the {@linkplain #endpoints(String...) endpoints}
     * waits for a connection to a member before its requests fail as unreachable: a cluster that
     * is down is reported within this time, while a member that answers, however slowly, is
     * given the {@linkplain #requestTimeout(Duration) request timeout}: with this set, a request
     * fails as soon as no member can be connected to rather than waiting for a connection. Not
     * for a {@linkplain #client(Client) client given}, which has its own. The default is none:
     * only the request timeout bounds a connection.
     */
    public EtcdLockBuilder connectTimeout(Duration timeout) {
        this.connectTimeout = timeout;
        return this;
    }

    /**
     * How long {@link EtcdLock#tryAcquire} waits for a held lock to be released, and the least
     * time any attempt gives a free lock to be granted. The default is 100 ms.
     */
    public EtcdLockBuilder tryAcquireWait(Duration wait) {
        this.tryAcquireWait = wait;
        return this;
    }

    /**
     * Checks the configuration and builds the lock; the client connects lazily, on the first
     * request.
     *
     * @throws IllegalSettingException naming the setting that is wrong and how to fix it
     */
    public EtcdLock build() {
        Settings.requireArgument(
                client == null || endpoints.isEmpty(),
                "endpoints",
                "both endpoints(...) and client(...) are set: give the endpoints to your own jetcd client, or"
                        + " let the lock build one from the endpoints");
        Settings.requireArgument(
                client != null || !endpoints.isEmpty(),
                "endpoints",
                "no etcd endpoints: add the members' client URLs with endpoints(\"http://host:2379\", ...), or"
                        + " pass a jetcd Client with client(...)");
        List<URI> uris = client == null ? checkEndpoints() : List.of();
        checkTls(uris);
        Settings.notEmpty(
                "keyPrefix",
                keyPrefix,
                "give the locks a range of keys of their own, such as \"/quorumlock/locks/\" (the default)");
        Settings.retry(retry);
        Settings.listener(listener);
        String holderProblem = Holders.problem(holder).orElse(null);
        Settings.requireArgument(holderProblem == null, "holder", "%s", holderProblem);
        Settings.positive("requestTimeout", requestTimeout, " (the default is 5 s)");
        Settings.positive(
                "tryAcquireWait",
                tryAcquireWait,
                " (the default is 100 ms): even a free lock needs a round trip to be granted");
        if (connectTimeout != null) {
            Settings.positive("connectTimeout", connectTimeout, ": leave it unset for jetcd's default");
            Settings.requireArgument(
                    client == null,
                    "connectTimeout",
                    "connectTimeout is for the client the lock builds from endpoints(...): set it on your own"
                            + " jetcd Client with ClientBuilder.connectTimeout");
        }
        if (client != null) {
            return new EtcdLock(this, client, false, "etcd (client given to the builder)");
        }
        ClientBuilder clientBuilder = Client.builder().endpoints(uris.toArray(URI[]::new));
        if (tls(uris)) {
            configureTls(clientBuilder);
        }
        if (connectTimeout != null) {
            // Requests then fail once no member could be connected to for that long, instead
            // of waiting for a connection until their own timeout.
            clientBuilder.connectTimeout(connectTimeout).waitForReady(false).retryMaxDuration(connectTimeout);
        }
        Client built = clientBuilder.build();
        return new EtcdLock(this, built, true, "etcd " + String.join(",", endpoints));
    }

    private static boolean tls(List<URI> uris) {
        return !uris.isEmpty() && uris.get(0).getScheme().equals("https");
    }

    /** The TLS settings agree with each other, with the endpoints, and name readable files. */
    private void checkTls(List<URI> uris) {
        boolean files = tlsCaBundle != null || tlsCertificate != null || tlsKey != null;
        String setting = tlsCaBundle != null ? "tlsCaBundle" : "tlsClientCertificate";
        Settings.requireArgument(
                !files || client == null,
                setting,
                "%s is for the client the lock builds from endpoints(...): configure TLS on your own jetcd Client"
                        + " with ClientBuilder.sslContext",
                setting);
        Settings.requireArgument(
                !files || client != null || tls(uris),
                setting,
                "%s set, but no endpoint is https://: write the members as https://host:port to connect with TLS",
                setting);
        Settings.requireArgument(
                (tlsCertificate == null) == (tlsKey == null),
                "tlsClientCertificate",
                "tlsClientCertificate needs the client certificate and its key: give both");
        readable("tlsCaBundle", tlsCaBundle);
        readable("tlsClientCertificate", tlsCertificate);
        readable("tlsClientCertificate", tlsKey);
    }

    private static void readable(String setting, Path file) {
        Settings.requireArgument(
                file == null || Files.isReadable(file),
                setting,
                "%s: cannot read %s: give a readable PEM file",
                setting,
                file);
    }

    /** TLS to the members: the CA bundle or the JDK trust store, and the client certificate if given. */
    private void configureTls(ClientBuilder clientBuilder) {
        try {
            clientBuilder.sslContext(ssl -> {
                pem("tlsCaBundle", tlsCaBundle, () -> {
                    if (tlsCaBundle != null) {
                        ssl.trustManager(tlsCaBundle.toFile());
                    }
                });
                pem("tlsClientCertificate", tlsCertificate, () -> {
                    if (tlsCertificate != null) {
                        ssl.keyManager(tlsCertificate.toFile(), tlsKey.toFile());
                    }
                });
            });
        } catch (javax.net.ssl.SSLException | RuntimeException e) {
            if (e instanceof IllegalSettingException setting) {
                throw setting;
            }
            String setting = tlsCertificate != null ? "tlsClientCertificate" : "tlsCaBundle";
            throw new IllegalSettingException(
                    setting, setting + ": cannot set up TLS with these files (" + e.getMessage() + "): " + PEM_FORMATS);
        }
    }

    private static final String PEM_FORMATS = "give PEM certificates (-----BEGIN CERTIFICATE-----) and an"
            + " unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----)";

    /** Runs one step of the TLS set-up: a {@code file} it cannot use is refused, naming {@code setting}. */
    private static void pem(String setting, Path file, Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            throw new IllegalSettingException(setting, setting + ": cannot use " + file + ": " + PEM_FORMATS);
        }
    }

    private List<URI> checkEndpoints() {
        Set<URI> seen = new LinkedHashSet<>();
        for (int i = 0; i < endpoints.size(); i++) {
            String endpoint = endpoints.get(i);
            URI uri = parse(endpoint, i);
            if (!seen.add(uri)) {
                throw new IllegalSettingException(
                        "endpoints", i, "endpoint " + endpoint + " is listed twice: list each etcd member once");
            }
            if (!uri.getScheme().equals(seen.iterator().next().getScheme())) {
                throw new IllegalSettingException(
                        "endpoints",
                        i,
                        "endpoint " + endpoint + " is " + uri.getScheme() + "://, the first is not: connect to every"
                                + " member with TLS (https://) or to none");
            }
        }
        return List.copyOf(seen);
    }

    private static URI parse(String endpoint, int index) {
        String remedy = ": give a member's client URL such as http://127.0.0.1:2379";
        if (endpoint == null || endpoint.isBlank()) {
            throw refused(index, "endpoint must not be empty" + remedy);
        }
        // Shown only as Secrets.redactUri shows it: credentials (up to the last '@'), a query and
        // a fragment as ***. An endpoint that has any of those is refused.
        String redacted = Secrets.redactUri(endpoint.trim());
        String shown = "endpoint '" + redacted + "'";
        if (!redacted.equals(endpoint.trim())) {
            throw refused(
                    index,
                    shown + " must be just scheme, host and port (credentials go to your own jetcd Client)" + remedy);
        }
        if (!endpoint.contains("://")) {
            throw refused(index, shown + " must start with http:// (or https:// for TLS)" + remedy);
        }
        URI uri;
        try {
            uri = new URI(endpoint.trim());
        } catch (URISyntaxException e) {
            throw refused(index, shown + " is not a URL (" + e.getReason() + ")" + remedy);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw refused(index, shown + " must start with http:// (or https:// for TLS)" + remedy);
        }
        if (uri.getHost() == null || uri.getPort() < 0) {
            throw refused(index, shown + " must name a host and a port" + remedy);
        }
        if (uri.getRawPath() != null
                && !uri.getRawPath().isEmpty()
                && !uri.getRawPath().equals("/")) {
            throw refused(index, shown + " must be just scheme, host and port" + remedy);
        }
        return URI.create(scheme + "://" + uri.getHost() + ":" + uri.getPort());
    }

    /** The refusal of the entry at {@code index} of the endpoints. */
    private static IllegalSettingException refused(int index, String message) {
        return new IllegalSettingException("endpoints", index, message);
    }
}
