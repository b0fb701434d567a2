package io.quorumlock.spring;

/** The backends a {@code quorumlock.*} configuration can choose from. */
public enum Backend {
    /** Redis: one node or Redlock ({@code quorumlock.redis.nodes}). */
    REDIS("quorumlock.redis.nodes", "io.quorumlock.redis.Redlock", "io.quorumlock:quorumlock-core"),
    /** ZooKeeper ({@code quorumlock.zookeeper.connect-string}). */
    ZOOKEEPER(
            "quorumlock.zookeeper.connect-string",
            "io.quorumlock.zookeeper.ZooKeeperLock",
            "io.quorumlock:quorumlock-zookeeper"),
    /** etcd ({@code quorumlock.etcd.endpoints}). */
    ETCD("quorumlock.etcd.endpoints", "io.quorumlock.etcd.EtcdLock", "io.quorumlock:quorumlock-etcd"),
    /**
     * The application's own database, through its {@code DataSource} ({@code quorumlock.jdbc.enabled}, or
     * any other {@code quorumlock.jdbc.*} property).
     */
    JDBC("quorumlock.jdbc.enabled", "io.quorumlock.jdbc.JdbcLock", "io.quorumlock:quorumlock-jdbc");

    final String property;
    final String lockClass;
    final String artifact;

    Backend(String property, String lockClass, String artifact) {
        this.property = property;
        this.lockClass = lockClass;
        this.artifact = artifact;
    }

    /** The name of this backend in {@code quorumlock.primary}. */
    String key() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
