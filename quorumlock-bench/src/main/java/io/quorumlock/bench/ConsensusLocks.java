package io.quorumlock.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import io.quorumlock.DistributedLock;
import io.quorumlock.Lease;
import io.quorumlock.etcd.EtcdLock;
import io.quorumlock.testkit.EtcdCluster;
import io.quorumlock.testkit.ZooKeeperServers;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

/**
 * quorumlock's consensus locks beside the clients they are built on: {@code ZooKeeperLock} beside
 * Curator's {@code InterProcessMutex} on one ensemble of {@value #SERVERS} ZooKeeper servers
 * (curator-test's {@code TestingCluster} in this JVM, through the test kit's {@link
 * ZooKeeperServers}), and {@code EtcdLock} beside jetcd's {@code Lock} client on one cluster of
 * {@value #SERVERS} etcd members (the test kit's {@link EtcdCluster}). Each step starts its servers,
 * warms them up with each library in turn (not counted), then measures per library one thread's
 * cycles (acquire, then release, a free resource), the libraries taking 16 short turns each (A B,
 * then B A, ...), then the hand-offs from a holder to a waiter already waiting ({@link
 * HandOff}), one of each library in turn, then quorumlock's lock with many threads of one process
 * queued on one resource ({@link QueuedHandOffs}), and stops its servers. quorumlock's
 * locks are built with their builders' defaults; each client of the others is set up as their
 * documentation shows. When etcd cannot run here, its rows are skipped with the reason; a start
 * that fails marks the rows not measured as failed, with why.
 */
final class ConsensusLocks {

    /** The servers of the ensemble and of the etcd cluster. */
    static final int SERVERS = 3;
    /** Turns of warm-up per library, each the plan's warm-up time, taken in turns with the other library. */
    private static final int WARMUP_TURNS = 3;
    /**
     * Counted turns per library, in alternating order, sharing the plan's cycle time: short turns,
     * so that the servers' rare slow commits (an fsync of tens of ms, ten cycles' time) fall on
     * both libraries alike rather than on whichever ran in that second.
     */
    private static final int COUNTED_TURNS = 16;

    /** How long a single request of the other clients may take before the row fails: never, on a healthy cluster. */
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    /** How long the ensemble may take to elect a leader. */
    private static final Duration LEADER_TIMEOUT = Duration.ofSeconds(30);

    /** Curator's mutexes live under this path, one child per resource. */
    static final String CURATOR_PATH = "/bench/curator";

    /** The resource of the cycles. */
    private static final String RESOURCE = "bench:cycle";

    /** jetcd's lock names start with this. */
    static final String JETCD_PREFIX = "/bench/jetcd/";

    /** The TTL of jetcd's leases, in whole seconds: {@link Trial#TTL}, as EtcdLock rounds it. */
    private static final long TTL_SECONDS = (Trial.TTL.toMillis() + 999) / 1000;

    /** One library of the comparison: its name, how a client of its own is made, what a row says. */
    private record Library(String name, Supplier<HandOff.Client> client, String cycle, String waiting) {}

    /** The resource the many threads of one process queue on. */
    static final String QUEUE_RESOURCE = "bench-queue";

    /** The base path of the queue's {@code ZooKeeperLock}: the queue is the children of its resource's node. */
    static final String QUEUE_PATH = "/bench/queue";

    /** The key prefix of the queue's {@code EtcdLock}: the queue is the keys under its resource's name. */
    static final String QUEUE_PREFIX = "/bench/queue/";

    /** One step: a backend, its cases and libraries (the queue of many threads is quorumlock's only). */
    private record Backend(
            String name, String cycleCase, String handOffCase, String queueCase, List<String> libraries) {
        String label() {
            return cycleCase + ", " + handOffCase + " / " + String.join(", ", libraries) + "; " + queueCase + " / "
                    + Plan.QUORUMLOCK;
        }

        List<String> cases() {
            return List.of(cycleCase, handOffCase, queueCase);
        }

        List<String> libraries(String caseId) {
            return caseId.equals(queueCase) ? List.of(Plan.QUORUMLOCK) : libraries;
        }
    }

