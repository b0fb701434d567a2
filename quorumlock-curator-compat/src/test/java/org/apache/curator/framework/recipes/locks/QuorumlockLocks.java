package org.apache.curator.framework.recipes.locks;

import io.quorumlock.zookeeper.ZooKeeperLock;
import java.util.IdentityHashMap;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;

/** The adapters' locks: one per Curator client, as an application shares one; closed once its client is. */
final class QuorumlockLocks {

    private static final Map<CuratorFramework, ZooKeeperLock> LOCKS = new IdentityHashMap<>();

    private QuorumlockLocks() {}

    static synchronized ZooKeeperLock of(CuratorFramework client) {
        LOCKS.entrySet().removeIf(entry -> {
            if (entry.getKey().getState() != CuratorFrameworkState.STOPPED) {
                return false;
            }
            entry.getValue().close();
            return true;
        });
        return LOCKS.computeIfAbsent(
                client,
                c -> ZooKeeperLock.builder().client(c).holder("curator-compat").build());
    }
}
