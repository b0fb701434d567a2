package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.LockUnavailableException;
import io.quorumlock.testkit.RedisServersExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * More callers than connections: callers share the connections, their requests pipelined on them,
 * so one Redlock shared by hundreds of threads refuses nobody whose lock is free and opens no more
 * than {@code maxConnectionsPerNode} connections to a node.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ManyCallersIT {

    private static final Logger log = LoggerFactory.getLogger(ManyCallersIT.class);

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(5);

    private static final Duration RUN = Duration.ofSeconds(2);
    private static final int CONNECTIONS = 4;

    /** The most connections named quorumlock that one node has open. */
    private static int connectionsPerNode() {
        int most = 0;
        for (var node : redis.servers()) {
            most = Math.max(most, node.connectionsNamed("quorumlock"));
        }
        return most;
    }

    /**
     * Grants of {@code threads} threads locking distinct resources through one client; refusals
     * with a node not sent to for want of a connection, which must never happen; other failures (a node slower than the node
     * timeout on a loaded machine), which are the nodes', not the client's; and the most connections
     * the client had open to one node at the end.
     */
    private record Run(int threads, int grants, int refusals, int slowNodes, String firstRefusal, int connections) {
        double perSecond() {
            return grants / (RUN.toNanos() / 1e9);
        }
    }

    private static Run run(int threads) throws InterruptedException {
        try (Redlock redlock = Redlock.builder()
                .nodes(redis.uris())
                .restartGuard(false)
                .maxConnectionsPerNode(CONNECTIONS)
                .build()) {
            AtomicInteger grants = new AtomicInteger();
            AtomicInteger refusals = new AtomicInteger();
            AtomicInteger slowNodes = new AtomicInteger();
            AtomicReference<String> firstRefusal = new AtomicReference<>();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            long end = System.nanoTime() + RUN.toNanos();
            for (int t = 0; t < threads; t++) {
                String resource = "many:" + t;
                Thread worker = new Thread(() -> {
                    try {
                        start.await();
                        while (System.nanoTime() < end) {
                            try {
                                redlock.acquire(resource, Duration.ofSeconds(5), Duration.ZERO)
                                        .release();
                                grants.incrementAndGet();
                            } catch (LockUnavailableException e) {
                                // a request the client did not send for a reason of its own: it must
                                // always have a connection (a node that owes a reply older than the
                                // node timeout is a slow node, on a loaded machine)
                                if (e.lastAttempt().stream()
                                        .anyMatch(o -> o.kind() == io.quorumlock.ServerAnswer.Kind.UNREACHABLE
                                                && o.detail().startsWith("not sent")
                                                && !o.detail().contains("owes a reply"))) {
                                    refusals.incrementAndGet();
                                    firstRefusal.compareAndSet(null, e.getMessage());
                                } else {
                                    slowNodes.incrementAndGet();
                                }
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                worker.start();
                workers.add(worker);
            }
            start.countDown();
            for (Thread worker : workers) {
                worker.join(TimeUnit.SECONDS.toMillis(30));
            }
            return new Run(
                    threads, grants.get(), refusals.get(), slowNodes.get(), firstRefusal.get(), connectionsPerNode());
        }
    }

    @Test
    void eightSixtyFourAndTwoHundredFiftySixThreadsShareFourConnectionsPerNodeAndAreNeverRefusedAFreeLock()
            throws Exception {
        Run eight = run(8);
        Run sixtyFour = run(64);
        Run many = run(256);
        for (Run r : List.of(eight, sixtyFour, many)) {
            log.info(
                    "{} threads, one client, 5 nodes, {} ms: {} grants ({} /s), {} not sent, {} failed on"
                            + " slow nodes, {} connections per node",
                    r.threads(),
                    RUN.toMillis(),
                    r.grants(),
                    Math.round(r.perSecond()),
                    r.refusals(),
                    r.slowNodes(),
                    r.connections());
        }
        log.info("256 threads / 8 threads: {}", String.format("%.2f", many.perSecond() / eight.perSecond()));
        assertThat(List.of(eight, sixtyFour, many))
                .allSatisfy(r -> assertThat(r.refusals())
                        .as(r.threads() + " threads: not sent, first: " + r.firstRefusal())
                        .isZero())
                .allSatisfy(r -> assertThat(r.connections())
                        .as(r.threads() + " threads: connections per node")
                        .isBetween(1, CONNECTIONS))
                .allSatisfy(r -> assertThat(r.grants())
                        .as(r.threads() + " threads: grants")
                        .isPositive());
    }

    /**
     * 16 threads of one client race for one resource: the rounds on a resource share a lane and
     * reach every node in one order, so an attempt gets every node's yes or none; a refused attempt
     * with a yes from one node and a refusal for another holder from another is a split vote, which
     * one client must not cause itself. (A refusal with yes votes and slow nodes is the nodes'.)
     */
    @Test
    void callersOfOneClientContendingForOneResourceNeverSplitItsVote() throws Exception {
        AtomicInteger splits = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger granted = new AtomicInteger();
        AtomicReference<String> firstSplit = new AtomicReference<>();
        try (Redlock redlock = Redlock.builder()
                .nodes(redis.uris())
                .restartGuard(false)
                // Slow nodes on a loaded machine cost refusals, which count for nothing here.
                .nodeTimeout(Duration.ofMillis(500))
                .build()) {
            long measureFrom = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300); // the lanes are open by then
            long end = measureFrom + RUN.toNanos();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                Thread worker = new Thread(() -> {
                    while (System.nanoTime() < end) {
                        boolean measured = System.nanoTime() > measureFrom;
                        try {
                            redlock.acquire("contended", Duration.ofSeconds(5), Duration.ZERO)
                                    .release();
                            if (measured) {
                                granted.incrementAndGet();
                            }
                        } catch (LockUnavailableException e) {
                            boolean split = e.lastAttempt().stream()
                                            .anyMatch(o -> o.kind() == io.quorumlock.ServerAnswer.Kind.GRANTED)
                                    && e.lastAttempt().stream()
                                            .anyMatch(o -> o.kind() == io.quorumlock.ServerAnswer.Kind.HELD_BY_OTHER);
                            if (measured) {
                                refused.incrementAndGet();
                                if (split && splits.getAndIncrement() == 0) {
                                    firstSplit.set(e.getMessage());
                                }
                            }
                        }
                    }
                });
                worker.start();
                workers.add(worker);
            }
            for (Thread worker : workers) {
                worker.join(TimeUnit.SECONDS.toMillis(30));
            }
        }
        log.info(
                "16 threads, one resource, {} ms: {} granted, {} refused, {} split",
                RUN.toMillis(),
                granted,
                refused,
                splits);
        assertThat(granted.get()).as("grants").isPositive();
        assertThat(refused.get()).as("refusals").isPositive();
        assertThat(splits.get())
                .as("refusals with both yes votes and votes for another holder, first: " + firstSplit.get())
                .isZero();
    }
}
