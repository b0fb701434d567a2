package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.Lease;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.RetryPolicy;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * The threads of one client waiting for one resource take turns: the first in line polls, the
 * others send nothing, and a release in the process hands the lock to the next at once. The
 * waiters here retry only every 30 s, so a grant within the test's bound was a hand-off.
 */
class RedlockTurnsIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final RetryPolicy SLOW_POLL =
            RetryPolicy.jitteredBackoff(Duration.ofSeconds(30), Duration.ofSeconds(30));
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(10));
    /** Longer than the backoff, so that a waiter pauses rather than gives up. */
    private static final Duration LONG_WAIT = Duration.ofSeconds(90);

    private final List<Redlock> clients = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void close() {
        threads.shutdownNow();
        clients.forEach(Redlock::close);
    }

    private Redlock client(RetryPolicy retry) {
        Redlock redlock = Redlock.builder()
                .nodes(redis.uris())
                .restartGuard(false)
                .retry(retry)
                .build();
        clients.add(redlock);
        return redlock;
    }

    @Test
    void aReleaseInTheProcessHandsTheLockToItsWaiterAtOnce() throws Exception {
        Redlock lock = client(SLOW_POLL);
        Lease held = lock.acquire("r", TTL, Duration.ZERO);

        Future<Lease> waiter = threads.submit(() -> lock.acquire("r", TTL, LONG_WAIT));
        TestTime.await(Duration.ofSeconds(10), () -> lock.waiting("r") == 1, "the waiter to queue");
        held.release();

        waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).release();
    }

    @Test
    void theThreadsOfOneClientAreServedInTheOrderTheyCame() throws Exception {
        Redlock lock = client(SLOW_POLL);
        Lease held = lock.acquire("r", TTL, Duration.ZERO);

        List<Integer> served = new CopyOnWriteArrayList<>();
        List<Future<?>> waiters = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            int number = i;
            waiters.add(threads.submit(() -> {
                try (Lease lease = lock.acquire("r", TTL, LONG_WAIT)) {
                    served.add(number);
                }
                return null;
            }));
            TestTime.await(Duration.ofSeconds(10), () -> lock.waiting("r") == number, "waiter " + number + " to queue");
        }
        held.release();

        for (Future<?> waiter : waiters) {
            waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(served).containsExactly(1, 2, 3);
    }

    @Test
    void onlyTheFirstInLineOfAClientPollsTheNodes() throws Exception {
        Redlock other = client(SLOW_POLL);
        Lease held = other.acquire("r", TTL, Duration.ZERO);
        Redlock lock = client(RetryPolicy.jitteredBackoff(Duration.ofMillis(50), Duration.ofMillis(50)));
        try (Jedis node = redis.get(0).connect(Duration.ofSeconds(2))) {
            node.configResetStat();

            int waiters = 8;
            Duration wait = Duration.ofMillis(1500);
            List<Future<?>> calls = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                calls.add(threads.submit(() -> {
                    try {
                        lock.acquire("r", TTL, wait).release();
                    } catch (LockUnavailableException expected) {
                        // the other client held it throughout
                    }
                    return null;
                }));
            }
            for (Future<?> call : calls) {
                call.get(WAIT.plus(wait).toMillis(), TimeUnit.MILLISECONDS);
            }

            // One poller: about 1,500 / 50 = 30 attempts, and the 8 first ones; 8 pollers: about 240
            long sets = setCalls(node);
            assertThat(sets)
                    .as("SET commands on one node")
                    .isGreaterThanOrEqualTo(waiters)
                    .isLessThan(100);
        }
        held.release();
    }

    private static long setCalls(Jedis node) {
        for (String line : node.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_set:")) {
                for (String part : line.substring("cmdstat_set:".length()).split(",")) {
                    if (part.startsWith("calls=")) {
                        return Long.parseLong(part.substring("calls=".length()));
                    }
                }
            }
        }
        return 0;
    }
}
