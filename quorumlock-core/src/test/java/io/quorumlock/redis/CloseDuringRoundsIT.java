package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.Lease;
import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * A Redlock closed while many callers are in rounds on its shared connections: every caller comes
 * out at once (with its outcome or an IllegalStateException), and no connection to a node is left
 * open behind the closed lock.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CloseDuringRoundsIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final int THREADS = 8;
    private static final int CLOSES = 25;

    @Test
    void closingWhileCallersAreInRoundsEndsEveryCallAndLeavesNoConnectionOpen() throws Exception {
        AtomicInteger unexpected = new AtomicInteger();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        for (int run = 0; run < CLOSES; run++) {
            Redlock redlock = Redlock.builder()
                    .nodes(redis.uris())
                    .restartGuard(false)
                    .maxConnectionsPerNode(2)
                    .build();
            CountDownLatch going = new CountDownLatch(THREADS);
            List<Thread> callers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                String resource = "close:" + t;
                Thread caller = new Thread(() -> {
                    going.countDown();
                    try {
                        while (true) {
                            redlock.tryAcquire(resource, Duration.ofSeconds(10)).ifPresent(lease -> lease.release());
                        }
                    } catch (IllegalStateException e) {
                        // closed: the expected end
                    } catch (RuntimeException e) {
                        unexpected.incrementAndGet();
                        failures.add(e.toString());
                    }
                });
                caller.start();
                callers.add(caller);
            }
            going.await();
            Thread.sleep(30 + 7 * run % 50);
            redlock.close();
            for (Thread caller : callers) {
                caller.join(TimeUnit.SECONDS.toMillis(5));
                assertThat(caller.isAlive())
                        .as("a caller still in a round 5 s after close()")
                        .isFalse();
            }
        }
        assertThat(failures)
                .as("what callers got other than IllegalStateException")
                .isEmpty();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        int open;
        while ((open = openConnections()) > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(open)
                .as("connections still open to the nodes after " + CLOSES + " closed Redlocks")
                .isZero();
    }

    /**
     * A release begun before {@code close()} (here held up behind an extension round on nodes that
     * do not answer yet) still goes out: close waits for it, so the key does not stay for its TTL.
     */
    @Test
    void aReleaseBegunBeforeCloseStillFreesTheKey() throws Exception {
        Redlock redlock = Redlock.builder()
                .nodes(redis.uris())
                .restartGuard(false)
                .nodeTimeout(TestTime.scaled(Duration.ofSeconds(2)))
                .build();
        String resource = "close:released";
        Lease lease = redlock.acquire(resource, Duration.ofSeconds(30), Duration.ZERO);
        ExecutorService threads = Executors.newFixedThreadPool(3);
        try {
            redis.servers().forEach(RedisServer::pause);
            Future<Boolean> extension = threads.submit(() -> lease.extend(Duration.ofSeconds(30)));
            Thread.sleep(50); // the extension's round goes out first; the release waits behind it
            Future<?> release = threads.submit(lease::release);
            TestTime.await(Duration.ofSeconds(5), () -> !lease.isValid(), "the release to begin");
            Future<?> close = threads.submit(redlock::close);
            Thread.sleep(100);
            redis.servers().forEach(RedisServer::resume);
            close.get(30, TimeUnit.SECONDS);
            release.get(30, TimeUnit.SECONDS); // no IllegalStateException: it began before close
            extension.get(30, TimeUnit.SECONDS);
            for (RedisServer node : redis.servers()) {
                try (Jedis jedis = node.connect(Duration.ofSeconds(2))) {
                    assertThat(jedis.exists(resource)).as("the key on %s", node).isFalse();
                }
            }
        } finally {
            redis.servers().forEach(node -> {
                if (node.isPaused()) {
                    node.resume();
                }
            });
            threads.shutdownNow();
            redlock.close();
        }
    }

    private static int openConnections() {
        int open = 0;
        for (RedisServer node : redis.servers()) {
            open += node.connectionsNamed("quorumlock");
        }
        return open;
    }
}
