package io.quorumlock.redis;

import io.quorumlock.redis.NodeCheck.Verdict;
import io.quorumlock.redis.client.Command;
import io.quorumlock.redis.client.InfoReply;
import io.quorumlock.redis.client.Reply;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/** Reads a node's INFO and CONFIG and judges it against Redlock's assumptions. */
final class NodeInspector {

    private static final String KEEP_OUT = "or keep a restarted node out of the quorum for at least the longest TTL"
            + " (Redlock.builder().restartGuard(...), on by default with several nodes, does this for its own client)";

    /** The remedy on a cluster, where the restart guard is not for the lock. */
    private static final String ON_CLUSTER =
            "or accept that a master restarted empty forgets the locks it held (a replica"
                    + " that takes its place keeps those that reached it)";

    private NodeInspector() {}

    /**
     * Inspects one node; {@code query} sends one command and returns its reply or failure, {@code
     * restartGuard} says why the restart guard keeps the node out of the vote now (null if it does not),
     * {@code located} where the node was found if not at its address (the master Sentinel named).
     */
    static NodeCheck inspect(
            String name, Function<Command, Reply> query, Supplier<String> restartGuard, Optional<String> located) {
        return inspect(name, query, restartGuard, located, false, false);
    }

    /**
     * As above; {@code single} for the single-node lock, {@code waits} if its grants wait for the
     * master's replicas ({@code WAIT}).
     */
    static NodeCheck inspect(
            String name,
            Function<Command, Reply> query,
            Supplier<String> restartGuard,
            Optional<String> located,
            boolean single,
            boolean waits) {
        StringBuilder text = new StringBuilder();
        for (String section : new String[] {"server", "replication", "cluster", "persistence", "memory"}) {
            Reply reply = query.apply(Command.info(section));
            if (!(reply instanceof Reply.Bulk info)) {
                return new NodeCheck(
                        name, "unknown", Optional.empty(), "unknown", Verdict.ERROR, List.of(unanswered(reply)));
            }
            text.append(info.text()).append('\n');
        }
        Map<String, String> info = InfoReply.fields(text.toString());
        List<String> errors = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        String role = info.getOrDefault("role", "unknown");
        if (role.equals("slave")) {
            role = "replica";
            errors.add("is a replica of " + info.getOrDefault("master_host", "?") + ":"
                    + info.getOrDefault("master_port", "?") + ": Redlock needs independent masters; list masters only");
        }
        boolean onCluster = name.startsWith("redis-cluster:") || name.startsWith("rediss-cluster:");
        if ("1".equals(info.get("cluster_enabled")) && !onCluster) {
            String cluster = ClusterView.of(query.apply(Command.clusterNodes()));
            if (single) {
                errors.add("is a Redis Cluster member (" + cluster + "): given as redis://, the lock does not follow"
                        + " the cluster's hash slots, so it would serve only the resources in this node's slots and be"
                        + " refused the others (MOVED); name the cluster as redis-cluster://host:port[,host:port...]");
            } else {
                errors.add("is a Redis Cluster member (" + cluster
                        + "): Redlock needs standalone nodes, not one cluster's shards");
            }
        }
        int replicas = parseInt(info.get("connected_slaves"));
        if (located.isPresent() && onCluster) {
            // The single-node lock on a cluster: the first master known is the one checked here.
            warnings.add("a Redis Cluster of " + located.get() + "; its first master has "
                    + (replicas == 0
                            ? "no replica: a master that dies takes the locks of its slots with it, and its slots"
                                    + " are down until it is back"
                            : replicas + " connected replica(s)" + replicaList(info, replicas)
                                    + (waits
                                            ? ": each grant and renewal waits for them (WAIT); replication is"
                                                    + " asynchronous, so a failover may still promote a replica that"
                                                    + " never got a holder's key"
                                            : ": nothing waits for them (waitForReplicas(0, ...)); replication is"
                                                    + " asynchronous, so a failover may promote a replica that never"
                                                    + " got a holder's key")));
        } else if (located.isPresent()) {
            // The single-node lock on the master Sentinel names: the replicas are what a failover promotes.
            warnings.add(located.get() + ", with " + replicas + " connected replica(s)" + replicaList(info, replicas)
                    + ": replication is asynchronous, so a failover may promote a replica that never got a"
                    + " holder's key; a lease kept alive is then lost with its notice, and one that is not may"
                    + " be granted twice");
        } else if (replicas > 0 && single) {
            warnings.add("has " + replicas + " connected replica(s)" + replicaList(info, replicas)
                    + (waits
                            ? ": each grant and renewal waits for them (WAIT); replication is asynchronous, so a"
                                    + " failover may still promote a replica that never got a holder's key"
                            : ": nothing waits for them (waitForReplicas(0, ...)); replication is asynchronous, so a"
                                    + " failover may promote a replica that never got a holder's key"));
        } else if (replicas > 0) {
            warnings.add("has " + replicas + " connected replica(s): replication is asynchronous and adds no safety to "
                    + "Redlock; a failover can lose the lock. Use independent nodes without failover");
        }
        String persistence = persistence(query, info, warnings, onCluster ? ON_CLUSTER : KEEP_OUT);
        eviction(info, warnings);
        String guard = restartGuard.get();
        if (guard != null) {
            warnings.add(guard);
        }
        Verdict verdict = !errors.isEmpty() ? Verdict.ERROR : !warnings.isEmpty() ? Verdict.WARNING : Verdict.OK;
        errors.addAll(warnings);
        return new NodeCheck(name, role, Optional.ofNullable(info.get("run_id")), persistence, verdict, errors);
    }

