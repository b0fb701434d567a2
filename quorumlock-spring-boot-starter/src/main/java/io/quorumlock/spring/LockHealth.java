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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.util.ClassUtils;

/**
 * The health of each kind of lock, as a status and details from which either Boot line's health
 * contributor is made (Boot 4's {@code HealthIndicator}, and 3.5's at run time); none shows a
 * secret.
 */
final class LockHealth {

    /** The health contributor's bean, {@code quorumlock} to Actuator. */
    static final String BEAN = "quorumlockHealthIndicator";

    /** How long the etcd check waits for the cluster. */
    static final Duration ETCD_TIMEOUT = Duration.ofSeconds(2);

    /** How long the database check waits for the database. */
    static final Duration DATABASE_TIMEOUT = Duration.ofSeconds(2);

    private static final String ZOOKEEPER = "io.quorumlock.zookeeper.ZooKeeperLock";
    private static final String ETCD = "io.quorumlock.etcd.EtcdLock";
    private static final String JDBC = "io.quorumlock.jdbc.JdbcLock";

    private LockHealth() {}

    /** A lock's health: UP or DOWN, and the details. */
    record Report(boolean up, Map<String, Object> details) {}

    /**
     * The health of the context's lock (its single {@link Redlock}, {@link ZooKeeperLock}, {@link
     * EtcdLock} or {@link JdbcLock}), with the detail {@code leader} where the context has a {@link
     * QuorumlockLeadership}.
     *
     * @throws IllegalStateException if the context has none of them
     */
    static Supplier<Report> of(ListableBeanFactory beans) {
        ClassLoader loader = LockHealth.class.getClassLoader();
        Supplier<Report> lock = Optional.ofNullable(Redis.find(beans))
                .or(() -> Optional.ofNullable(ClassUtils.isPresent(ZOOKEEPER, loader) ? ZooKeeper.find(beans) : null))
                .or(() -> Optional.ofNullable(ClassUtils.isPresent(ETCD, loader) ? Etcd.find(beans) : null))
                .or(() -> Optional.ofNullable(ClassUtils.isPresent(JDBC, loader) ? Jdbc.find(beans) : null))
                .orElseThrow(() -> new IllegalStateException("the context has no single lock whose health is known"));
        ObjectProvider<QuorumlockLeadership> leadership = beans.getBeanProvider(QuorumlockLeadership.class);
        return () -> withLeader(lock.get(), leadership.getIfUnique());
    }

    /**
     * Matches when the context has a single lock whose health is known: a {@link Redlock}, {@link
     * ZooKeeperLock}, {@link EtcdLock} or {@link JdbcLock}, auto-configured or the application's own.
     */
    static final class OnLock extends AnyNestedCondition {

        OnLock() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnSingleCandidate(Redlock.class)
        static final class Redlocks {}

        @ConditionalOnClass(name = ZOOKEEPER)
        @ConditionalOnSingleCandidate(type = ZOOKEEPER)
        static final class ZooKeeperLocks {}

        @ConditionalOnClass(name = ETCD)
        @ConditionalOnSingleCandidate(type = ETCD)
        static final class EtcdLocks {}

        @ConditionalOnClass(name = JDBC)
        @ConditionalOnSingleCandidate(type = JDBC)
        static final class JdbcLocks {}
    }

    /**
     * {@code report} and the detail {@code leader}: the election, this instance (its holder name),
     * whether it leads, the term's fencing token where it leads on a fenced backend, and the holder
     * name of whichever instance leads now, as the servers tell ("unknown" if they cannot). Whether
     * this instance leads never changes the status: a follower is as healthy as the leader.
     */
    static Report withLeader(Report report, QuorumlockLeadership leadership) {
        if (leadership == null) {
            return report;
        }
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
        Map<String, Object> details = new LinkedHashMap<>(report.details());
        details.put("leader", leader);
        return new Report(report.up(), details);
    }

    /** A report of {@code up} with {@code details}, given as key, value, key, value, ... in order. */
    private static Report report(boolean up, Object... details) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < details.length; i += 2) {
            map.put((String) details[i], details[i + 1]);
        }
        return new Report(up, map);
    }

    /**
     * {@link Redlock#checkNodes()}: DOWN when fewer than a quorum of nodes answer, or a node that
     * answers is unfit (a replica, a cluster member, a server listed twice); UP otherwise, with the
     * warnings (persistence without fsync) and the unreachable nodes in the details. Bounded by
     * the node timeout per node.
     */
    static final class Redis {

        static Supplier<Report> find(ListableBeanFactory beans) {
            Redlock lock = beans.getBeanProvider(Redlock.class).getIfUnique();
            return lock == null ? null : () -> check(lock);
        }

        static Report check(Redlock lock) {
            NodeCheckReport report = lock.checkNodes();
            int answered = 0;
            boolean unfit = false;
            List<Map<String, Object>> nodes = new ArrayList<>();
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
            return report(
                    answered >= lock.quorum() && !unfit,
                    "backend",
                    "redis",
                    "quorum",
                    lock.quorum(),
                    "answered",
                    answered,
                    "nodes",
                    nodes);
        }
    }

    /** UP while the Curator client is connected to the ensemble; never waits. */
    static final class ZooKeeper {

        static Supplier<Report> find(ListableBeanFactory beans) {
            ZooKeeperLock lock = beans.getBeanProvider(ZooKeeperLock.class).getIfUnique();
            return lock == null ? null : () -> check(lock);
        }

        static Report check(ZooKeeperLock lock) {
            boolean connected = lock.isConnected();
            return report(connected, "backend", "zookeeper", "ensemble", lock.ensemble(), "connected", connected);
        }
    }

    /** UP when the cluster answers a linearizable read within {@link #ETCD_TIMEOUT}. */
    static final class Etcd {

        static Supplier<Report> find(ListableBeanFactory beans) {
            EtcdLock lock = beans.getBeanProvider(EtcdLock.class).getIfUnique();
            return lock == null ? null : () -> check(lock);
        }

        static Report check(EtcdLock lock) {
            try {
                long revision = lock.checkCluster(ETCD_TIMEOUT);
                return report(true, "revision", revision, "backend", "etcd", "cluster", lock.toString());
            } catch (QuorumlockException e) {
                return report(false, "error", e.getMessage(), "backend", "etcd", "cluster", lock.toString());
            }
        }
    }

    /** UP when the database answers the lock's check (table, sequence, privileges, clock) within {@link #DATABASE_TIMEOUT}. */
    static final class Jdbc {

        static Supplier<Report> find(ListableBeanFactory beans) {
            JdbcLock lock = beans.getBeanProvider(JdbcLock.class).getIfUnique();
            return lock == null ? null : () -> check(lock);
        }

        static Report check(JdbcLock lock) {
            try {
                JdbcLock.DatabaseCheck check = lock.check(DATABASE_TIMEOUT);
                return report(
                        true,
                        "dialect",
                        check.dialect().name().toLowerCase(Locale.ROOT),
                        "clockOffsetMillis",
                        check.clockOffset().toMillis(),
                        "backend",
                        "jdbc",
                        "database",
                        lock.toString());
            } catch (QuorumlockException e) {
                return report(false, "error", e.getMessage(), "backend", "jdbc", "database", lock.toString());
            }
        }
    }
}
