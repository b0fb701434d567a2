package io.quorumlock.redis;

import io.quorumlock.redis.client.ClusterNodes;
import io.quorumlock.redis.client.HashSlots;
import io.quorumlock.redis.client.Reply;

/**
 * A cluster member's {@code CLUSTER NODES} in a few words, for {@code checkNodes()}: how many
 * masters and replicas the cluster has, and which slots this node serves, such as {@code 3
 * master(s), 3 replica(s); this node is a master of slots 0-5460 (5461 of 16384)}. Reads what
 * {@link ClusterNodes} reads; anything it cannot read is said so, never thrown.
 */
final class ClusterView {

    private ClusterView() {}

    /** The summary of {@code reply}, or why there is none. */
    static String of(Reply reply) {
        if (!(reply instanceof Reply.Bulk bulk)) {
            return "its CLUSTER NODES not answered: " + Reply.shape(reply);
        }
        int masters = 0;
        int replicas = 0;
        ClusterNodes.Node self = null;
        for (ClusterNodes.Node node : ClusterNodes.parse(bulk.text())) {
            masters += node.master() && !node.failing() ? 1 : 0;
            replicas += !node.master() && !node.failing() ? 1 : 0;
            self = node.myself() ? node : self;
        }
        String summary = masters + " master(s), " + replicas + " replica(s)";
        if (self == null) {
            return summary;
        }
        return summary + "; this node is " + (self.master() ? "a master" : "a replica")
                + (self.slots() == 0
                        ? " of no slot"
                        : " of slots " + self.rangesText(16) + " (" + self.slots() + " of " + HashSlots.COUNT + ")");
    }
}
