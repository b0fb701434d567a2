package io.quorumlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.quorumlock.Lease;
import io.quorumlock.LeaseLostException;
import io.quorumlock.LockListener;
import io.quorumlock.LockUnavailableException;
import io.quorumlock.RecordingListener;
import io.quorumlock.RecordingListener.Event;
import io.quorumlock.ServerAnswer;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What a listener of a Redlock on five real redis-server nodes hears, in order. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LockListenerIT {

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(5);

    private static final Duration TTL = TestTime.scaled(Duration.ofSeconds(1));
    private static final Duration WAIT = TestTime.scaled(Duration.ofSeconds(5));

    private static RedlockBuilder builder(LockListener listener) {
        return Redlock.builder()
                .nodes(redis.uris())
                .restartGuard(false)
                .nodeTimeout(TestTime.scaled(Duration.ofMillis(50)))
                .listener(listener);
    }

    @Test
    void aHolderHearsAcquiredExtendedAndReleasedAndAContenderHearsBusy() throws Exception {
        RecordingListener heard = new RecordingListener();
        try (Redlock lock = builder(heard).build()) {
            Lease lease = lock.acquire("report", TTL, WAIT);
            assertThat(lock.tryAcquire("report", TTL)).isEmpty();
            lock.keepAlive(lease, TTL);
            await(() -> heard.names().contains("extended report held"));
            Thread.sleep(50); // the lease is held for a while before its release
            lease.release();

            // The round ends once a quorum is certain: 3, 4 or 5 yes votes of the 5.
            assertThat(heard.names().get(0)).matches("acquired report [345]/5");
            assertThat(heard.names().get(1)).isEqualTo("busy report");
            assertThat(heard.names()).endsWith("released report");
            assertThat(heard.names().subList(2, heard.names().size() - 1))
                    .isNotEmpty()
                    .allMatch(e -> e.equals("extended report held"));
            List<Event> events = heard.events();
            assertThat(events).allMatch(e -> e.backend().equals("redis"));
            assertThat(events.get(0).duration()).isPositive().isLessThan(WAIT);
            assertThat(events.get(1).duration()).isPositive().isLessThan(WAIT);
            Event released = events.get(events.size() - 1);
            // Held across at least one extension, which comes when two thirds of the TTL are left.
            assertThat(released.duration()).isGreaterThan(TTL.dividedBy(3)).isLessThan(WAIT.multipliedBy(2));
        }
    }

    /**
     * Nodes the restart guard keeps out may hold the lock for a client that took it before they
     * restarted: the listener hears a busy lock, as the refusal says, not an unavailable one.
     */
    @Test
    void aLockTheRestartGuardKeepsOutIsHeardAsBusyAsItsRefusalSays() {
        RecordingListener heard = new RecordingListener();
        try (Redlock lock = builder(heard).restartGuard(true).build()) {
            // The nodes have been up for less than an hour: none may vote for a lease of an hour.
            LockUnavailableException refusal = catchThrowableOfType(
                    () -> lock.acquire("guarded", Duration.ofHours(1), Duration.ZERO), LockUnavailableException.class);
            // Three exclusions decide the vote of five: a node may answer after the decision.
            assertThat(refusal.lastAttempt())
                    .allMatch(o -> o.kind() == ServerAnswer.Kind.EXCLUDED || o.kind() == ServerAnswer.Kind.PENDING);
            assertThat(refusal.lastAttempt())
                    .filteredOn(o -> o.kind() == ServerAnswer.Kind.EXCLUDED)
                    .hasSizeGreaterThanOrEqualTo(3);
            assertThat(refusal.busy()).isTrue();
            assertThat(lock.tryAcquire("guarded", Duration.ofHours(1))).isEmpty();
            assertThat(heard.names()).containsExactly("busy guarded", "busy guarded");
        }
    }

    @Test
    void aLeaseWhoseExtensionsFindNoQuorumIsLostAndNotReleasedAfterwards() throws Exception {
        RecordingListener heard = new RecordingListener();
        try (Redlock lock = builder(heard).build()) {
            Lease lease = lock.acquire("frozen", TTL, WAIT);
            var lost = lock.keepAlive(lease, TTL);
            try (var majority = redis.servers().pause(0, 1, 2)) {
                LeaseLostException loss = lost.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                assertThat(loss.resource()).isEqualTo("frozen");
            }
            await(() -> heard.names().contains("lost frozen"));
            lease.release();
            assertThat(heard.names().get(0)).matches("acquired frozen [345]/5");
            assertThat(heard.names()).contains("extended frozen not held").endsWith("lost frozen");
        }
    }

    @Test
    void aListenerThatThrowsOnEveryEventBreaksNeitherAcquireNorRelease() {
        AtomicInteger calls = new AtomicInteger();
        LockListener throwing = new LockListener() {
            @Override
            public void acquired(String backend, String resource, Duration took, int votes, int nodes) {
                calls.incrementAndGet();
                throw new IllegalStateException("a listener bug");
            }

            @Override
            public void busy(String backend, String resource, Duration took) {
                calls.incrementAndGet();
                throw new IllegalStateException("a listener bug");
            }

            @Override
            public void released(String backend, String resource, Duration held) {
                calls.incrementAndGet();
                throw new IllegalStateException("a listener bug");
            }
        };
        try (Redlock lock = builder(throwing).build()) {
            for (int i = 0; i < 3; i++) {
                Lease lease = lock.acquire("thrown", TTL, WAIT);
                assertThat(lease.isValid()).isTrue();
                assertThat(lock.tryAcquire("thrown", TTL)).isEmpty();
                lease.release();
            }
            Lease again = lock.tryAcquire("thrown", TTL).orElseThrow();
            again.release();
            assertThat(calls).hasValue(3 * 3 + 2);
        }
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited for a condition").isLessThan(deadline);
            Thread.sleep(5);
        }
    }
}
