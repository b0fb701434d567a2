package io.quorumlock.bench;

import java.time.Duration;
import java.util.List;

/**
 * How long and how often to measure, per mode: {@code --smoke} (seconds, in-process, for the
 * smoke test), {@code --quick} (about two minutes) and the full run. The database cases run one
 * thread's cycles for {@code databaseTime} per library after the contention's warm-up, and {@code
 * handOffs} counted hand-offs per library; the ZooKeeper and etcd cases as long, with {@code
 * consensusHandOffs} hand-offs per library (one in the smoke run, which keeps each row well under a
 * second), then {@code queuedThreads} threads of one process queued on one resource of ZooKeeper
 * and of etcd; the Redis hand-off case {@code redisHandOffs} hand-offs per library (none in the
 * smoke run, which leaves the case out: RedisLocksIT runs it, which keeps the smoke run short).
 */
record Plan(
        String mode,
        int forks,
        int warmupIterations,
        Duration warmupTime,
        int measurementIterations,
        Duration measurementTime,
        int slowMeasurementIterations,
        Duration contentionWarmup,
        Duration contentionTime,
        int resourceCycles,
        List<JmhCase> jmhCases,
        List<String> contentionLibraries,
        Duration databaseTime,
        int handOffs,
        int consensusHandOffs,
        int queuedThreads,
        int redisHandOffs) {

    static final String SINGLE = "single-node";
    static final String FIVE = "five-nodes";
    static final String FROZEN = "five-nodes-one-frozen";
    /**
     * A master with a replica and three sentinels of their own, started for each row: quorumlock and
     * Redisson through the sentinels with their defaults (both wait for the replica: WAIT), raw Jedis
     * on the master.
     */
    static final String SENTINEL = "single-node-sentinel";
    /**
     * A Redis Cluster of three masters with a replica each, started for each row: quorumlock and
     * Redisson on the cluster with their defaults (both wait for the replica: WAIT), raw Jedis on
     * the master of its key's slot.
     */
    static final String CLUSTER = "single-node-cluster";
    /** Five nodes of their own that speak TLS only, started for this case. */
    static final String TLS = "five-nodes-tls";

    static final String CONTENTION = "contention";
    /** 64 threads sharing one client, each on a resource of its own. */
    static final String MANY = "many-callers";

    /** 64 threads sharing one client on 8 resources: 8 callers per resource. */
    static final String MANY_SHARED = "many-callers-8-resources";
    /** The servers' own capacity: pipelined SETs per second over the 5 nodes. */
    static final String CAPACITY = "server-capacity";
    /** Every node behind a proxy adding 1 ms each way. */
    static final String SLOW = "slow-network";
    /** As {@link #SLOW}, with one node 20 ms slower each way. */
    static final String SLOW_NODE = "slow-network-one-slow-node";
    /** One thread's acquire + release of a free resource, on one PostgreSQL through one pool. */
    static final String DB_CYCLE = "postgresql-cycle";
    /** A waiter already waiting when the holder releases: from the release call to the waiter's grant. */
    static final String DB_HAND_OFF = "postgresql-hand-off";
    /** One thread's acquire + release of a free resource, on one 3-server ZooKeeper ensemble. */
    static final String ZK_CYCLE = "zookeeper-cycle";
    /** As {@link #DB_HAND_OFF}, on the ZooKeeper ensemble. */
    static final String ZK_HAND_OFF = "zookeeper-hand-off";
    /** One thread's acquire + release of a free resource, on one 3-member etcd cluster. */
    static final String ETCD_CYCLE = "etcd-cycle";
    /** As {@link #DB_HAND_OFF}, on the etcd cluster. */
    static final String ETCD_HAND_OFF = "etcd-hand-off";
    /** Many threads of one process, one lock instance, queued on one resource: each hand-off in turn. */
    static final String ZK_QUEUE = "zookeeper-hand-off-queue";
    /** As {@link #ZK_QUEUE}, on the etcd cluster. */
    static final String ETCD_QUEUE = "etcd-hand-off-queue";
    /** A semaphore's cycle on one Redis node. */
    static final String SEMAPHORE = "semaphore-cycle";
    /** A semaphore's cycle on ZooKeeper. */
    static final String ZK_SEMAPHORE = "zookeeper-semaphore-cycle";
    /** As {@link #DB_HAND_OFF}, on one of the Redis nodes (beside a PING's round trip to it). */
    static final String REDIS_HAND_OFF = "redis-hand-off";
    /** As {@link #DB_HAND_OFF}, on the 5 Redis nodes (beside a PING to the 5 at once). */
    static final String REDIS5_HAND_OFF = "redis-five-nodes-hand-off";

    static final String RAW = "raw-jedis";
    /** A PING's round trip, for the slow network. */
    static final String PING = "round-trip-ping";
    /**
     * A PING's round trip after the thread that sends it was idle as long as a hand-off's holder
     * holds ({@link HandOff#HOLD_MIN} and {@link HandOff#HOLD_SPREAD}), for the hand-offs.
     */
    static final String IDLE_PING = "round-trip-ping-after-idle";
    /** Pipelined SET requests, for the servers' capacity. */
    static final String PIPELINED = "pipelined-set";
    /** The N-node floor: {@link RawFanout}. */
    static final String FANOUT = "raw-fanout";

    static final String QUORUMLOCK = "quorumlock";
    static final String REDISSON = "redisson";
    static final String SEQUENTIAL = "sequential-redlock";
    /** quorumlock in the contention case with its own waiting acquire, woken by releases, instead of one attempt. */
    static final String QUORUMLOCK_WAITING = "quorumlock-waiting";

    static final String REDLOCK = "redisson-redlock";
    /** ShedLock's {@code JdbcTemplateLockProvider}, for the database cases (quorumlock's is {@code JdbcLock}). */
    static final String SHEDLOCK = "shedlock-jdbc-template";
    /** Spring Integration's {@code JdbcLockRegistry}, for the database cases. */
    static final String SPRING_INTEGRATION = "spring-integration-jdbc";
    /** Spring Integration's {@code RedisLockRegistry}, for the Redis hand-off. */
    static final String SPRING_INTEGRATION_REDIS = "spring-integration-redis";
    /** Curator's {@code InterProcessMutex}, for the ZooKeeper cases (quorumlock's is {@code ZooKeeperLock}). */
    static final String CURATOR = "curator-mutex";
    /** jetcd's {@code Lock} client, for the etcd cases (quorumlock's is {@code EtcdLock}). */
    static final String JETCD = "jetcd-lock";

    static final String REDISSON_SEMAPHORE = "redisson-rsemaphore";
    static final String CURATOR_SEMAPHORE = "curator-semaphore";

    /** The queued threads of the full run: the thousand of the product's expectation. */
    static final int QUEUED_THREADS = 1_000;

    /**
     * The queued threads of {@code --quick}: a thousand take 15 to 25 s per backend on a loaded
     * 2-core machine (the threads queue, then hand on one by one); a quarter of them keeps the
     * queue deep at a quarter of the time.
     */
    static final int QUICK_QUEUED_THREADS = 250;

    /** This plan with {@code threads} queued threads instead of its own. */
    Plan withQueuedThreads(int threads) {
        return new Plan(
                mode,
                forks,
                warmupIterations,
                warmupTime,
                measurementIterations,
                measurementTime,
                slowMeasurementIterations,
                contentionWarmup,
                contentionTime,
                resourceCycles,
                jmhCases,
                contentionLibraries,
                databaseTime,
                handOffs,
                consensusHandOffs,
                threads,
                redisHandOffs);
    }

    /**
     * Whether {@code caseId} is a hand-off: latencies from the release call to the grant, no rate
     * (but for the PING rows beside the Redis hand-offs, whose library is {@link #PING}).
     */
    static boolean handOff(String caseId) {
        return List.of(DB_HAND_OFF, ZK_HAND_OFF, ETCD_HAND_OFF, ZK_QUEUE, ETCD_QUEUE, REDIS_HAND_OFF, REDIS5_HAND_OFF)
                .contains(caseId);
    }

    /** Whether {@code caseId} is one of the queues of many threads of one process. */
    static boolean queue(String caseId) {
        return caseId.equals(ZK_QUEUE) || caseId.equals(ETCD_QUEUE);
    }

    /**
     * One JMH case.
     *
     * @param caseId the case
     * @param library the library
     * @param nodes how many nodes
     * @param frozen whether one node is frozen once the client is set up
     * @param benchmark the JMH benchmark class
     * @param slow a case whose single cycle takes seconds (Redisson with a frozen node): measured
     *     with a few single cycles, no warm-up
     * @param skipped why the case is skipped in this mode, or null
     */
    record JmhCase(
            String caseId,
            String library,
            int nodes,
            boolean frozen,
            Class<?> benchmark,
            boolean slow,
            String skipped) {

        String label() {
            return caseId + " / " + library;
        }
    }

    private static List<JmhCase> allCases() {
        return List.of(
                new JmhCase(SINGLE, RAW, 1, false, RawJedisBenchmark.class, false, null),
                new JmhCase(SINGLE, QUORUMLOCK, 1, false, QuorumlockBenchmark.class, false, null),
                new JmhCase(SINGLE, REDISSON, 1, false, RedissonBenchmark.class, false, null),
                new JmhCase(FIVE, FANOUT, 5, false, RawFanoutBenchmark.class, false, null),
                new JmhCase(FIVE, SEQUENTIAL, 5, false, SequentialRedlockBenchmark.class, false, null),
                new JmhCase(FIVE, QUORUMLOCK, 5, false, QuorumlockBenchmark.class, false, null),
                new JmhCase(FIVE, REDLOCK, 5, false, RedissonRedLockBenchmark.class, false, null),
                new JmhCase(SENTINEL, RAW, 1, false, RawJedisBenchmark.class, false, null),
                new JmhCase(SENTINEL, QUORUMLOCK, 1, false, QuorumlockBenchmark.class, false, null),
                new JmhCase(SENTINEL, REDISSON, 1, false, RedissonBenchmark.class, false, null),
                new JmhCase(CLUSTER, RAW, 1, false, RawJedisBenchmark.class, false, null),
                new JmhCase(CLUSTER, QUORUMLOCK, 1, false, QuorumlockBenchmark.class, false, null),
                new JmhCase(CLUSTER, REDISSON, 1, false, RedissonBenchmark.class, false, null),
                new JmhCase(TLS, QUORUMLOCK, 5, false, QuorumlockBenchmark.class, false, null),
                new JmhCase(FROZEN, QUORUMLOCK, 5, true, QuorumlockBenchmark.class, false, null),
                new JmhCase(FROZEN, SEQUENTIAL, 5, true, SequentialRedlockBenchmark.class, false, null),
                new JmhCase(FROZEN, REDLOCK, 5, true, RedissonRedLockBenchmark.class, true, null));
    }

    static Plan full() {
        return new Plan(
                "full",
                2,
                3,
                Duration.ofSeconds(2),
                5,
                Duration.ofSeconds(2),
                3,
                Duration.ofSeconds(2),
                Duration.ofSeconds(10),
                5_000,
                allCases(),
                List.of(QUORUMLOCK, QUORUMLOCK_WAITING, SEQUENTIAL),
                Duration.ofSeconds(10),
                100,
                100,
                QUEUED_THREADS,
                100);
    }

    static Plan quick() {
        return new Plan(
                "quick",
                1,
                2,
                Duration.ofSeconds(1),
                3,
                Duration.ofSeconds(1),
                1,
                Duration.ofSeconds(1),
                Duration.ofSeconds(4),
                2_000,
                allCases(),
                List.of(QUORUMLOCK, QUORUMLOCK_WAITING, SEQUENTIAL),
                Duration.ofSeconds(2),
                16,
                16,
                QUICK_QUEUED_THREADS,
                16);
    }

    /** A few seconds, in-process (no JMH fork): checks that everything runs, measures nothing worth quoting. */
    static Plan smoke() {
        return new Plan(
                "smoke",
                0,
                0,
                Duration.ofMillis(100),
                1,
                Duration.ofMillis(300),
                1,
                Duration.ofMillis(200),
                Duration.ofMillis(500),
                200,
                List.of(
                        new JmhCase(SINGLE, RAW, 1, false, RawJedisBenchmark.class, false, null),
                        new JmhCase(SINGLE, QUORUMLOCK, 1, false, QuorumlockBenchmark.class, false, null)),
                List.of(QUORUMLOCK, QUORUMLOCK_WAITING),
                Duration.ofMillis(300),
                3,
                1,
                8,
                0);
    }
}
