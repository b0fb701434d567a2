package io.quorumlock.testkit;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * Several independent Redis nodes (not replicas of each other), as Redlock needs them.
 *
 * <pre>{@code
 * try (RedisServers nodes = RedisServers.start(5)) {
 *     nodes.get(0).stop();
 *     nodes.get(1).pause();
 *     // ... a quorum of 3 is still up
 *     nodes.reset(); // all 5 up, empty, clocks true
 * }
 * }</pre>
 */
public final class RedisServers implements AutoCloseable, Iterable<RedisServer> {

    private static final int MAX_PARALLEL_STARTS = 8;

    private final List<RedisServer> servers;

    private RedisServers(List<RedisServer> servers) {
        this.servers = List.copyOf(servers);
    }

    /**
     * Starts {@code count} nodes without persistence, in parallel.
     *
     * @param count how many nodes, at least 1
     * @return the running nodes
     * @throws IllegalArgumentException if {@code count} is less than 1
     * @throws IllegalStateException if a node does not come up; the others are then closed
     */
    public static RedisServers start(int count) {
        return start(count, false);
    }

    /**
     * Starts {@code count} nodes, in parallel.
     *
     * @param count how many nodes, at least 1
     * @param persistent whether the nodes write every command to an append-only file before they
     *     acknowledge it, see {@link RedisServer#start(boolean)}
     * @return the running nodes
     * @throws IllegalArgumentException if {@code count} is less than 1
     * @throws IllegalStateException if a node does not come up; the others are then closed
     */
    public static RedisServers start(int count, boolean persistent) {
        return start(count, i -> RedisServer.start(persistent));
    }

    /**
     * Starts {@code count} nodes on consecutive ports from {@code firstPort}, in parallel: node
     * {@code i} listens on {@code firstPort + i}.
     *
     * @param count how many nodes, at least 1
     * @param persistent as for {@link #start(int, boolean)}
     * @param firstPort the port of the first node
     * @return the running nodes
     * @throws IllegalArgumentException if {@code count} is less than 1 or a port would be out of range
     * @throws PortInUseException if another process holds one of the ports; no node is left running
     * @throws IllegalStateException if a node does not come up; the others are then closed
     */
    public static RedisServers start(int count, boolean persistent, int firstPort) {
        if (firstPort < 1 || (long) firstPort + count - 1 > 65535) {
            throw new IllegalArgumentException(
                    "the ports of " + count + " nodes from " + firstPort + " must be between 1 and 65535");
        }
        return start(count, i -> RedisServer.start(firstPort + i, persistent));
    }

    private static RedisServers start(int count, IntFunction<RedisServer> startNode) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be at least 1, was " + count);
        }
        AtomicInteger threads = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(count, MAX_PARALLEL_STARTS), task -> {
            Thread thread = new Thread(task, "quorumlock-redis-start-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<Future<RedisServer>> starts = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int index = i;
                starts.add(pool.submit(() -> startNode.apply(index)));
            }
            List<RedisServer> started = new ArrayList<>();
            RuntimeException failure = null;
            for (Future<RedisServer> start : starts) {
                try {
                    started.add(start.get());
                } catch (ExecutionException | InterruptedException e) {
                    if (e instanceof InterruptedException) {
                        Thread.currentThread().interrupt();
                    }
                    failure = addFailure(failure, e instanceof ExecutionException ? e.getCause() : e);
                }
            }
            if (failure != null) {
                started.forEach(RedisServer::close);
                throw failure;
            }
            return new RedisServers(started);
        } finally {
            pool.shutdown();
        }
    }

    /**
     * Returns one node.
     *
     * @param index from 0 to {@code size() - 1}
     * @return the node
     * @throws IndexOutOfBoundsException if there is no such node
     */
    public RedisServer get(int index) {
        return servers.get(index);
    }

    /** {@return how many nodes there are} */
    public int size() {
        return servers.size();
    }

    /** {@return the nodes' addresses as {@code redis://127.0.0.1:PORT}, in index order} */
    public List<String> uris() {
        return servers.stream().map(RedisServer::uri).toList();
    }

    /** {@return the nodes in index order, as an unmodifiable list} */
    public List<RedisServer> servers() {
        return servers;
    }

    @Override
    public Iterator<RedisServer> iterator() {
        return servers.iterator();
    }

    /**
     * Brings every node back to a clean state between tests: resumed if paused, started again if
     * stopped, clock reset, no longer a replica ({@code REPLICAOF NO ONE}), all keys deleted. Every
     * node is reset even if one fails. Settings changed with {@code CONFIG SET} are kept.
     *
     * @throws IllegalStateException if a node cannot be reset (the first failure, with the others
     *     suppressed)
     */
    public void reset() {
        forEachNode(server -> {
            server.resume();
            server.startAgain();
            server.resetClock();
            server.makeIndependent();
            server.flushAll();
        });
    }

    /**
     * Freezes the nodes {@code indexes} (SIGSTOP) until the result is closed, which resumes them:
     * {@code try (var frozen = servers.pause(0, 1, 2)) { ... }}.
     *
     * @param indexes the nodes, from 0 to {@code size() - 1}
     * @return what resumes them
     */
    public Paused pause(int... indexes) {
        int[] nodes = indexes.clone();
        for (int node : nodes) {
            get(node).pause();
        }
        return () -> {
            for (int node : nodes) {
                get(node).resume();
            }
        };
    }

    /** Nodes paused by {@link #pause(int...)}: closing it resumes them. */
    @FunctionalInterface
    public interface Paused extends AutoCloseable {
        @Override
        void close();
    }

    /** Stops every node and deletes its directory, even if closing one of them fails. */
    @Override
    public void close() {
        forEachNode(RedisServer::close);
    }

    @Override
    public String toString() {
        return "RedisServers" + servers;
    }

    private void forEachNode(Consumer<RedisServer> action) {
        RuntimeException failure = null;
        for (RedisServer server : servers) {
            try {
                action.accept(server);
            } catch (RuntimeException e) {
                failure = addFailure(failure, e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException addFailure(RuntimeException first, Throwable next) {
        if (first == null) {
            return next instanceof RuntimeException runtime
                    ? runtime
                    : new IllegalStateException("Cannot start a Redis node", next);
        }
        first.addSuppressed(next);
        return first;
    }
}
