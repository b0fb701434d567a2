/**
 * Real servers for tests, with the faults a distributed lock must survive: Redis, ZooKeeper, etcd,
 * PostgreSQL and MariaDB, each on free loopback ports in its own temporary directory, stopped after
 * the test class and by a shutdown hook.
 *
 * <p>{@link io.quorumlock.testkit.RedisServer} runs one Redis node and can kill it, freeze it,
 * restart it with or without persistence and shift its wall clock; {@link
 * io.quorumlock.testkit.RedisServers} runs several independent nodes, and {@link
 * io.quorumlock.testkit.RedisServersExtension} ties them to a JUnit 5 test class. {@link
 * io.quorumlock.testkit.ZooKeeperServers} starts in-process ZooKeeper servers and ensembles (from
 * curator-test) and ends a client's session on the ensemble. {@link
 * io.quorumlock.testkit.EtcdCluster} runs one to seven etcd members with per-member faults, and
 * {@link io.quorumlock.testkit.PostgresServer} a PostgreSQL server, {@link
 * io.quorumlock.testkit.MariaDbServer} a MariaDB server; all three have JUnit 5 extensions.
 * {@link io.quorumlock.testkit.TestTime} scales every time bound for slow machines and waits for
 * conditions instead of sleeping; a server's start is also waited for longer on a busy machine, and
 * {@link io.quorumlock.testkit.ServerWait} lets a program show what is awaited.
 *
 * <p>Environment:
 *
 * <ul>
 *   <li>{@code QUORUMLOCK_REDIS_SERVER}: the {@code redis-server} binary to run. Without it, the
 *       one on the {@code PATH} is used, else (Linux x86-64 only) the one shipped in the {@code
 *       embedded-redis} artifact.
 *   <li>{@code QUORUMLOCK_ETCD_BIN}: the {@code etcd} binary (Debian package {@code etcd-server});
 *       else {@code etcd} on the {@code PATH}. Without one, etcd tests are skipped.
 *   <li>{@code QUORUMLOCK_PG_BIN}: PostgreSQL's bin directory (Debian package {@code postgresql});
 *       else the newest {@code /usr/lib/postgresql/N/bin}. Without one, PostgreSQL tests are
 *       skipped; with it set, a wrong setting fails instead.
 *   <li>{@code QUORUMLOCK_MARIADB_BIN}: the {@code mariadbd} binary or its directory (Debian package
 *       {@code mariadb-server}); else {@code mariadbd} on the {@code PATH}, in {@code /usr/sbin} or
 *       in {@code /usr/libexec}. Without one, MariaDB tests are skipped; with it set, a wrong
 *       setting fails instead.
 *   <li>{@code QUORUMLOCK_CACHE}: where the extracted binary and the clock-shift library are kept;
 *       {@code ~/.cache/quorumlock} by default.
 *   <li>System property {@code quorumlock.test.timeScale}: multiplies every time bound.
 * </ul>
 */
package io.quorumlock.testkit;