    private static final Backend ZOOKEEPER = new Backend(
            "ZooKeeper", Plan.ZK_CYCLE, Plan.ZK_HAND_OFF, Plan.ZK_QUEUE, List.of(Plan.QUORUMLOCK, Plan.CURATOR));
    private static final Backend ETCD = new Backend(
            "etcd", Plan.ETCD_CYCLE, Plan.ETCD_HAND_OFF, Plan.ETCD_QUEUE, List.of(Plan.QUORUMLOCK, Plan.JETCD));

    private ConsensusLocks() {}

    /** The ZooKeeper step's label. */
    static String zooKeeperLabel() {
        return ZOOKEEPER.label();
    }

    /** The etcd step's label. */
    static String etcdLabel() {
        return ETCD.label();
    }

    /** Runs the ZooKeeper cases on an ensemble of their own, adding each result to {@code results} as measured. */
    static void runZooKeeper(Plan plan, Progress progress, Consumer<CaseResult> results) {
        List<CaseResult> measured = new ArrayList<>();
        Consumer<CaseResult> out = r -> {
            measured.add(r);
            results.accept(r);
        };
        Path dir = null;
        TestingCluster cluster = null;
        try {
            progress.status("starting " + SERVERS + " ZooKeeper servers");
            dir = Files.createTempDirectory("quorumlock-bench-zk-");
            cluster = ZooKeeperServers.cluster(dir, SERVERS);
            InstanceSpec leader = ZooKeeperServers.awaitLeader(cluster, LEADER_TIMEOUT);
            String connect = cluster.getConnectString();
            // The clients of the cycles and hand-offs, both libraries', connect to one follower: a
            // session on the leader writes faster (about a fifth, on this ensemble), and where each
            // library's session landed decided the ratio of a run.
            String follower = follower(cluster, leader).getConnectString();
            String version = "ZooKeeper " + zooKeeperVersion() + " (curator-test, in this JVM; the clients on one"
                    + " follower)";
            List<Library> libraries = List.of(
                    new Library(
                            Plan.QUORUMLOCK,
                            () -> zooKeeperLock(follower),
                            "ZooKeeperLock, defaults: tryAcquire + release",
                            "acquire(resource, ttl, " + HandOff.MAX_WAIT.toSeconds()
                                    + " s): woken by a watch on the node ahead"),
                    new Library(
                            Plan.CURATOR,
                            () -> curator(follower),
                            "InterProcessMutex (one per resource, reused): acquire() + release()",
                            "acquire(" + HandOff.MAX_WAIT.toSeconds()
                                    + " s, SECONDS): woken by a watch on the node ahead"));
            measure(ZOOKEEPER, libraries, version, plan, progress, out);
            try (CuratorFramework counter = connectedCurator(connect)) {
                String queue = QUEUE_PATH + "/" + QUEUE_RESOURCE;
                out.accept(queue(
                        ZOOKEEPER,
                        ZooKeeperLock.builder()
                                .connectString(connect)
                                .basePath(QUEUE_PATH)
                                .build(),
                        () -> children(counter, queue),
                        "each thread woken by a watch on the node ahead",
                        version,
                        plan,
                        progress));
            }
        } catch (Exception e) {
            failUnmeasured(ZOOKEEPER, measured, "the ZooKeeper ensemble: " + firstLine(e), plan, results);
        } finally {
            if (cluster != null) {
                try {
                    cluster.close();
                } catch (IOException | RuntimeException e) {
                    // the servers run in this JVM: they go with it at the latest
                }
            }
            if (dir != null) {
                deleteTree(dir);
            }
        }
    }

