/**
 * A fenced lock on etcd v3 ({@link io.quorumlock.etcd.EtcdLock}), through jetcd: the holder's
 * lease carries a fencing token, the create revision of its lock key, that grows with every grant
 * of a resource, and reports its own loss as it happens.
 */
package io.quorumlock.etcd;
