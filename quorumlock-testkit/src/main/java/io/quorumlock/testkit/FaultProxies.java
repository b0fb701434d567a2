package io.quorumlock.testkit;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * One {@link FaultProxy} in front of each server of a group, in the servers' order: a client given
 * {@link #uris()} (or {@link #connectString()}) goes through the proxies, while a client given the
 * servers' own addresses still reaches them directly.
 *
 * <pre>{@code
 * try (RedisServers nodes = RedisServers.start(5);
 *         FaultProxies proxies = FaultProxies.inFrontOf(nodes)) {
 *     // client A uses proxies.uris(), client B nodes.uris()
 *     proxies.partition(0, 1, 2); // A is cut off from a majority; B is not
 * }
 * }</pre>
 *
 * <p>{@link ZooKeeperServers#proxies} puts one in front of each server of a ZooKeeper ensemble.
 * {@link #close()} closes the proxies, not the servers.
 */
public final class FaultProxies implements AutoCloseable, Iterable<FaultProxy> {

    private final List<FaultProxy> proxies;

    private FaultProxies(List<FaultProxy> proxies) {
        this.proxies = List.copyOf(proxies);
    }

    /** Starts a proxy in front of each node, see {@link FaultProxy#inFrontOf(RedisServer)}. */
    public static FaultProxies inFrontOf(RedisServers nodes) {
        return inFrontOf(nodes.servers(), FaultProxy::inFrontOf);
    }

    /** Starts a proxy in front of each member's client port, see {@link FaultProxy#inFrontOf(EtcdServer)}. */
    public static FaultProxies inFrontOf(EtcdCluster cluster) {
        return inFrontOf(cluster.members(), FaultProxy::inFrontOf);
    }

    /** Starts one proxy in front of a PostgreSQL server, see {@link FaultProxy#inFrontOf(PostgresServer)}. */
    public static FaultProxies inFrontOf(PostgresServer server) {
        return inFrontOf(List.of(server), FaultProxy::inFrontOf);
    }

    /** Starts one proxy in front of a MariaDB server, see {@link FaultProxy#inFrontOf(MariaDbServer)}. */
    public static FaultProxies inFrontOf(MariaDbServer server) {
        return inFrontOf(List.of(server), FaultProxy::inFrontOf);
    }

    /**
     * Starts a proxy in front of each server, made by {@code start}; if one cannot start, those
     * already started are closed.
     */
    static <S> FaultProxies inFrontOf(List<S> servers, Function<S, FaultProxy> start) {
        List<FaultProxy> started = new ArrayList<>();
        try {
            for (S server : servers) {
                started.add(start.apply(server));
            }
            return new FaultProxies(started);
        } catch (RuntimeException e) {
            started.forEach(FaultProxy::close);
            throw e;
        }
    }

    /**
     * Returns the proxy in front of one server.
     *
     * @param index the server's index, from 0 to {@code size() - 1}
     * @throws IndexOutOfBoundsException if there is no such server
     */
    public FaultProxy get(int index) {
        return proxies.get(index);
    }

    /** {@return how many proxies there are} */
    public int size() {
        return proxies.size();
    }

    /** {@return the proxies in the servers' order, as an unmodifiable list} */
    public List<FaultProxy> proxies() {
        return proxies;
    }

    @Override
    public Iterator<FaultProxy> iterator() {
        return proxies.iterator();
    }

    /** {@return each proxy's {@link FaultProxy#uri()}, such as {@code redis://127.0.0.1:PORT}, in the servers' order} */
    public List<String> uris() {
        return proxies.stream().map(FaultProxy::uri).toList();
    }

    /** {@return {@code 127.0.0.1:P1,127.0.0.1:P2,...}: the proxies as a ZooKeeper connect string} */
    public String connectString() {
        return proxies.stream().map(FaultProxy::address).collect(Collectors.joining(","));
    }

    /** Partitions both directions of the proxies in front of the servers at {@code indexes}. */
    public void partition(int... indexes) {
        for (int index : indexes) {
            proxies.get(index).partition();
        }
    }

    /** Heals every proxy: held bytes are delivered, see {@link FaultProxy#heal()}. */
    public void heal() {
        proxies.forEach(FaultProxy::heal);
    }

    /** Switches every fault of every proxy off, see {@link FaultProxy#clearFaults()}. */
    public void clearFaults() {
        proxies.forEach(FaultProxy::clearFaults);
    }

    /** Closes every proxy (not the servers), even if closing one of them fails. */
    @Override
    public void close() {
        RuntimeException failure = null;
        for (FaultProxy proxy : proxies) {
            try {
                proxy.close();
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

    @Override
    public String toString() {
        return "FaultProxies" + proxies;
    }
}