    /** Runs the etcd cases on a cluster of their own, adding each result to {@code results} as measured. */
    static void runEtcd(Plan plan, Progress progress, Consumer<CaseResult> results) {
        if (!EtcdCluster.available()) {
            String why = EtcdCluster.unavailableReason().orElse("etcd is not available");
            for (String caseId : ETCD.cases()) {
                for (String library : ETCD.libraries(caseId)) {
                    results.accept(CaseResult.skipped(caseId, library, SERVERS, threads(ETCD, caseId, plan), why));
                }
            }
            return;
        }
        List<CaseResult> measured = new ArrayList<>();
        Consumer<CaseResult> out = r -> {
            measured.add(r);
            results.accept(r);
        };
        progress.status("starting " + SERVERS + " etcd members");
        try (EtcdCluster cluster = EtcdCluster.start(SERVERS)) {
            List<String> endpoints = cluster.endpoints();
            String version = "etcd " + EtcdCluster.version();
            List<Library> libraries = List.of(
                    new Library(
                            Plan.QUORUMLOCK,
                            () -> etcdLock(endpoints),
                            "EtcdLock, defaults: tryAcquire + release",
                            "acquire(resource, ttl, " + HandOff.MAX_WAIT.toSeconds() + " s): queued in etcd's lock"),
                    new Library(
                            Plan.JETCD,
                            () -> jetcd(endpoints),
                            "Lease.grant(" + TTL_SECONDS + " s) + Lease.keepAlive(lease, observer) + Lock.lock(name,"
                                    + " lease) + Lock.unlock(key) + close the keep-alive + Lease.revoke(lease)",
                            "Lock.lock(name, lease).get(" + HandOff.MAX_WAIT.toSeconds()
                                    + " s) on a lease granted and kept alive: queued in etcd's lock"));
            measure(ETCD, libraries, version, plan, progress, out);
            try (Client counter =
                    Client.builder().endpoints(endpoints.toArray(String[]::new)).build()) {
                ByteSequence queue = ByteSequence.from(QUEUE_PREFIX + QUEUE_RESOURCE + "/", StandardCharsets.UTF_8);
                out.accept(queue(
                        ETCD,
                        EtcdLock.builder()
                                .endpoints(endpoints)
                                .keyPrefix(QUEUE_PREFIX)
                                .build(),
                        () -> keys(counter, queue),
                        "queued in etcd's lock",
                        version,
                        plan,
                        progress));
            }
        } catch (RuntimeException e) {
            failUnmeasured(ETCD, measured, "the etcd cluster: " + firstLine(e), plan, results);
        }
    }

    private static void measure(
            Backend backend,
            List<Library> libraries,
            String version,
            Plan plan,
            Progress progress,
            Consumer<CaseResult> out) {
        List<CountedCycles> cycles = new ArrayList<>();
        try {
            for (Library library : libraries) {
                progress.status(backend.cycleCase() + " / " + library.name() + ": connecting");
                Map<String, Object> extra = new LinkedHashMap<>();
                extra.put("calls", library.cycle());
                extra.put("servers", version);
                extra.put("resources", 1);
                cycles.add(new CountedCycles(
                        backend.cycleCase(),
                        library.name(),
                        SERVERS,
                        () -> cyclesOf(library.client().get()),
                        extra));
            }
            // The servers, and the client code the libraries share (ZooKeeperLock is built on Curator,
            // EtcdLock on jetcd), warm up with every library, in turns, before any cycle counts: the
            // JIT compiles a library's own code over its first few thousand cycles. Then sixteen
            // counted turns each: the servers' rare slow commits fall on both.
            CountedCycles.inTurns(
                    backend.cycleCase(),
                    cycles,
                    WARMUP_TURNS,
                    plan.contentionWarmup(),
                    plan.databaseTime(),
                    COUNTED_TURNS,
                    progress);
        } finally {
            cycles.forEach(CountedCycles::close);
        }
        cycles.forEach(c -> out.accept(c.result()));
        List<HandOff.Series> handOffs = new ArrayList<>();
        for (Library library : libraries) {
            handOffs.add(new HandOff.Series(
                    backend.handOffCase(),
                    library.name(),
                    SERVERS,
                    library.client(),
                    library.waiting(),
                    plan.consensusHandOffs()));
        }
        for (CaseResult handOff : HandOff.interleaved(handOffs, progress)) {
            handOff.extra().put("servers", version);
            out.accept(handOff);
        }
    }

