package io.quorumlock.redis.client;

import io.quorumlock.internal.Ticker;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When each node started, as far as one client knows: every new connection reads {@code INFO
 * server} and {@code CONFIG GET append*} with its set-up, before any request, and hands the replies
 * here, to the one record of its node that all the client's connections share: for the lock's
 * restart guard.
 *
 * <ul>
 *   <li>The start is estimated on the client's ticker as the time the replies arrived minus {@code
 *       uptime_in_seconds} less one second (Redis counts the uptime from the whole second its start
 *       fell in, so it may say up to a second more than the truth); a reply read late only makes
 *       the estimate later, so it is never earlier than the real start. The newest estimate wins: a
 *       node's start is the latest that any reply implies, so an old reply read late (on a lane
 *       idle since before a restart) cannot make a restarted node look old.
 *   <li>A {@code run_id} other than the last one seen is a restart, or another server answering at
 *       the same address (a failover behind a proxy, a virtual IP or a managed endpoint), which
 *       never had this client's keys: the node counts as started when the change was seen,
 *       whatever its uptime, fsync or not.
 *   <li>A server whose run_id is known and that fsyncs every write ({@code appendonly yes} and
 *       {@code appendfsync always} on every connection to it; a denied or renamed CONFIG counts as
 *       not) lost nothing in its own start: it votes at once, unless the client saw its run_id
 *       change.
 *   <li>A node that does not answer INFO with a run_id counts as started when the connection was
 *       made.
 *   <li>Two entries whose servers answer with the same run_id are one server listed twice (an
 *       alias, a NAT, a proxy): {@linkplain #sameServer the same server}, logged; its votes count
 *       once.
 * </ul>
 */
public final class NodeStarts {

    private static final Logger log = LoggerFactory.getLogger(NodeStarts.class);

    private final Ticker ticker;
    private final Node[] nodes;
    /** Some two entries have answered with the same run_id. */
    private volatile boolean duplicates;

    public NodeStarts(List<String> names, Ticker ticker) {
        this.ticker = ticker;
        this.nodes = names.stream().map(Node::new).toArray(Node[]::new);
    }

    /**
     * Receives the set-up replies of one new connection to {@code node}: its {@code INFO server},
     * then its {@code CONFIG GET append*}, answered in that order before any request.
     */
    public Transport.ReplyHandler connection(int node) {
        return new Connection(nodes[node]);
    }

    /** What is known of the node's start; one not heard from yet counts as started now. */
    public NodeStart start(int node) {
        NodeStart start = nodes[node].start;
        return start != null ? start : NodeStart.at(ticker.nanos());
    }

    /** The latest time at which the node may have started; one not heard from yet counts as started now. */
    public long startNanos(int node) {
        return start(node).nanos();
    }

    /**
     * Whether the servers of entries {@code a} and {@code b} answered with the same run_id: one
     * server listed twice. Every vote is preceded on its connection by that connection's INFO, so
     * by the later of two votes of one server both run_ids are known.
     */
    public boolean sameServer(int a, int b) {
        if (!duplicates) {
            return false;
        }
        synchronized (this) {
            return a != b && nodes[a].runId != null && nodes[a].runId.equals(nodes[b].runId);
        }
    }

    /** The replies of one connection: INFO is kept until CONFIG GET, the last set-up reply, comes. */
    private final class Connection implements Transport.ReplyHandler {
        private final Node node;
        private Reply info;

        Connection(Node node) {
            this.node = node;
        }

        @Override
        public void onReply(Command command, Reply reply, Transport.Link link) {
            if (command.kind() == Command.Kind.INFO) {
                info = reply;
            } else if (info != null) {
                learn(node, info, fsyncs(reply));
            }
        }
    }

    /** The node's record, shared by every connection to it; changed under the lock of the NodeStarts. */
    private static final class Node {
        final String name;
        String runId;
        boolean refusalLogged;
        /** Every connection since the run_id was learnt showed fsync on every write. */
        boolean fsyncs;

        volatile NodeStart start;

        Node(String name) {
            this.name = name;
        }
    }

    private synchronized void learn(Node node, Reply reply, boolean fsync) {
        if (reply instanceof Reply.Failure) {
            return; // the connection broke first: no request on it was answered, nothing to learn
        }
        long now = ticker.nanos();
        NodeStart last = node.start;
        Map<String, String> info = reply instanceof Reply.Bulk bulk ? InfoReply.fields(bulk.text()) : Map.of();
        String id = info.get("run_id");
        long uptime = seconds(info.get("uptime_in_seconds"));
        if (id == null || uptime < 0) {
            // A configuration mistake (NOAUTH, say) is reported by the lock, once, with its remedy.
            boolean misconfigured =
                    reply instanceof Reply.Error error && NodeErrors.misconfiguration(error.message()) != null;
            if (!node.refusalLogged && !misconfigured) {
                node.refusalLogged = true;
                log.warn(
                        "node {} gave no run_id and uptime in INFO server ({}): the restart guard counts it as "
                                + "started whenever a connection to it is made",
                        node.name,
                        reply instanceof Reply.Error error ? NodeErrors.shortened(error.message()) : "fields missing");
            }
            node.fsyncs = false;
            node.start = new NodeStart(now, last != null && last.runIdChanged(), false);
            return;
        }
        // Redis counts the uptime from its start's second, truncated: it may say up to a second
        // more than the server has been up, so a second less is counted.
        long estimate = now - Math.max(0, uptime - 1) * 1_000_000_000L;
        if (node.runId == null) {
            node.runId = id;
            node.fsyncs = fsync && last == null; // after a refused INFO, the start is not the server's
            node.start = new NodeStart(last == null ? estimate : Math.max(last.nanos(), estimate), false, node.fsyncs);
            logSameServer(node);
        } else if (id.equals(node.runId)) {
            node.fsyncs &= fsync;
            node.start = new NodeStart(Math.max(last.nanos(), estimate), last.runIdChanged(), node.fsyncs);
        } else {
            log.warn(
                    "node {} answered with run_id {} where it had answered with {} (up {} s): it restarted, or "
                            + "another server answers at its address (a failover), without the keys of the old one;"
                            + " a restart guard keeps its yes out for the longest TTL from now",
                    node.name,
                    id,
                    node.runId,
                    uptime);
            node.runId = id;
            node.fsyncs = fsync;
            node.start = new NodeStart(Math.max(last.nanos(), now), true, fsync);
            logSameServer(node);
        }
    }

    /** Logs every other entry that has answered with the run_id that {@code node} has just shown. */
    private void logSameServer(Node node) {
        for (Node other : nodes) {
            if (other != node && node.runId.equals(other.runId)) {
                duplicates = true;
                log.warn(
                        "nodes {} and {} are the same server (run_id {}): it votes once; list each Redis server"
                                + " once (an alias, a NAT or a proxy may hide that two addresses reach one server)",
                        other.name,
                        node.name,
                        node.runId);
            }
        }
    }

    /** Whether a CONFIG GET append* reply shows appendonly yes and appendfsync always. */
    static boolean fsyncs(Reply reply) {
        if (!(reply instanceof Reply.Array array)) {
            return false; // denied, renamed or unanswered: not known to fsync
        }
        Map<String, String> values = new HashMap<>();
        List<Reply> items = array.items();
        for (int i = 0; i + 1 < items.size(); i += 2) {
            if (items.get(i) instanceof Reply.Bulk name && items.get(i + 1) instanceof Reply.Bulk value) {
                values.put(name.text(), value.text());
            }
        }
        return "yes".equalsIgnoreCase(values.get("appendonly")) && "always".equalsIgnoreCase(values.get("appendfsync"));
    }

    private static long seconds(String value) {
        try {
            return value == null ? -1 : Long.parseLong(value);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