    /** The replicas INFO replication lists ({@code slaveN:ip=...,port=...,state=...,lag=...}), as {@code (ip:port state, lag N s)}. */
    private static String replicaList(Map<String, String> info, int replicas) {
        List<String> listed = new ArrayList<>();
        for (int i = 0; i < Math.min(replicas, 16); i++) {
            String line = info.get("slave" + i);
            if (line == null) {
                continue;
            }
            Map<String, String> fields = new java.util.HashMap<>();
            for (String pair : line.split(",", 16)) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    fields.put(pair.substring(0, eq), pair.substring(eq + 1));
                }
            }
            listed.add(fields.getOrDefault("ip", "?") + ":" + fields.getOrDefault("port", "?") + " "
                    + fields.getOrDefault("state", "?") + ", lag " + fields.getOrDefault("lag", "?") + " s");
        }
        return listed.isEmpty() ? "" : " (" + String.join("; ", listed) + ")";
    }

    /** Why INFO got no answer, and the remedy: a configuration error names its own. */
    private static String unanswered(Reply reply) {
        io.quorumlock.ServerAnswer outcome = Ballot.vote(Command.info("server"), "", reply);
        if (outcome.kind() == io.quorumlock.ServerAnswer.Kind.MISCONFIGURED) {
            return outcome.kind().description() + " (" + outcome.detail() + ")";
        }
        if (reply instanceof Reply.Error) {
            return "INFO refused (" + outcome.detail() + "): allow INFO for this user";
        }
        return outcome.kind().description() + " (" + outcome.detail() + "): start the node or remove it from the list";
    }

    private static String persistence(
            Function<Command, Reply> query, Map<String, String> info, List<String> warnings, String keepOut) {
        Optional<String> appendonly = config(query, "appendonly");
        Optional<String> fsync = config(query, "appendfsync");
        if (appendonly.isEmpty()) {
            String aof = "1".equals(info.get("aof_enabled")) ? "aof, fsync unknown" : "unknown";
            warnings.add("persistence unknown (CONFIG is renamed or denied): make sure of appendonly yes and "
                    + "appendfsync always, " + keepOut);
            return aof;
        }
        if (!appendonly.get().equals("yes")) {
            warnings.add(
                    "loses its keys on restart (appendonly no): set appendonly yes and appendfsync always, " + keepOut);
            return "none";
        }
        String policy = fsync.orElse("unknown");
        if (!policy.equals("always")) {
            warnings.add(
                    "can lose recent keys on a crash (appendfsync " + policy + "): set appendfsync always, " + keepOut);
        }
        return "aof, fsync " + policy;
    }

    /**
     * A node with a memory limit and a policy other than noeviction may evict a lock key before its
     * TTL when memory is full (every volatile-* policy picks among keys with a TTL, which lock keys
     * all have): another client is then granted a lock still held.
     */
    private static void eviction(Map<String, String> info, List<String> warnings) {
        String policy = info.get("maxmemory_policy");
        String limit = info.get("maxmemory");
        if (policy != null && !policy.equals("noeviction") && limit != null && !limit.equals("0")) {
            warnings.add("may evict lock keys before their TTL when memory is full (maxmemory-policy " + policy
                    + ", maxmemory " + limit + "): set maxmemory-policy noeviction, so that a full node refuses the"
                    + " lock instead of granting it twice, or give the locks a node of their own");
        }
    }

    /** Marks every node whose run_id another entry shares: the same server listed under two names. */
    static List<NodeCheck> flagSameServers(List<NodeCheck> checks) {
        Map<String, List<String>> byRunId = new HashMap<>();
        for (NodeCheck c : checks) {
            c.runId()
                    .ifPresent(id ->
                            byRunId.computeIfAbsent(id, k -> new ArrayList<>()).add(c.node()));
        }
        List<NodeCheck> result = new ArrayList<>(checks.size());
        for (NodeCheck c : checks) {
            List<String> same = c.runId().map(byRunId::get).orElse(List.of());
            if (same.size() < 2) {
                result.add(c);
                continue;
            }
            List<String> findings = new ArrayList<>();
            findings.add("is the same server as "
                    + String.join(
                            ", ", same.stream().filter(n -> !n.equals(c.node())).toList())
                    + " (same run_id): each server may vote only once; list independent servers");
            findings.addAll(c.findings());
            result.add(new NodeCheck(c.node(), c.role(), c.runId(), c.persistence(), Verdict.ERROR, findings));
        }
        return result;
    }

    /** A CONFIG GET value; empty where CONFIG is renamed away or denied. */
    private static Optional<String> config(Function<Command, Reply> query, String name) {
        return query.apply(Command.configGet(name)) instanceof Reply.Array pair
                        && pair.items().size() == 2
                        && pair.items().get(1) instanceof Reply.Bulk value
                ? Optional.of(value.text())
                : Optional.empty();
    }

    private static int parseInt(String value) {
        try {
            return value == null ? 0 : Integer.parseInt(value);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
