/**
 * Internal: the Redis client under {@link io.quorumlock.redis.Redlock}, public only because Java
 * packages require it to be reached from there; not API, and it may change in any release.
 *
 * <p>It knows commands and replies, never votes, guards or leases: {@link
 * io.quorumlock.redis.client.Transport} lends lanes of connections, one per node, and {@link
 * io.quorumlock.redis.client.NioTransport} implements them without a thread of its own (the
 * waiting callers poll); a connection ({@code RespLink}) sets itself up (AUTH, SELECT, the names,
 * the scripts to load), reads each node's start ({@link io.quorumlock.redis.client.NodeStarts}), and
 * runs a script by its text when a node has lost it; {@code Resp} and {@code RespReader} write and
 * read the bytes, within limits; {@code Wire} carries them, over TLS for {@code rediss://}. What a
 * reply means for the lock is decided in {@code io.quorumlock.redis}, which this package never
 * imports.
 */
package io.quorumlock.redis.client;
