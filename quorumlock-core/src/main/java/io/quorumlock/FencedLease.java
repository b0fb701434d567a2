package io.quorumlock;

import java.util.concurrent.CompletableFuture;

/**
 * A lease from a consensus system (ZooKeeper, etcd) or a database ({@code JdbcLock}) that carries a fencing token: for one
 * resource, every later grant carries a strictly larger token, across clients, processes, server
 * restarts and leader changes. Hand the token to the storage with every write made under the
 * lease, and let the storage refuse a token older than one it has seen (see {@code JdbcFence}):
 * that keeps the data safe even when a paused holder wakes up after its lease was lost.
 *
 * <p>A plain {@link Lease} has no token on purpose: a TTL lock alone cannot make a write safe.
 */
public interface FencedLease extends Lease {

    /**
     * The fencing token of this grant: positive, and larger than the token of every earlier grant
     * of this resource (a ZooKeeper zxid, an etcd revision, a database sequence's value). Storage that starts a resource at token
     * 0 therefore accepts the first grant.
     */
    long fencingToken();

    /**
     * Completes, with the evidence, as soon as the lease is known to be lost (session expired,
     * lease revoked, keep-alive failed). Never completes if the lease is released first.
     */
    CompletableFuture<LeaseLostException> lost();

    /**
     * Completes as soon as this holder can no longer be sure that it holds the lease: at the loss,
     * or earlier where the backend knows of a state in which the server may end the lease without
     * this holder hearing of it in time (ZooKeeper: a suspended connection). Work that must not
     * outlive the lease stops here; {@code withLock} and {@code quorumlock run} do. By default the
     * same as {@link #lost()}.
     */
    default CompletableFuture<LeaseLostException> inDoubt() {
        return lost();
    }
}
