package io.quorumlock.bench;

import io.quorumlock.DistributedSemaphore;
import io.quorumlock.Lease;
import io.quorumlock.testkit.RedisServers;
import io.quorumlock.testkit.ZooKeeperServers;
import io.quorumlock.zookeeper.ZooKeeperLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.test.TestingServer;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;

/**
 * A semaphore's cycle (a permit taken while others are free, then given back), one thread, each
 * library on a client of its own, counted in turns A B, B A, ...: {@code DistributedSemaphore} on
 * one Redis node beside Redisson's {@code RSemaphore}, and on ZooKeeper beside Curator's {@code
 * InterProcessSemaphoreV2}; 3 permits each.
 */
final class Semaphores {

    private static final int PERMITS = 3;
    private static final int COUNTED_TURNS = 16;

    private Semaphores() {}

    private record Library(
            String caseId, String name, int nodes, String calls, Supplier<CountedCycles.Client> client) {}

    /** The step's label. */
    static String label() {
        return Plan.SEMAPHORE + ", " + Plan.ZK_SEMAPHORE + " / "
                + String.join(", ", Plan.QUORUMLOCK, Plan.REDISSON_SEMAPHORE, Plan.CURATOR_SEMAPHORE);
    }

    /** Runs both cases, Redis on the bench's first node, ZooKeeper on a server of its own. */
    static void run(RedisServers servers, Plan plan, Progress progress, Consumer<CaseResult> results) {
        String node = servers.uris().get(0);
        measure(
                List.of(
                        new Library(
                                Plan.SEMAPHORE,
                                Plan.QUORUMLOCK,
                                1,
                                "DistributedSemaphore.of(Redlock on one node, name, 3): tryAcquire(ttl) + release",
                                () -> quorumlock(Clients.quorumlock(List.of(node)))),
                        new Library(
                                Plan.SEMAPHORE,
                                Plan.REDISSON_SEMAPHORE,
                                1,
                                "RSemaphore, trySetPermits(3): tryAcquire() + release(); its permits have no TTL",
                                () -> redisson(Clients.redisson(node)))),
                plan,
                progress,
                results);
        Path dir = null;
        try {
            dir = Files.createTempDirectory("quorumlock-bench-semaphore-");
            try (TestingServer zookeeper = ZooKeeperServers.server(dir)) {
                String connect = zookeeper.getConnectString();
                measure(
                        List.of(
                                new Library(
                                        Plan.ZK_SEMAPHORE,
                                        Plan.QUORUMLOCK,
                                        1,
                                        "DistributedSemaphore.of(ZooKeeperLock, name, 3): tryAcquire(ttl) + release",
                                        () -> quorumlock(ZooKeeperLock.builder()
                                                .connectString(connect)
                                                .build())),
                                new Library(
                                        Plan.ZK_SEMAPHORE,
                                        Plan.CURATOR_SEMAPHORE,
                                        1,
                                        "InterProcessSemaphoreV2(client, path, 3): acquire(0, ms) + returnLease",
                                        () -> curator(connect))),
                        plan,
                        progress,
                        results);
            }
        } catch (Exception e) {
            results.accept(CaseResult.failed(Plan.ZK_SEMAPHORE, Plan.QUORUMLOCK, 1, 1, "ZooKeeper: " + e));
        } finally {
            if (dir != null) {
                ConsensusLocks.deleteTree(dir);
            }
        }
    }

    private static void measure(List<Library> libraries, Plan plan, Progress progress, Consumer<CaseResult> out) {
        List<CountedCycles> cycles = new ArrayList<>();
        String caseId = libraries.get(0).caseId();
        try {
            for (Library library : libraries) {
                progress.status(caseId + " / " + library.name() + ": connecting");
                cycles.add(new CountedCycles(
                        caseId,
                        library.name(),
                        library.nodes(),
                        library.client(),
                        Map.of("calls", library.calls(), "permits", PERMITS)));
            }
            CountedCycles.inTurns(
                    caseId, cycles, 1, plan.contentionWarmup(), plan.databaseTime(), COUNTED_TURNS, progress);
        } finally {
            cycles.forEach(CountedCycles::close);
        }
        cycles.forEach(c -> out.accept(c.result()));
    }

    private static <L extends Lease> CountedCycles.Client quorumlock(io.quorumlock.DistributedLock<L> lock) {
        DistributedSemaphore<L> semaphore = DistributedSemaphore.of(lock, "bench-semaphore", PERMITS);
        return new CountedCycles.Client() {
            @Override
            public boolean cycle() {
                Optional<L> permit = semaphore.tryAcquire(Trial.TTL);
                permit.ifPresent(Lease::release);
                return permit.isPresent();
            }

            @Override
            public void close() {
                lock.close();
            }
        };
    }

    private static CountedCycles.Client redisson(RedissonClient client) {
        RSemaphore semaphore = client.getSemaphore("bench-rsemaphore");
        semaphore.delete();
        semaphore.trySetPermits(PERMITS);
        return new CountedCycles.Client() {
            @Override
            public boolean cycle() {
                if (!semaphore.tryAcquire()) {
                    return false;
                }
                semaphore.release();
                return true;
            }

            @Override
            public void close() {
                client.shutdown();
            }
        };
    }

    private static CountedCycles.Client curator(String connect) {
        CuratorFramework client = ConsensusLocks.connectedCurator(connect);
        InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, "/bench/semaphore", PERMITS);
        return new CountedCycles.Client() {
            @Override
            public boolean cycle() {
                try {
                    org.apache.curator.framework.recipes.locks.Lease lease =
                            semaphore.acquire(0, TimeUnit.MILLISECONDS);
                    if (lease == null) {
                        return false;
                    }
                    semaphore.returnLease(lease);
                    return true;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }
}
