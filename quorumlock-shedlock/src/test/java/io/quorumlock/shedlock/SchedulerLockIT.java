package io.quorumlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.quorumlock.Lease;
import io.quorumlock.redis.Redlock;
import io.quorumlock.testkit.RedisServersExtension;
import io.quorumlock.testkit.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Two Spring application contexts, as two instances of one service, each with the same
 * {@code @Scheduled @SchedulerLock} job over the same three redis-server nodes: the job runs once
 * per tick between them, never twice at once, and each run starts at least lockAtLeastFor after
 * the one before; when one stops, the other goes on.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SchedulerLockIT {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(SchedulerLockIT.class);

    @RegisterExtension
    static final RedisServersExtension redis = RedisServersExtension.nodes(3);

    static final long TICK_MILLIS = 500;
    static final long AT_LEAST_MILLIS = 400;
    static final long WORK_MILLIS = 100;

    /**
     * One run of the job: which context ran it, when its lock was asked for, from when to when it
     * ran (monotonic clock).
     */
    record Run(String context, long lockCalled, long start, long end, boolean locked, String lease) {}

    /** When the provider was last asked for a lock on this thread: lockAtLeastFor counts from there. */
    private static final ThreadLocal<Long> LOCK_CALLED = new ThreadLocal<>();

    /** The provider, noting when each lock is asked for. */
    record NotingProvider(QuorumlockLockProvider provider) implements LockProvider, AutoCloseable {
        @Override
        public java.util.Optional<net.javacrumbs.shedlock.core.SimpleLock> lock(
                net.javacrumbs.shedlock.core.LockConfiguration configuration) {
            LOCK_CALLED.set(System.nanoTime());
            return provider.lock(configuration);
        }

        @Override
        public void close() {
            provider.close();
        }
    }

    /** What both contexts share: the nodes and the record of the runs. */
    record Shared(List<String> nodes, List<Run> runs) {}

    @Configuration
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
    static class Service {

        @Bean(destroyMethod = "close")
        Redlock redlock(Shared shared) {
            // Nodes started for this class: the restart guard would keep them out for the TTL.
            return Redlock.builder().nodes(shared.nodes()).restartGuard(false).build();
        }

        @Bean
        LockProvider lockProvider(Redlock redlock) {
            return new NotingProvider(new QuorumlockLockProvider(redlock));
        }

        @Bean
        Job job(Shared shared, org.springframework.context.ApplicationContext context) {
            return new Job(shared.runs(), context.getId());
        }
    }

    static class Job {
        private final List<Run> runs;
        private final String context;

        Job(List<Run> runs, String context) {
            this.runs = runs;
            this.context = context;
        }

        @Scheduled(fixedRate = TICK_MILLIS)
        @SchedulerLock(name = "job", lockAtMostFor = "PT5S", lockAtLeastFor = "PT0.4S")
        public void run() throws InterruptedException {
            long start = System.nanoTime();
            boolean locked;
            try {
                LockAssert.assertLocked();
                locked = true;
            } catch (IllegalStateException notLocked) {
                locked = false;
            }
            String lease = QuorumlockLockProvider.currentLease()
                    .filter(Lease::isValid)
                    .map(Lease::resource)
                    .orElse("none");
            Thread.sleep(WORK_MILLIS); // the work
            runs.add(new Run(context, LOCK_CALLED.get(), start, System.nanoTime(), locked, lease));
        }
    }

    private static AnnotationConfigApplicationContext service(String id, Shared shared) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.setId(id);
        context.registerBean(Shared.class, () -> shared);
        context.register(Service.class);
        context.refresh();
        return context;
    }

    private static void awaitElapsed(long since, Duration duration, String what) {
        TestTime.await(duration.plusSeconds(10), () -> System.nanoTime() - since >= duration.toNanos(), what);
    }

    @Test
    void twoServicesRunTheJobOncePerTickAndNeverAtTheSameTime() {
        Shared shared = new Shared(redis.uris(), new CopyOnWriteArrayList<>());
        Duration half = Duration.ofSeconds(2);
        long start;
        long stopped;
        long end;
        try (AnnotationConfigApplicationContext two = service("two", shared)) {
            try (AnnotationConfigApplicationContext one = service("one", shared)) {
                assertThat(one.isRunning() && two.isRunning()).isTrue();
                start = System.nanoTime();
                awaitElapsed(start, half, "both services to run for " + half);
            }
            // One instance stops (its running job, if any, is interrupted): the other goes on alone.
            stopped = System.nanoTime();
            awaitElapsed(stopped, half, "the second service to run alone for " + half);
            end = System.nanoTime();
        }
        List<Run> runs = new ArrayList<>(shared.runs());
        runs.sort(Comparator.comparingLong(Run::start));

        assertThat(runs).allSatisfy(run -> {
            assertThat(run.locked()).as("LockAssert.assertLocked() in " + run).isTrue();
            assertThat(run.lease()).as("the task's own lease").isEqualTo("job");
        });
        for (int i = 1; i < runs.size(); i++) {
            Run before = runs.get(i - 1);
            Run run = runs.get(i);
            assertThat(run.start()).as("%s starts after %s ended", run, before).isGreaterThan(before.end());
            // lockAtLeastFor counts from the lock call, however long its grant took (a loaded
            // machine); the keys' expiry is whole milliseconds. A lock let go at the end of the
            // 100 ms work would let the other service in some 100 ms after a start.
            assertThat(TimeUnit.NANOSECONDS.toMillis(run.start() - before.lockCalled()))
                    .as("lockAtLeastFor from the lock call of %s to the start of %s", before, run)
                    .isGreaterThanOrEqualTo(AT_LEAST_MILLIS - 5);
        }
        long ticks = TimeUnit.NANOSECONDS.toMillis(end - start) / TICK_MILLIS;
        log.info(
                "{} runs in {} ticks: {} by one, {} by two",
                runs.size(),
                ticks,
                runs.stream().filter(r -> r.context().equals("one")).count(),
                runs.stream().filter(r -> r.context().equals("two")).count());
        assertThat(runs.stream().filter(r -> r.context().equals("two") && r.start() > stopped))
                .as("runs by the service left after the other stopped")
                .hasSizeGreaterThanOrEqualTo(2);
        assertThat((long) runs.size())
                .as("one run per tick of %d ms in %d ticks, from both services together", TICK_MILLIS, ticks)
                .isBetween(ticks - 2, ticks + 2);
    }
}
