/**
 * A fenced lock on ZooKeeper: {@link io.quorumlock.zookeeper.ZooKeeperLock} grants {@link
 * io.quorumlock.FencedLease}s whose fencing token is the czxid of the holder's lock node, and whose
 * liveness is the ZooKeeper session's.
 */
package io.quorumlock.zookeeper;
