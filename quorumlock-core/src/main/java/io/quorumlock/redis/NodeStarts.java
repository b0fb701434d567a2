package io.quorumlock.redis;

import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When each node started, as far as one client knows: every new connection reads {@code INFO
 * server} with its set-up, before any request, and hands the reply here, to the one record of its
 * node that all the client's connections share. The start is estimated on the client's ticker as
 * the time the reply arrived minus {@code uptime_in_seconds}; Redis rounds the uptime down, so the
 * estimate is never earlier than the real start. A node that does not answer INFO counts as
 * started when the connection was made. For the restart guard; see {@link RestartGuard}.
 */
final class NodeStarts {

    private static final Logger log = LoggerFactory.getLogger(NodeStarts.class);

    private final Ticker ticker;
    private final Node[] nodes;

    NodeStarts(List<String> names, Ticker ticker) {
        this.ticker = ticker;
        this.nodes = names.stream().map(Node::new).toArray(Node[]::new);
    }

    /** Receives the {@code INFO server} replies of the connections to one node. */
    Transport.ReplyHandler of(int node) {
        return nodes[node];
    }

    /** The latest time at which the node may have started; one not heard from yet counts as started now. */
    long startNanos(int node) {
        Node n = nodes[node];
        return n.known ? n.startNanos : ticker.nanos();
    }

    private final class Node implements Transport.ReplyHandler {
        private final String name;
        private String runId;
        private boolean refusalLogged;
        private volatile long startNanos;
        private volatile boolean known;

        Node(String name) {
            this.name = name;
        }

        @Override
        public synchronized void onReply(Request request, Reply reply, Transport.Link link) {
            if (reply instanceof Reply.Failure) {
                return; // the connection broke first: no request on it was answered, nothing to learn
            }
            long now = ticker.nanos();
            Map<String, String> info = reply instanceof Reply.Bulk bulk ? InfoReply.fields(bulk.text()) : Map.of();
            String id = info.get("run_id");
            long uptime = seconds(info.get("uptime_in_seconds"));
            if (id == null || uptime < 0) {
                if (!refusalLogged) {
                    refusalLogged = true;
                    log.warn(
                            "node {} gave no run_id and uptime in INFO server ({}): the restart guard counts it as "
                                    + "started whenever a connection to it is made",
                            name,
                            reply instanceof Reply.Error error
                                    ? NodeErrors.shortened(error.message())
                                    : "fields missing");
                }
                startNanos = now;
            } else {
                if (runId != null && !runId.equals(id)) {
                    log.warn("node {} has restarted: run_id {} is now {}, up {} s", name, runId, id, uptime);
                }
                runId = id;
                startNanos = now - uptime * 1_000_000_000L;
            }
            known = true;
        }
    }

    private static long seconds(String value) {
        try {
            return value == null ? -1 : Long.parseLong(value);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
