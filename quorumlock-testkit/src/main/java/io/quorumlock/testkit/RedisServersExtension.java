package io.quorumlock.testkit;

import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A JUnit 5 extension that runs independent Redis nodes for one test class: started before all
 * its tests, {@linkplain RedisServers#reset() reset} before each test (resumed, started, clocks
 * true, keys deleted), and closed after all of them, whether they passed or not.
 *
 * <pre>{@code
 * class RedlockIT {
 *     @RegisterExtension
 *     static final RedisServersExtension redis = RedisServersExtension.nodes(5);
 *
 *     @Test
 *     void survivesTwoDeadNodes() {
 *         redis.get(0).stop();
 *         redis.get(1).stop();
 *         // ... lock over redis.uris()
 *     }
 * }
 * }</pre>
 *
 * <p>Register it on a {@code static} field: JUnit calls {@code beforeAll} only on static ones.
 * Nested test classes share the nodes of the class that registered the extension. The tests of
 * one class must not run concurrently with each other, since each one resets the shared nodes.
 */
public final class RedisServersExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {

    private final int count;
    private boolean persistent;
    private RedisServers servers;
    private String owner;

    private RedisServersExtension(int count) {
        this.count = count;
    }

    /**
     * An extension with {@code count} nodes, not persistent unless {@link #persistent()} is called.
     *
     * @param count how many nodes, at least 1
     * @return the extension, to register with {@code @RegisterExtension}
     * @throws IllegalArgumentException if {@code count} is less than 1
     */
    public static RedisServersExtension nodes(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be at least 1, was " + count);
        }
        return new RedisServersExtension(count);
    }

    /**
     * Makes the nodes persistent ({@code --appendonly yes --appendfsync always}), so that keys
     * survive a restart.
     *
     * @return this extension
     * @throws IllegalStateException if the nodes have already started
     */
    public synchronized RedisServersExtension persistent() {
        if (servers != null) {
            throw new IllegalStateException("persistent() must be called before the nodes start");
        }
        persistent = true;
        return this;
    }

    /**
     * Returns one node.
     *
     * @param index from 0 to {@code size() - 1}
     * @return the node
     * @throws IllegalStateException if the nodes are not running (outside the test class)
     */
    public RedisServer get(int index) {
        return servers().get(index);
    }

    /** {@return the nodes' addresses as {@code redis://127.0.0.1:PORT}, in index order} */
    public List<String> uris() {
        return servers().uris();
    }

    /**
     * {@return the running nodes}
     *
     * @throws IllegalStateException if the nodes are not running (outside the test class)
     */
    public synchronized RedisServers servers() {
        if (servers == null) {
            throw new IllegalStateException("The Redis nodes are not running: register RedisServersExtension on a"
                    + " static field with @RegisterExtension, and use it only inside the test class");
        }
        return servers;
    }

    /** {@return how many nodes the extension runs} */
    public int size() {
        return count;
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (servers == null) {
            servers = RedisServers.start(count, persistent);
            owner = context.getUniqueId();
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        servers().reset();
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (servers != null && context.getUniqueId().equals(owner)) {
            try {
                servers.close();
            } finally {
                servers = null;
                owner = null;
            }
        }
    }
}
