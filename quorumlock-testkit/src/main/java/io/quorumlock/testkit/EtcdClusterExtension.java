package io.quorumlock.testkit;

import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A JUnit 5 extension that runs an etcd cluster for one test class: started before all its tests,
 * {@linkplain EtcdCluster#reset() reset} before each test (every member running and healthy, no
 * keys), and closed after all of them, whether they passed or not. Without an etcd binary the
 * class's tests are skipped, with a message that names the package to install.
 *
 * <pre>{@code
 * class EtcdLockIT {
 *     @RegisterExtension
 *     static final EtcdClusterExtension etcd = EtcdClusterExtension.members(3);
 *
 *     @Test
 *     void survivesALostMember() {
 *         etcd.get(0).stop();
 *         // ... lock over etcd.endpoints()
 *     }
 * }
 * }</pre>
 *
 * <p>Register it on a {@code static} field: JUnit calls {@code beforeAll} only on static ones.
 * Nested test classes share the cluster of the class that registered the extension. The tests of
 * one class must not run concurrently with each other, since each one resets the shared cluster.
 */
public final class EtcdClusterExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {

    private final int size;
    private EtcdCluster cluster;
    private String owner;

    private EtcdClusterExtension(int size) {
        this.size = size;
    }

    /**
     * An extension with a cluster of {@code count} members.
     *
     * @param count how many members, from 1 to 7
     * @return the extension, to register with {@code @RegisterExtension}
     * @throws IllegalArgumentException if {@code count} is out of range
     */
    public static EtcdClusterExtension members(int count) {
        if (count < 1 || count > EtcdCluster.MAX_MEMBERS) {
            throw new IllegalArgumentException(
                    "count must be between 1 and " + EtcdCluster.MAX_MEMBERS + ", was " + count);
        }
        return new EtcdClusterExtension(count);
    }

    /**
     * Returns one member.
     *
     * @param index from 0 to {@code size() - 1}
     * @return the member
     * @throws IllegalStateException if the cluster is not running (outside the test class)
     */
    public EtcdServer get(int index) {
        return cluster().get(index);
    }

    /** {@return the client URLs of all members, {@code http://127.0.0.1:PORT}, in index order} */
    public List<String> endpoints() {
        return cluster().endpoints();
    }

    /**
     * {@return the running cluster}
     *
     * @throws IllegalStateException if the cluster is not running (outside the test class)
     */
    public synchronized EtcdCluster cluster() {
        if (cluster == null) {
            throw new IllegalStateException("The etcd cluster is not running: register EtcdClusterExtension on a"
                    + " static field with @RegisterExtension, and use it only inside the test class");
        }
        return cluster;
    }

    /** {@return how many members the cluster has} */
    public int size() {
        return size;
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (cluster == null && EtcdCluster.available()) {
            cluster = EtcdCluster.start(size);
            owner = context.getUniqueId();
        }
    }

    /** Skips each test, rather than the class, without a binary: the reports then count and explain every skip. */
    @Override
    public void beforeEach(ExtensionContext context) {
        Assumptions.assumeTrue(
                EtcdCluster.available(),
                () -> "etcd tests skipped: " + EtcdCluster.unavailableReason().orElse(""));
        cluster().reset();
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (cluster != null && context.getUniqueId().equals(owner)) {
            try {
                cluster.close();
            } finally {
                cluster = null;
                owner = null;
            }
        }
    }
}
