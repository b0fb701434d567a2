package io.quorumlock.spring;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code quorumlock.*} properties: one backend, Redis, ZooKeeper, etcd or the application's
 * database, gives the application its {@link io.quorumlock.DistributedLock}. Every value is checked
 * when the context starts; a bad one fails the start with a message naming the property. A duration
 * needs its unit ({@code 30s}, {@code 200ms}): a bare number is refused.
 */
@ConfigurationProperties(prefix = "quorumlock")
public class QuorumlockProperties {

    /**
     * Which backend gives the lock when more than one is configured: redis, zookeeper, etcd or
     * jdbc. Not needed with one backend.
     */
    private Backend primary;

    private final Redis redis = new Redis();

    private final ZooKeeper zookeeper = new ZooKeeper();

    private final Etcd etcd = new Etcd();

    private final Jdbc jdbc = new Jdbc();

    private final Metrics metrics = new Metrics();

    private final Leader leader = new Leader();

    public Backend getPrimary() {
        return primary;
    }

    public void setPrimary(Backend primary) {
        this.primary = primary;
    }

    public Redis getRedis() {
        return redis;
    }

    public ZooKeeper getZookeeper() {
        return zookeeper;
    }

    public Etcd getEtcd() {
        return etcd;
    }

    public Jdbc getJdbc() {
        return jdbc;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    public Leader getLeader() {
        return leader;
    }

    @Override
    public String toString() {
        return "QuorumlockProperties[primary " + primary + ", redis " + redis + ", zookeeper " + zookeeper + ", etcd "
                + etcd + ", jdbc " + jdbc + ", metrics " + metrics + ", leader " + leader + "]";
    }

    /** The Redis lock: one node, or Redlock over several independent nodes. */
    /**
     * A single-node lock on a Redis Cluster, each resource on the master of its hash slot, instead
     * of {@code quorumlock.redis.nodes}; the password is {@code quorumlock.redis.password}, for
     * every node.
     */
    public static class Cluster {

        /** Nodes of the cluster to ask for its layout, each host:port (port 6379 if left out); any will do. */
        private List<String> nodes = new ArrayList<>();

        /** Whether the cluster's nodes speak TLS (rediss-cluster://). */
        private boolean tls;

        public List<String> getNodes() {
            return nodes;
        }

        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }

        public boolean isTls() {
            return tls;
        }

        public void setTls(boolean tls) {
            this.tls = tls;
        }

        /** The address the lock takes, {@code redis-cluster://host:port,...}. */
        String uri() {
            return (tls ? "rediss-cluster://" : "redis-cluster://") + String.join(",", nodes);
        }
    }

    /**
     * A single-node lock on the master that Redis Sentinel manages, instead of {@code
     * quorumlock.redis.nodes}; the password is {@code quorumlock.redis.password}, for the master
     * and the sentinels alike.
     */
    public static class Sentinel {

        /** The master's name in the sentinels' configuration ({@code sentinel monitor NAME ...}). */
        private String master;

        /** The sentinels, each host:port (port 26379 if left out). */
        private List<String> nodes = new ArrayList<>();

        /** Whether the sentinels and the master speak TLS (rediss-sentinel://). */
        private boolean tls;

        public String getMaster() {
            return master;
        }

        public void setMaster(String master) {
            this.master = master;
        }

        public List<String> getNodes() {
            return nodes;
        }

        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }

        public boolean isTls() {
            return tls;
        }

        public void setTls(boolean tls) {
            this.tls = tls;
        }

