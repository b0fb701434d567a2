package io.quorumlock.redis;

import io.quorumlock.IllegalSettingException;
import io.quorumlock.internal.Settings;
import io.quorumlock.redis.client.NodeAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The builder's nodes, parsed and checked: each server once, a Sentinel or Cluster address alone. */
final class NodeAddresses {

    private NodeAddresses() {}

    /**
     * {@code uris} parsed, each given {@code password} (or null) unless its URI has one.
     *
     * @param restartGuard the builder's restart guard setting, null if unset
     * @throws IllegalSettingException naming the node and the remedy
     */
    static List<NodeAddress> parse(List<String> uris, String password, Boolean restartGuard) {
        Map<String, NodeAddress> servers = new HashMap<>();
        List<NodeAddress> addresses = new ArrayList<>(uris.size());
        for (int i = 0; i < uris.size(); i++) {
            String uri = uris.get(i);
            NodeAddress address = Settings.parse("nodes", i, () -> NodeAddress.parse(uri));
            if (password != null && address.password().isEmpty()) {
                address = address.withPassword(password);
            }
            Settings.requireArgument(
                    address.sentinels().isEmpty() || uris.size() == 1,
                    "nodes",
                    "node %s is a master that Sentinel manages: it serves the single-node lock only, not"
                            + " Redlock, whose nodes must be independent masters that never fail over (a"
                            + " promoted replica may lack a holder's key); give it as the only node",
                    address);
            Settings.requireArgument(
                    !address.cluster() || uris.size() == 1,
                    "nodes",
                    "node %s is a Redis Cluster: it serves the single-node lock only, not Redlock, whose nodes"
                            + " must be independent masters, not one cluster's shards, which fail over (a promoted"
                            + " replica may lack a holder's key); give it as the only node",
                    address);
            Settings.requireArgument(
                    !address.cluster() || !Boolean.TRUE.equals(restartGuard),
                    "restartGuard",
                    "the restart guard keeps Redlock's restarted nodes out of the vote; on a Redis Cluster (%s) a"
                            + " master's slots go to its replica when it fails: leave restartGuard unset",
                    address);
            NodeAddress earlier = servers.putIfAbsent(address.server(), address);
            if (earlier != null) {
                throw new IllegalSettingException(
                        "nodes",
                        i,
                        "node " + address.server() + " is listed twice (" + earlier + " and " + address
                                + "): each Redis server may vote only once; list independent servers");
            }
            addresses.add(address);
        }
        return addresses;
    }
}
