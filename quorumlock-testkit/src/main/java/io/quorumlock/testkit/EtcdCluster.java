package io.quorumlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real etcd cluster of one or more members for tests, each an {@code etcd} process on free
 * loopback ports in its own temporary directory (see {@link EtcdServer}).
 *
 * <pre>{@code
 * assumeTrue(EtcdCluster.available(), EtcdCluster.unavailableReason().orElse(""));
 * try (EtcdCluster etcd = EtcdCluster.start(3)) {
 *     Client client = Client.builder().endpoints(etcd.endpoints().toArray(String[]::new)).build();
 *     etcd.get(0).stop();       // SIGKILL: the other two keep a quorum
 *     etcd.get(0).startAgain(); // same ports, same data, rejoins
 * }
 * }</pre>
 *
 * <p>The binary is the file named by the environment variable {@code QUORUMLOCK_ETCD_BIN}, else
 * {@code etcd} on the {@code PATH}, else {@code /usr/bin/etcd}; the Debian package {@code
 * etcd-server} provides it (etcd 3.4). Without one, {@link #available()} is false and tests should
 * be skipped: {@link EtcdClusterExtension} does that by itself. Every wait is bounded and scaled by
 * {@link TestTime#scale()}; every process is killed by a JVM shutdown hook at the latest.
 */
public final class EtcdCluster implements AutoCloseable, Iterable<EtcdServer> {

    private static final Logger log = LoggerFactory.getLogger(EtcdCluster.class);

    /** More members than this make no sense on one test machine. */
    static final int MAX_MEMBERS = 7;

    private static final int PORT_ATTEMPTS = 5;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(20);
    private static final SecureRandom random = new SecureRandom();

    private final List<EtcdServer> members;
    private volatile String initialCluster;
    private volatile String token;

    private EtcdCluster(int size) {
        List<EtcdServer> created = new ArrayList<>(size);
        try {
            for (int i = 0; i < size; i++) {
                created.add(new EtcdServer(this, "member-" + i));
            }
        } catch (RuntimeException e) {
            created.forEach(EtcdServer::close);
            throw e;
        }
        this.members = List.copyOf(created);
    }

    /**
     * {@return whether an etcd binary was found} Tests that need etcd should be skipped otherwise:
     * {@code assumeTrue(EtcdCluster.available(), EtcdCluster.unavailableReason().orElse(""))}.
     */
    public static boolean available() {
        return EtcdBinary.unavailableReason().isEmpty();
    }

    /**
     * Why no etcd binary was found, for a skipped test's message: it names the Debian package
     * {@code etcd-server} and the variable {@code QUORUMLOCK_ETCD_BIN}.
     *
     * @return the reason, or empty if a binary was found
     */
    public static Optional<String> unavailableReason() {
        return EtcdBinary.unavailableReason();
    }

    /**
     * {@return the {@code etcd} binary that members run}
     *
     * @throws IllegalStateException if there is none (the message says how to install it)
     */
    public static Path binary() {
        return EtcdBinary.path();
    }

    /** {@return the binary's version, such as {@code 3.4.23}, or {@code unknown}} */
    public static String version() {
        return EtcdBinary.version();
    }

    /**
     * Starts a cluster of {@code members} members and waits until every one of them is healthy
     * (about 0.7 s for one member, 2.5 s for three).
     *
     * @param members how many, from 1 to 7; 1 or 3 are usual
     * @return the running cluster
     * @throws IllegalArgumentException if {@code members} is out of range
     * @throws IllegalStateException if there is no etcd binary, or the cluster does not come up in
     *     time (the message carries the end of each member's log); nothing is left running then
     */
    public static EtcdCluster start(int members) {
        if (members < 1 || members > MAX_MEMBERS) {
            throw new IllegalArgumentException(
                    "members must be between 1 and " + MAX_MEMBERS + ", was " + members + " (1 or 3 are usual)");
        }
        EtcdBinary.path(); // fails with the install hint before any directory is made
        EtcdCluster cluster = new EtcdCluster(members);
        try {
            cluster.form();
            return cluster;
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /**
     * Returns one member.
     *
     * @param index from 0 to {@code size() - 1}
     * @return the member
     * @throws IndexOutOfBoundsException if there is no such member
     */
    public EtcdServer get(int index) {
        return members.get(index);
    }

    /** {@return how many members the cluster has, running or not} */
    public int size() {
        return members.size();
    }

    /** {@return the members in index order, as an unmodifiable list} */
    public List<EtcdServer> members() {
        return members;
    }

    @Override
    public Iterator<EtcdServer> iterator() {
        return members.iterator();
    }

    /** {@return the client URLs of all members, {@code http://127.0.0.1:PORT}, in index order} */
    public List<String> endpoints() {
        return members.stream().map(EtcdServer::clientUrl).toList();
    }

    /**
     * {@return the member that is the leader now, as the running members see it} Empty if no
     * running member knows a leader (during an election, or without a quorum).
     */
    public Optional<EtcdServer> leader() {
        List<String[]> statuses = new ArrayList<>();
        for (EtcdServer member : members) {
            statuses.add(member.status().orElse(null));
        }
        String leaderId = statuses.stream()
                .filter(s -> s != null && !"0".equals(s[1]))
                .map(s -> s[1])
                .findFirst()
                .orElse(null);
        for (int i = 0; i < members.size(); i++) {
            if (statuses.get(i) != null && statuses.get(i)[0].equals(leaderId)) {
                return Optional.of(members.get(i));
            }
        }
        return Optional.empty();
    }

    /**
     * Waits until every running member that is not paused is healthy.
     *
     * @throws IllegalStateException if one is not healthy within the (scaled) timeout
     */
    public void awaitHealthy() {
        for (EtcdServer member : members) {
            ServerWait wait = ServerWait.start(member.description(), "healthy", READY_TIMEOUT);
            while (member.isRunning() && !member.isPaused() && !member.isHealthy()) {
                if (wait.expired()) {
                    throw new IllegalStateException(wait.failure() + "\n" + member.launchOutput());
                }
                wait.pause(10);
            }
            wait.done();
        }
    }

    /**
     * Brings the cluster back to a clean state between tests: every member resumed and running,
     * the cluster healthy, every key deleted. Leases and the revision counter are kept (revisions
     * only grow).
     *
     * @throws IllegalStateException if a member cannot be started or the cluster does not become
     *     healthy in time
     */
    public void reset() {
        forEachMember(EtcdServer::resume);
        // Started together, then awaited: a lone member of three never gets healthy.
        List<EtcdServer> stopped =
                members.stream().filter(member -> !member.isRunning()).toList();
        stopped.forEach(EtcdServer::spawn);
        if (!awaitReady(stopped)) {
            throw new IllegalStateException(
                    "Cannot start an etcd member again: its port is now used by another" + " process\n"
                            + stopped.stream().map(EtcdServer::launchOutput).collect(Collectors.joining("\n")));
        }
        awaitHealthy();
        deleteAllKeys();
    }

    /**
     * Deletes every key in the cluster, through a healthy member's HTTP gateway.
     *
     * @throws IllegalStateException if no member accepts the request
     */
    public void deleteAllKeys() {
        // The whole key space: key "\0" with range_end "\0", both base64.
        for (EtcdServer member : members) {
            if (member.isRunning()
                    && !member.isPaused()
                    && member.post("/v3/kv/deleterange", "{\"key\":\"AA==\",\"range_end\":\"AA==\"}")
                            .isPresent()) {
                return;
            }
        }
        throw new IllegalStateException("No etcd member accepted a request to delete all keys: " + members);
    }

    /** Stops every member and deletes its directory, even if closing one of them fails. */
    @Override
    public void close() {
        forEachMember(EtcdServer::close);
    }

    @Override
    public String toString() {
        return "EtcdCluster" + members;
    }

    // ---- for EtcdServer --------------------------------------------------------------------------

    String initialCluster() {
        return initialCluster;
    }

    String token() {
        return token;
    }

    /** Whether a majority of the members run, so that a member that joins can become healthy. */
    boolean majorityRunning() {
        long running = members.stream().filter(EtcdServer::isRunning).count();
        return running >= members.size() / 2 + 1;
    }

    // ---- forming the cluster ---------------------------------------------------------------------

    /** Starts all members on fresh ports; again on other ports if one was taken meanwhile. */
    private void form() {
        for (int attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
            assignFreePorts();
            forEachMember(EtcdServer::spawn);
            if (awaitReady(members)) {
                log.debug(
                        "Started etcd {} cluster of {} member(s): {}",
                        EtcdBinary.version(),
                        members.size(),
                        endpoints());
                return;
            }
            log.debug("A port was taken before an etcd member could bind it; forming the cluster again");
            forEachMember(member -> {
                member.stop();
                member.wipeData();
            });
        }
        throw new IllegalStateException("etcd cluster could not bind free ports in " + PORT_ATTEMPTS + " attempts");
    }

    /** Waits until the launched members are healthy; false if one of them found its port taken. */
    private boolean awaitReady(List<EtcdServer> launched) {
        List<EtcdServer> pending = new ArrayList<>(launched);
        ServerWait wait = ServerWait.start(
                launched.size() == members.size()
                        ? "etcd cluster of " + members.size() + " member" + (members.size() == 1 ? "" : "s")
                        : launched.stream().map(EtcdServer::description).collect(Collectors.joining(", ")),
                "healthy",
                READY_TIMEOUT);
        while (true) {
            for (Iterator<EtcdServer> it = pending.iterator(); it.hasNext(); ) {
                EtcdServer.Probe probe = it.next().probe(true);
                if (probe == EtcdServer.Probe.PORT_IN_USE) {
                    return false;
                }
                if (probe == EtcdServer.Probe.READY) {
                    it.remove();
                }
            }
            if (pending.isEmpty()) {
                wait.done();
                return true;
            }
            if (wait.expired()) {
                throw new IllegalStateException(wait.failure() + "; not healthy: "
                        + pending.stream().map(EtcdServer::name).collect(Collectors.joining(", ")) + "\n"
                        + pending.stream().map(EtcdServer::launchOutput).collect(Collectors.joining("\n")));
            }
            wait.pause(10);
        }
    }

    /** Two free loopback ports per member, all distinct, and the cluster definition that names them. */
    private void assignFreePorts() {
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (EtcdServer member : members) {
                ServerSocket client = bindFree();
                held.add(client);
                ServerSocket peer = bindFree();
                held.add(peer);
                member.assignPorts(client.getLocalPort(), peer.getLocalPort());
            }
        } finally {
            for (ServerSocket socket : held) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // a port we could not close is still free for etcd to try
                }
            }
        }
        initialCluster = members.stream()
                .map(member -> member.name() + "=" + member.peerUrl())
                .collect(Collectors.joining(","));
        byte[] bytes = new byte[6];
        random.nextBytes(bytes);
        token = "quorumlock-" + HexFormat.of().formatHex(bytes);
    }

    private static ServerSocket bindFree() {
        try {
            return new ServerSocket(Processes.freePort(EtcdServer.HOST), 1, InetAddress.getByName(EtcdServer.HOST));
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot find a free port on " + EtcdServer.HOST, e);
        }
    }

    private void forEachMember(Consumer<EtcdServer> action) {
        RuntimeException failure = null;
        for (EtcdServer member : members) {
            try {
                action.accept(member);
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