        /** The address the lock takes, {@code redis-sentinel://host:port,...#master}. */
        String uri() {
            return (tls ? "rediss-sentinel://" : "redis-sentinel://") + String.join(",", nodes) + "#" + master;
        }
    }

    public static class Redis {

        /**
         * The Redis nodes, each redis://[user:password@]host:port[/db], or rediss://... for TLS.
         * One node makes a single-node lock; 3 or 5 independent nodes make Redlock.
         */
        private List<String> nodes = new ArrayList<>();

        /**
         * The password (Redis AUTH) for every node whose URI carries none, so that it can come
         * from a secret store or the environment instead of the URIs.
         */
        private String password;

        /**
         * How long one node may take to answer one request before it counts as a no. TTLs must be
         * longer than 3 times this.
         */
        private Duration nodeTimeout = Duration.ofMillis(50);

        /**
         * How long a round waits for a node whose connection is being opened (TCP, TLS handshake,
         * AUTH); at least the node timeout, which is the default. Over TLS the first handshake of
         * a JVM can take longer than 50 ms: about 1s lets the first attempts count that node.
         */
        private Duration connectTimeout;

        /**
         * The most connections the lock keeps to each node. Callers beyond that share them, their
         * requests pipelined, and never wait for a connection.
         */
        private int maxConnectionsPerNode = 8;

        /**
         * Redlock's restart guard: a node that restarted less than the longest TTL ago does not
         * vote until it has been up that long, unless it fsyncs every write. On by default with
         * several nodes, off with one.
         */
        private Boolean restartGuard;

        /**
         * How many replicas of the single node must acknowledge a grant or an extension (WAIT)
         * before it counts; 0 turns it off. Default: the replicas up, for a master behind Sentinel or
         * in a cluster, or those a single redis:// master lists in ROLE.
         */
        private Integer waitForReplicas;

        /** How long the replicas are waited for; shorter than the node timeout. Default: half of it. */
        private Duration replicaTimeout;

        private final Tls tls = new Tls();

        private final Sentinel sentinel = new Sentinel();

        private final Cluster cluster = new Cluster();

        public Sentinel getSentinel() {
            return sentinel;
        }

        public Cluster getCluster() {
            return cluster;
        }

        public List<String> getNodes() {
            return nodes;
        }

        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }

        public String getPassword() {
            return password;
        }

        public void setPassword(String password) {
            this.password = password;
        }

        public Duration getNodeTimeout() {
            return nodeTimeout;
        }

        public void setNodeTimeout(Duration nodeTimeout) {
            this.nodeTimeout = nodeTimeout;
        }

        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }

        public int getMaxConnectionsPerNode() {
            return maxConnectionsPerNode;
        }

        public void setMaxConnectionsPerNode(int maxConnectionsPerNode) {
            this.maxConnectionsPerNode = maxConnectionsPerNode;
        }

        public Boolean getRestartGuard() {
            return restartGuard;
        }

        public void setRestartGuard(Boolean restartGuard) {
            this.restartGuard = restartGuard;
        }

        public Integer getWaitForReplicas() {
            return waitForReplicas;
        }

        public void setWaitForReplicas(Integer waitForReplicas) {
            this.waitForReplicas = waitForReplicas;
        }

        public Duration getReplicaTimeout() {
            return replicaTimeout;
        }

        public void setReplicaTimeout(Duration replicaTimeout) {
            this.replicaTimeout = replicaTimeout;
        }

        public Tls getTls() {
            return tls;
        }

        /** The nodes without credentials, and whether a password is set, never the password. */
        @Override
        public String toString() {
            return "Redis[nodes "
                    + nodes.stream()
                            .map(io.quorumlock.internal.Secrets::redactUri)
                            .toList() + ", password "
                    + (password == null || password.isEmpty() ? "none" : io.quorumlock.internal.Secrets.MASK)
                    + ", nodeTimeout "
                    + nodeTimeout + ", connectTimeout " + connectTimeout + ", maxConnectionsPerNode "
                    + maxConnectionsPerNode
                    + ", restartGuard " + restartGuard + ", " + tls + "]";
        }
    }

    /** TLS for rediss:// nodes, from PEM files. */
    public static class Tls {

        /**
         * A PEM file of the CAs that the rediss:// nodes' certificates must be issued by, in place
         * of the JDK trust store.
         */
        private Path ca;

        /**
         * The client certificate (PEM) for nodes that require one (tls-auth-clients yes); needs
         * quorumlock.redis.tls.key.
         */
        private Path cert;

        /**
         * The client certificate's private key, an unencrypted PKCS#8 PEM file; needs
         * quorumlock.redis.tls.cert. Keep it readable by this user only.
         */
        private Path key;

        public Path getCa() {
            return ca;
        }

        public void setCa(Path ca) {
            this.ca = ca;
        }

        public Path getCert() {
            return cert;
        }

        public void setCert(Path cert) {
            this.cert = cert;
        }

        public Path getKey() {
            return key;
        }

        public void setKey(Path key) {
            this.key = key;
        }

        @Override
        public String toString() {
            return "Tls[ca " + ca + ", cert " + cert + ", key " + key + "]";
        }
    }

    /** The fenced lock on a ZooKeeper ensemble. */
    public static class ZooKeeper {

        /**
         * The ensemble, host:port,host:port,... with an optional chroot path; list every server.
         */
        private String connectString;

        /**
         * The ZooKeeper session timeout: how long the ensemble keeps the lock of a holder it no
         * longer hears from, and so every lease's validity. The server bounds it to between 2 and
         * 20 times its tickTime. The default is 10 s.
         */
        private Duration sessionTimeout;

        public String getConnectString() {
            return connectString;
        }

        public void setConnectString(String connectString) {
            this.connectString = connectString;
        }

        public Duration getSessionTimeout() {
            return sessionTimeout;
        }

        public void setSessionTimeout(Duration sessionTimeout) {
            this.sessionTimeout = sessionTimeout;
        }

        @Override
        public String toString() {
            return "ZooKeeper[connectString " + connectString + ", sessionTimeout " + sessionTimeout + "]";
        }
    }

    /** The fenced lock on an etcd cluster. */
    public static class Etcd {

        /** The client URLs of the etcd members, http://host:2379; list every member. */
        private List<String> endpoints = new ArrayList<>();

        public List<String> getEndpoints() {
            return endpoints;
        }

        public void setEndpoints(List<String> endpoints) {
            this.endpoints = endpoints;
        }

        @Override
        public String toString() {
            return "Etcd[endpoints "
                    + endpoints.stream()
                            .map(io.quorumlock.internal.Secrets::redactUri)
                            .toList() + "]";
        }
    }

    /** The database lock, on the application's DataSource (with quorumlock-jdbc). */
    public static class Jdbc {

        /**
         * Whether the lock lives in the application's database, through its one DataSource bean. Any
         * other quorumlock.jdbc property turns it on as well; false keeps it off.
         */
        private boolean enabled;

        /** The lock table; its token sequence is the table's name and _token. The default is quorumlock_locks. */
        private String table = "quorumlock_locks";

        /**
         * Whether the table and its sequence are created at start if they do not exist. The default
         * is false: create them in a migration (JdbcLock.ddl) where the application may not run DDL.
         */
        private boolean createTable;

        /** How long one statement may take. The default is 5 s. */
        private Duration requestTimeout = Duration.ofSeconds(5);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = table;
        }

        public boolean isCreateTable() {
            return createTable;
        }

        public void setCreateTable(boolean createTable) {
            this.createTable = createTable;
        }

        public Duration getRequestTimeout() {
            return requestTimeout;
        }

        public void setRequestTimeout(Duration requestTimeout) {
            this.requestTimeout = requestTimeout;
        }

        @Override
        public String toString() {
            return "Jdbc[enabled " + enabled + ", table " + table + ", createTable " + createTable + ", requestTimeout "
                    + requestTimeout + "]";
        }
    }

    /** The lock's meters (with quorumlock-micrometer and a MeterRegistry). */
    public static class Metrics {

        /**
         * Whether the timers and the lost counter carry the resource's name as a resource tag:
         * only for a small, fixed set of resource names. The default is false.
         */
        private boolean tagResources;

        /**
         * With tag-resources, how many resources of a backend get a tag of their own; every later
         * one is tagged other. The default is 100.
         */
        private int maxTaggedResources = 100;

        public boolean isTagResources() {
            return tagResources;
        }

        public void setTagResources(boolean tagResources) {
            this.tagResources = tagResources;
        }

        public int getMaxTaggedResources() {
            return maxTaggedResources;
        }

        public void setMaxTaggedResources(int maxTaggedResources) {
            this.maxTaggedResources = maxTaggedResources;
        }

        @Override
        public String toString() {
            return "Metrics[tagResources " + tagResources + ", maxTaggedResources " + maxTaggedResources + "]";
        }
    }

    /** Leader election over the lock: one instance of the application holds a role at a time. */
    public static class Leader {

        /**
         * The election this instance joins when the context starts, such as billing-scheduler: the
         * resource its leaders lock. Unset, there is no election.
         */
        private String election;

        /**
         * The TTL of the leader's lease: a leader that dies leaves the role free within it. The
         * lock keeps the lease alive while the instance runs. The default is 30 s.
         */
        private Duration ttl = Duration.ofSeconds(30);

        public String getElection() {
            return election;
        }

        public void setElection(String election) {
            this.election = election;
        }

        public Duration getTtl() {
            return ttl;
        }

        public void setTtl(Duration ttl) {
            this.ttl = ttl;
        }

        @Override
        public String toString() {
            return "Leader[election " + election + ", ttl " + ttl + "]";
        }
    }
}
