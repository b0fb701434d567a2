package org.apache.curator.framework.recipes.locks;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * Curator's own {@code TestInterProcessReadWriteLock} (curator-recipes 5.9.0's test jar), unchanged,
 * against {@link io.quorumlock.zookeeper.CuratorReadWriteLock} through the {@link
 * InterProcessReadWriteLock} adapter, on the real ZooKeeper server Curator's base class starts. Its
 * tests are inherited as they are; the two that cannot apply are overridden here, each with the
 * reason.
 */
class CuratorsReadWriteLockTestsIT extends TestInterProcessReadWriteLock {

    @Test
    @Disabled("gives the lock node data of its own (new byte[] {1, 2, 3, 4}): a quorumlock node's data is its"
            + " lock's holder name, set once on the ZooKeeperLock (ZooKeeperLockBuilder.holder)")
    @Override
    public void testSetNodeData() {}

    @Test
    @Disabled("reads the write lock's node path (getLockPath), which a quorumlock lease does not expose; a writer"
            + " whose session was killed giving way to a reader is tested in"
            + " CuratorReadWriteLockIT.aWriterWhoseSessionEndsGivesWayAndItsLeaseIsLost")
    @Override
    public void testLockPath() {}
}
