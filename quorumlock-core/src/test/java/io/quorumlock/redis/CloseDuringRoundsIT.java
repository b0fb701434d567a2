package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.testkit.RedisServer;
import io.quorumlock.testkit.RedisServersExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

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

    private static int openConnections() {
        int open = 0;
        for (RedisServer node : redis.servers()) {
            open += node.connectionsNamed("quorumlock");
        }
        return open;
    }
}
