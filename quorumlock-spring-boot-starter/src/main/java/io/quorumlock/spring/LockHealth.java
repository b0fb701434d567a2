package io.quorumlock.spring;

import io.quorumlock.LeaderElection;
import io.quorumlock.Lease;
import io.quorumlock.QuorumlockException;
import io.quorumlock.etcd.EtcdLock;
import io.quorumlock.jdbc.JdbcLock;
import io.quorumlock.redis.NodeCheck;
import io.quorumlock.redis.NodeCheckReport;
import io.quorumlock.redis.Redlock;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/** The health of each kind of lock; none shows a secret. */
final class LockHealth {

    /** How long the etcd check waits for the cluster. */
    static final Duration ETCD_TIMEOUT = Duration.ofSeconds(2);

    /** How long the database check waits for the database. */
    static final Duration DATABASE_TIMEOUT = Duration.ofSeconds(2);

    private LockHealth() {}

    /** {@code lock}'s health, with the detail {@code leader} where the context has a {@link QuorumlockLeadership}. */
    static HealthIndicator withLeader(HealthIndicator lock, ObjectProvider<QuorumlockLeadership> leadership) {
        QuorumlockLeadership candidate = leadership.getIfUnique();
        return candidate == null ? lock : new Leading(lock, candidate);
    }

    /**
     * The lock's health and the detail {@code leader}: the election, this instance (its holder name),
     * whether it leads, the term's fencing token where it leads on a fenced backend, and the holder
     * name of whichever instance leads now, as the servers tell ("unknown" if they cannot). Whether this
     * instance leads never changes the status: a follower is as healthy as the leader.
     */
    record Leading(HealthIndicator lock, QuorumlockLeadership leadership) implements HealthIndicator {

        @Override
        public Health health() {
            Health health = lock.health();
            Map<String, Object> leader = new LinkedHashMap<>();
            leader.put("election", leadership.election());
            leader.put("holder", leadership.holder());
            Optional<LeaderElection.Term<? extends Lease>> term = leadership.term(); // read once: one answer
            leader.put("leading", term.isPresent());
            term.ifPresent(t -> t.fencingToken().ifPresent(token -> leader.put("fencingToken", token)));
            try {
                leadership.leader().ifPresent(who -> leader.put("leader", who.name()));
            } catch (RuntimeException e) { // the servers could not tell: the lock's own health says why
                leader.put("leader", "unknown");
            }
            return Health.status(health.getStatus())
                    .withDetails(health.getDetails())
                    .withDetail("leader", leader)
                    .build();
        }
    }

    /**
     * {@link Redlock#checkNodes()}: DOWN when fewer than a quorum of nodes answer, or a node that
     * answers is unfit (a replica, a cluster member, a server listed twice); UP otherwise, with the
     * warnings (persistence without fsync) and the unreachable nodes in the details. Bounded by
     * the node timeout per node.
     */
    record Redis(Redlock lock) implements HealthIndicator {

        @Override
        public Health health() {
            NodeCheckReport report = lock.checkNodes();
            int answered = 0;
            boolean unfit = false;
            List<Map<String, Object>> nodes = new java.util.ArrayList<>();
            for (NodeCheck node : report.nodes()) {
                boolean answers = node.runId().isPresent() || !"unknown".equals(node.role());
                answered += answers ? 1 : 0;
                unfit |= answers && node.verdict() == NodeCheck.Verdict.ERROR;
                Map<String, Object> details = new LinkedHashMap<>();
                details.put("node", node.node());
                details.put("verdict", node.verdict().name());
                details.put("role", node.role());
                details.put("persistence", node.persistence());
                details.put("findings", node.findings());
                nodes.add(details);
            }
            Health.Builder health = answered >= lock.quorum() && !unfit ? Health.up() : Health.down();
            return health.withDetail("backend", "redis")
                    .withDetail("quorum", lock.quorum())
                    .withDetail("answered", answered)
                    .withDetail("nodes", nodes)
                    .build();
        }
    }

    /** UP while the Curator client is connected to the ensemble; never waits. */
    record ZooKeeper(ZooKeeperLock lock) implements HealthIndicator {

        @Override
        public Health health() {
            boolean connected = lock.isConnected();
            return (connected ? Health.up() : Health.down())
                    .withDetail("backend", "zookeeper")
                    .withDetail("ensemble", lock.ensemble())
                    .withDetail("connected", connected)
                    .build();
        }
    }

    /** UP when the cluster answers a linearizable read within {@link #ETCD_TIMEOUT}. */
    record Etcd(EtcdLock lock) implements HealthIndicator {

        @Override
        public Health health() {
            Health.Builder health;
            try {
                health = Health.up().withDetail("revision", lock.checkCluster(ETCD_TIMEOUT));
            } catch (QuorumlockException e) {
                health = Health.down().withDetail("error", e.getMessage());
            }
            return health.withDetail("backend", "etcd")
                    .withDetail("cluster", lock.toString())
                    .build();
        }
    }

    /** UP when the database answers the lock's check (table, sequence, privileges, clock) within {@link #DATABASE_TIMEOUT}. */
    record Jdbc(JdbcLock lock) implements HealthIndicator {

        @Override
        public Health health() {
            Health.Builder health;
            try {
                JdbcLock.DatabaseCheck check = lock.check(DATABASE_TIMEOUT);
                health = Health.up()
                        .withDetail("dialect", check.dialect().name().toLowerCase(java.util.Locale.ROOT))
                        .withDetail("clockOffsetMillis", check.clockOffset().toMillis());
            } catch (QuorumlockException e) {
                health = Health.down().withDetail("error", e.getMessage());
            }
            return health.withDetail("backend", "jdbc")
                    .withDetail("database", lock.toString())
                    .build();
        }
    }
}