    /** A library's client, as the cycle rows count it: one acquire and release of {@value #RESOURCE}. */
    private static CountedCycles.Client cyclesOf(HandOff.Client client) {
        return new CountedCycles.Client() {
            @Override
            public boolean cycle() {
                return client.cycle(RESOURCE);
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    private static void failUnmeasured(
            Backend backend, List<CaseResult> measured, String why, Plan plan, Consumer<CaseResult> results) {
        for (String caseId : backend.cases()) {
            for (String library : backend.libraries(caseId)) {
                if (measured.stream().noneMatch(r -> r.is(caseId, library))) {
                    results.accept(CaseResult.failed(caseId, library, SERVERS, threads(backend, caseId, plan), why));
                }
            }
        }
    }

    private static int threads(Backend backend, String caseId, Plan plan) {
        return caseId.equals(backend.cycleCase()) ? 1 : caseId.equals(backend.handOffCase()) ? 2 : plan.queuedThreads();
    }

    /** The many threads of one process on {@code lock}, which it closes after; {@code woken} says how they wait. */
    private static CaseResult queue(
            Backend backend,
            DistributedLock<? extends Lease> lock,
            IntSupplier queued,
            String woken,
            String version,
            Plan plan,
            Progress progress) {
        try (lock) {
            CaseResult result = QueuedHandOffs.run(
                    backend.queueCase(),
                    SERVERS,
                    lock,
                    QUEUE_RESOURCE,
                    plan.queuedThreads(),
                    queued,
                    "acquire(resource, ttl, " + QueuedHandOffs.MAX_WAIT.toMinutes() + " min), " + woken,
                    progress);
            result.extra().put("servers", version);
            return result;
        }
    }

    /** How many lock nodes the ensemble has under {@code path}: the holder and the queue behind it. */
    private static int children(CuratorFramework client, String path) {
        try {
            return client.checkExists().forPath(path) == null
                    ? 0
                    : client.getChildren().forPath(path).size();
        } catch (Exception e) {
            throw new IllegalStateException("cannot list " + path + ": " + e, e);
        }
    }

    /** How many keys the cluster has under {@code prefix}: the holder and the queue behind it. */
    private static int keys(Client client, ByteSequence prefix) {
        try {
            return (int) get(
                            client.getKVClient()
                                    .get(
                                            prefix,
                                            GetOption.builder()
                                                    .isPrefix(true)
                                                    .withCountOnly(true)
                                                    .build()),
                            REQUEST_TIMEOUT)
                    .getCount();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    // ---- ZooKeeper ---------------------------------------------------------------------------------

    /** quorumlock's {@code ZooKeeperLock}, with its defaults, on a Curator client of its own. */
    private static HandOff.Client zooKeeperLock(String connect) {
        ZooKeeperLock lock = ZooKeeperLock.builder().connectString(connect).build();
        return HandOff.quorumlock(lock);
    }

    /** A server of {@code cluster} other than {@code leader}. */
    private static InstanceSpec follower(TestingCluster cluster, InstanceSpec leader) {
        return cluster.getInstances().stream()
                .filter(spec -> !spec.equals(leader))
                .findFirst()
                .orElse(leader);
    }

    /** A started Curator client with the exponential backoff retry of Curator's examples, once connected. */
    static CuratorFramework connectedCurator(String connect) {
        CuratorFramework client = CuratorFrameworkFactory.newClient(connect, new ExponentialBackoffRetry(1000, 3));
        client.start();
        try {
            if (!client.blockUntilConnected((int) REQUEST_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                throw new IllegalStateException(
                        "Curator did not connect to " + connect + " within " + REQUEST_TIMEOUT.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            client.close();
            throw new IllegalStateException("interrupted while Curator connected", e);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        return client;
    }

    /**
     * Curator's {@code InterProcessMutex} as its documentation sets it up: a started {@code
     * CuratorFramework} with the exponential backoff retry of its examples, and one mutex per
     * resource (under {@value #CURATOR_PATH}), made on first use and reused.
     */
    private static HandOff.Client curator(String connect) {
        CuratorFramework client = connectedCurator(connect);
        Map<String, InterProcessMutex> mutexes = new ConcurrentHashMap<>();
        return new HandOff.Client() {
            private InterProcessMutex held;

            private InterProcessMutex mutex(String resource) {
                return mutexes.computeIfAbsent(resource, r -> new InterProcessMutex(client, CURATOR_PATH + "/" + r));
            }

            @Override
            public boolean cycle(String resource) {
                InterProcessMutex mutex = mutex(resource);
                try {
                    mutex.acquire();
                    mutex.release();
                    return true;
                } catch (Exception e) {
                    throw new IllegalStateException("InterProcessMutex: " + e, e);
                }
            }

            @Override
            public boolean tryLock(String resource) {
                InterProcessMutex mutex = mutex(resource);
                try {
                    held = mutex.acquire(0, TimeUnit.MILLISECONDS) ? mutex : null;
                } catch (Exception e) {
                    throw new IllegalStateException("InterProcessMutex: " + e, e);
                }
                return held != null;
            }

            @Override
            public boolean await(String resource, Duration maxWait) throws InterruptedException {
                InterProcessMutex mutex = mutex(resource);
                try {
                    held = mutex.acquire(maxWait.toMillis(), TimeUnit.MILLISECONDS) ? mutex : null;
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("InterProcessMutex: " + e, e);
                }
                return held != null;
            }

            @Override
            public void unlock() {
                try {
                    held.release();
                } catch (Exception e) {
                    throw new IllegalStateException("InterProcessMutex: " + e, e);
                } finally {
                    held = null;
                }
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    private static String zooKeeperVersion() {
        String full = org.apache.zookeeper.Version.getFullVersion();
        int end = full.indexOf('-');
        return end < 0 ? full : full.substring(0, end);
    }

    // ---- etcd --------------------------------------------------------------------------------------

    /** quorumlock's {@code EtcdLock}, with its defaults, on a jetcd client of its own. */
    private static HandOff.Client etcdLock(List<String> endpoints) {
        EtcdLock lock = EtcdLock.builder().endpoints(endpoints).build();
        return HandOff.quorumlock(lock);
    }

    /**
     * jetcd's {@code Lock} client as its users hold a lock: a lease granted for the TTL and kept
     * alive by the client's keep-alive stream ({@code Lease.keepAlive}), the lock taken on that
     * lease ({@code Lock.lock(name, lease)}, which etcd answers once the lock is ours); released by
     * {@code Lock.unlock(key)}, then the keep-alive closed and the lease revoked.
     */
    private static HandOff.Client jetcd(List<String> endpoints) {
        Client client =
                Client.builder().endpoints(endpoints.toArray(String[]::new)).build();
        return new HandOff.Client() {
            private long leaseId;
            private CloseableClient keepAlive;
            private ByteSequence key;

            @Override
            public boolean tryLock(String resource) {
                try {
                    return lock(resource, REQUEST_TIMEOUT);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                }
            }

            @Override
            public boolean await(String resource, Duration maxWait) throws InterruptedException {
                return lock(resource, maxWait);
            }

            private boolean lock(String resource, Duration wait) throws InterruptedException {
                leaseId = get(client.getLeaseClient().grant(TTL_SECONDS), REQUEST_TIMEOUT)
                        .getID();
                keepAlive = client.getLeaseClient().keepAlive(leaseId, new NoOpObserver());
                Future<io.etcd.jetcd.lock.LockResponse> locking = client.getLockClient()
                        .lock(ByteSequence.from(JETCD_PREFIX + resource, StandardCharsets.UTF_8), leaseId);
                try {
                    key = locking.get(wait.toNanos(), TimeUnit.NANOSECONDS).getKey();
                    return true;
                } catch (TimeoutException e) {
                    locking.cancel(false);
                    endLease();
                    return false;
                } catch (ExecutionException e) {
                    endLease();
                    throw new IllegalStateException("jetcd lock: " + e.getCause(), e.getCause());
                }
            }

            @Override
            public void unlock() {
                try {
                    get(client.getLockClient().unlock(key), REQUEST_TIMEOUT);
                    key = null;
                    endLease();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                }
            }

            private void endLease() throws InterruptedException {
                keepAlive.close();
                keepAlive = null;
                get(client.getLeaseClient().revoke(leaseId), REQUEST_TIMEOUT);
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    private static <T> T get(Future<T> future, Duration timeout) throws InterruptedException {
        try {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            future.cancel(false);
            throw new IllegalStateException("jetcd: no answer within " + timeout.toSeconds() + " s");
        } catch (ExecutionException e) {
            throw new IllegalStateException("jetcd: " + e.getCause(), e.getCause());
        }
    }

    /** The keep-alive's observer: the lease's renewals need no handling here. */
    private static final class NoOpObserver implements StreamObserver<LeaseKeepAliveResponse> {
        @Override
        public void onNext(LeaseKeepAliveResponse value) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
    }

    /** The settings of the ZooKeeper and etcd cases, for the results file. */
    static Map<String, Object> settings() {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put(
                "zookeeper",
                SERVERS + " servers (curator-test TestingCluster in the bench's JVM, tick "
                        + ZooKeeperServers.TICK_MILLIS + " ms)");
        settings.put("etcd", SERVERS + " members (etcd processes on 127.0.0.1)");
        settings.put("hand_off", HandOff.settingsText());
        return settings;
    }

    static String firstLine(Exception e) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind is not worth failing the run
        }
    }
}
