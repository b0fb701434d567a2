package io.quorumlock.zookeeper;

import io.quorumlock.internal.LeaseCore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A first place in a lock's queue turned into a lease; or why not ({@code refusal}); or neither:
 * unsettled, the contender looks again.
 */
record QueueGrant(ZooKeeperLease lease, String refusal) {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLock.class);

    /**
     * Turns a first place in the queue into a lease, without another request: the token and the
     * owning session come from the create's Stat, and the listing that found the node first (on
     * the session, with its watch on the queue) shows it is still there and starts the lease's
     * end. The lease follows the connection before it is returned; if any connection event came
     * since the listing was sent, the grant is not settled: the caller looks again, so that no
     * lease is handed out suspended or with an event missed.
     */
    static QueueGrant of(
            ZooKeeperLock lock,
            ConnectionWatch connection,
            String resource,
            LockAttempts.Created node,
            LockAttempts.Listing listing) {
        long session = lock.currentSessionId();
        if (node.owner() != session) {
            // Curator gave up on a session that the ensemble has not expired yet; that node goes soon.
            return new QueueGrant(
                    null,
                    "the lock node " + node.path() + " belongs to session " + ZooKeeperLease.hex(node.owner())
                            + ", an earlier one of this client");
        }
        ZooKeeperLease lease = new ZooKeeperLease(
                lock,
                resource,
                node.path(),
                node.czxid(),
                session,
                lock.negotiatedSessionTimeout(),
                listing.sent(),
                listing.watch());
        connection.follow(lease);
        try {
            lock.checkOpen();
        } catch (IllegalStateException closed) {
            // close() may have listed the leases before this one (and released the holder ahead,
            // which made it first): nobody would end it. The attempt deletes its node.
            lease.discard();
            throw closed;
        }
        listing.watch().attach(lease);
        if (connection.changes() != listing.changes() || !connection.reportedConnected()) {
            lease.discard();
            return new QueueGrant(null, null);
        }
        if (!lease.isValid()) {
            if (lease.state() == LeaseCore.State.LOST) {
                return new QueueGrant(null, "the lock node " + node.path() + " was deleted right after the grant");
            }
            // The listing was answered too late to leave the lease any time: look again.
            lease.discard();
            return new QueueGrant(null, null);
        }
        lease.startHeartbeats();
        log.debug("acquired '{}': token {}, node {}", resource, ZooKeeperLease.hex(node.czxid()), node.path());
        return new QueueGrant(lease, null);
    }
}
